// SPDX-License-Identifier: BSD-3-Clause
/*
 * send.c -- the data path: a message queued, posted and finished
 *
 * spool_submit() queues a message and posts what the connection and the
 * window allow (from the pool buffer the kernel wrote the request into);
 * spool_finish_locked() is the one place a message ends, whatever ended
 * it (its completion, events.c; a deadline, timers.c; the unmount).
 * Lock order: sp->lock, then the link's, the pool's, the loop's. No FUSE
 * reply is sent with sp->lock held: they are collected (msg.h) and sent
 * after the unlock.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <librpma.h>

#include "await.h"
#include "confirm.h"
#include "handle.h"
#include "msg.h"
#include "post.h"
#include "spool_impl.h"
#include "link/link.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/loop.h"
#include "runtime/pool.h"

/*
 * Unsignaled sends are fenced once the spool has posted nothing for
 * FENCE_DELAY_MS, and at the latest FENCE_MAX_MS after the first of them
 * (a trickle that is never quiet long still sees them confirmed):
 * while sends keep coming a signaled one comes every quarter window, which
 * confirms them without a fence (a fence is a post and a completion more).
 */
#define FENCE_DELAY_MS 2
#define FENCE_MAX_MS 20

static void pending_push(struct spool *sp, struct msg *msg)
{
	msgq_push(&sp->pending, msg);
	sp->st.pending++;
}

struct msg *spool_pending_pop(struct spool *sp)
{
	struct msg *msg = msgq_pop(&sp->pending);

	if (msg)
		sp->st.pending--;
	return msg;
}

/* ---- finishing a message: the one place ---- */

static void arm_fence_locked(struct spool *sp)
{
	if (!sp->fence_at_ms) {
		sp->fence_armed_ms = now_ms();
		sp->fence_at_ms = sp->fence_armed_ms + FENCE_DELAY_MS;
		loop_arm(sp->env->loop, sp->fence_at_ms);
	}
}

uint64_t spool_fence_due_locked(struct spool *sp, uint64_t now, struct replies *rs)
{
	uint64_t last = sp->fence_armed_ms + FENCE_MAX_MS;

	if (!sp->fence_at_ms || sp->fence_at_ms > now)
		return sp->fence_at_ms;
	/*
	 * Posts are stamped with the coarse clock (a tick of the kernel's,
	 * 4 ms on Debian's): quiet is judged on the same clock, so a post in
	 * the current tick is never taken for 2 ms of quiet.
	 */
	if (now_ms_coarse() < sp->last_post_ms + FENCE_DELAY_MS && now < last) {
		/*
		 * Not quiet yet: the next signaled send may confirm them first.
		 * Look again after twice the time waited so far (2, 4, 8, 16 ms,
		 * then the last), so a busy spool's timer fires a few times per
		 * fence, not every 2 ms.
		 */
		uint64_t again = now + (now - sp->fence_armed_ms);

		sp->fence_at_ms = again < last ? again : last;
		return sp->fence_at_ms;
	}
	sp->fence_at_ms = 0;
	spool_fence_locked(sp, rs);
	return sp->fence_at_ms;
}

void spool_finish_locked(struct spool *sp, struct msg *msg, enum msg_end end, int code,
	const char *why, struct replies *rs)
{
	if (end == END_REFUSED) {
		sp->st.refused++;
		spool_set_error_locked(sp, why);
		if (msg->req)
			reply_msg(rs, msg, false, code);
		else if (msg->fh && msg->kind == MSG_DATA)
			/* answered when queued (§4.2): the next write, fsync or close says EIO */
			msg->fh->error = EIO;
		else if (msg->fh && msg->kind == MSG_EMPTY)
			log_warn("%s: 0-byte message not sent: %s", sp->cfg->name, why);
	} else if (msg->kind == MSG_FENCE) {
		now_coarse(&sp->st.ctime);
		sp->fence_in_flight = false;
		/*
		 * Unsignaled sends posted while it was in flight are not covered
		 * by it, and their own fence was skipped (one at a time): fence
		 * them now, or they wait for the in-flight timeout and fail.
		 */
		if (sp->unsignaled)
			arm_fence_locked(sp);
	} else {
		now_coarse(&sp->st.ctime);
		if (msg->parked)
			sp->st.unacked--; /* completed before, counted then */
		else
			sp->st.in_flight--;
		sp->st.last_wr_id = msg->seq;
		if (end != END_CONFIRMED && msg->parked)
			sp->st.completed--; /* completed = acked + unacked: it was never confirmed */
		if (end == END_CONFIRMED) {
			sp->st.completed += !msg->parked;
			sp->st.acked += msg->numbered; /* acknowledged by the receiver */
			sp->st.bytes_confirmed += msg->len;
		} else {
			sp->st.failed++;
			if (why) {
				spool_set_error_locked(sp, why);
			} else if (code != IBV_WC_WR_FLUSH_ERR || sp->st.last_wc_status < 0 ||
				   !sp->error_since_up) {
				/* keep the cause, not the flushes that follow it */
				sp->st.last_wc_status = code;
				spool_set_error_locked(sp, ibv_wc_status_str(code));
			}
			sp->error_since_up = true;
		}
		if (msg->req)
			/* a sync write: its caller learns the outcome now */
			reply_msg(rs, msg, end == END_CONFIRMED, EIO);
		else if (end == END_FAILED && msg->fh)
			/* an async one: the next write, fsync or close says EIO, once */
			msg->fh->error = EIO;
	}

	/* a sync writer's worker polling for it learns it ended (await.h) */
	await_ended_locked(sp, msg);
	/* its payload, ciphertext or not, is read no more: the slot goes back */
	link_sealed_forget(&msg->sealed);
	if (msg->slot != POOL_NO_SLOT)
		pool_put(sp->env->pool, msg->slot);
	if (msg->fh)
		handle_finished_locked(msg->fh, rs);
	msg_unhold(msg);
}

/* ---- posting ---- */

static void count_posted_locked(struct spool *sp, struct msg *msg)
{
	sp->st.posted++;
	sp->st.resent += msg->resend;
	msg->resend = false;
	sp->st.in_flight++;
	sp->st.bytes_posted += msg->len;
	now_coarse(&sp->st.mtime);
}

/* a message sent before that waits to go again fails: counted posted and failed, EIO */
void spool_refuse_locked(
	struct spool *sp, struct msg *msg, int err, const char *why, struct replies *rs)
{
	if (msg->resend) {
		count_posted_locked(sp, msg);
		sp->st.resent--; /* not sent again after all */
	}
	spool_finish_locked(sp, msg, msg->numbered ? END_FAILED : END_REFUSED, err, why, rs);
}

/* not sent for want of a connection: the link says why (docs/design.md §4.2) */
void spool_refuse_unsent_locked(
	struct spool *sp, struct msg *msg, bool waited, const char *what, struct replies *rs)
{
	char why[256];

	spool_refuse_locked(
		sp, msg, link_unsent(sp->link, waited, what, why, sizeof(why)), why, rs);
}

/* the link refused msg (the sends before it in its chain reached the queue): drop the link */
static void post_failed_locked(struct spool *sp, struct msg *msg, int ret, struct replies *rs)
{
	char why[96];

	snprintf(why, sizeof(why), "post failed: %s", rpma_err_2str(ret));
	log_err("%s: %s", sp->cfg->name, why);
	if (msg->kind == MSG_FENCE) {
		msg_unhold(msg);
	} else {
		/* counted posted and failed: posted = completed + failed + in_flight */
		count_posted_locked(sp, msg);
		spool_finish_locked(sp, msg, END_FAILED, IBV_WC_GENERAL_ERR, why, rs);
	}
	spool_drop_locked(sp, why);
}

/* msg reached the send queue with imm: in flight (sp->unsignaled was counted in post_build) */
static void posted_locked(struct spool *sp, struct msg *msg, uint32_t imm, struct replies *rs)
{
	/* a deadline of seconds: a tick early does not matter */
	msg->posted_ms = now_ms_coarse();
	msg->deadline_ms = 0;
	if (msg->kind != MSG_FENCE)
		sp->last_post_ms = msg->posted_ms;
	msgq_push(&sp->in_flight, msg);
	/*
	 * Cheap: the timer only moves when this is earlier than what is set.
	 * With receiver confirmation the tick also watches for the
	 * acknowledgement (confirm_watch), a quarter of the silence after the post.
	 */
	loop_arm(sp->env->loop,
		msg->posted_ms + LINK_SILENCE_MS(sp->cfg->send_timeout_ms) / (sp->cf.on ? 4 : 1));
	if (msg->kind == MSG_FENCE) {
		sp->fence_in_flight = true;
		return;
	}
	confirm_posted(&sp->cf, msg, imm);
	count_posted_locked(sp, msg);
	if (!msg->signaled)
		arm_fence_locked(sp);
	if (msg->req && !msg->sync)
		/* queued while not connected or at the pool's reserve: it returns now (§4.2) */
		reply_msg(rs, msg, true, 0);
}

/*
 * The pool's reserve (docs/design.md §4.2, §13): no more buffers free than
 * the workers need to read requests, and some held by messages. Writes
 * then return once posted, and posts ask for prompt acknowledgements, so
 * that buffers come back. (A pool of fewer slots than workers, an ordinary
 * user's, is not at its reserve while no message holds a buffer.)
 */
static bool at_reserve(const struct spool_env *env, unsigned free_buffers)
{
	unsigned spare = pool_nslots(env->pool) - env->nworkers;

	return free_buffers <= env->nworkers && free_buffers < spare;
}

/*
 * The small slots' reserve, the same for messages in small slots: when
 * they run out, small writes take request buffers (zero-copy) instead.
 */
static bool small_at_reserve(const struct spool_env *env, unsigned small_free)
{
	return small_free <= env->nworkers;
}

bool spool_pool_short(const struct spool *sp)
{
	struct pool *pool = sp->env->pool;

	return at_reserve(sp->env, pool_free_count(pool)) ||
	       (pool_nsmall(pool) && small_at_reserve(sp->env, pool_small_free_count(pool)));
}

/* whether msg's class of slot is at its reserve */
static bool msg_at_reserve(const struct spool_env *env, const struct msg *msg)
{
	if (msg->small)
		return small_at_reserve(env, pool_small_free_count(env->pool));
	return at_reserve(env, pool_free_count(env->pool));
}

/*
 * Post what is pending, up to the window and the credits, as chains (one
 * ibv_post_send each, post.h, docs/design.md §8.4). A message larger than
 * the receiver accepts ends a chain and is refused at the head.
 */
void spool_post_ready_locked(struct spool *sp, struct replies *rs)
{
	while (sp->pending.head && sp->up && confirm_may_post(&sp->cf, sp->pending.head) &&
		sp->in_flight.count - sp->fence_in_flight < sp->window) {
		struct link_send sends[LINK_BATCH_MAX];
		unsigned room = sp->window - (sp->in_flight.count - sp->fence_in_flight);
		unsigned free_buffers = pool_free_count(sp->env->pool);
		unsigned small_free = pool_small_free_count(sp->env->pool);
		unsigned spare = pool_nslots(sp->env->pool) - sp->env->nworkers;
		/* someone waits: a sync write, an fsync or close, a writer short of buffers */
		struct post_policy pp = {.window = sp->window,
			.max_message = sp->st.max_message,
			.always = sp->cfg->completion == RPMAFS_COMPLETION_ALWAYS,
			.big_short = free_buffers < sp->env->nworkers && free_buffers < spare,
			.small_short = small_free < sp->env->nworkers,
			.prompt = sp->fsync_waiting || at_reserve(sp->env, free_buffers),
			.small_prompt = small_at_reserve(sp->env, small_free),
			.cf = &sp->cf,
			.unsignaled = &sp->unsignaled};
		struct msg *msg = sp->pending.head;
		unsigned n, posted = 0, i;
		int ret;

		if (msg->kind == MSG_DATA && msg->len > sp->st.max_message) {
			/* the receiver that answered has a smaller limit than the config */
			spool_refuse_locked(sp, spool_pending_pop(sp), EMSGSIZE,
				"message larger than the receiver accepts", rs);
			continue;
		}
		n = post_build(msg, &pp, sends, room < LINK_BATCH_MAX ? room : LINK_BATCH_MAX);
		if (!n)
			break;
		ret = link_post_batch(sp->link, sends, n, &posted);
		sp->st.post_calls++;
		for (i = 0; i < posted; i++)
			posted_locked(sp, spool_pending_pop(sp), sends[i].imm, rs);
		if (ret) {
			post_failed_locked(sp, spool_pending_pop(sp), ret, rs);
			return;
		}
	}
}

/* confirm unsignaled sends: a 0-byte RDMA WRITE, alone, always signaled */
void spool_fence_locked(struct spool *sp, struct replies *rs)
{
	struct msg *fence;
	int ret;

	if (!sp->unsignaled || sp->fence_in_flight || !sp->up)
		return;
	if (msg_new_fence(sp->next_seq, &fence))
		return; /* the next signaled send or fence attempt confirms them */
	sp->next_seq++;
	ret = link_post(sp->link, LINK_FENCE, 0, 0, fence->seq, true);
	if (ret) {
		post_failed_locked(sp, fence, ret, rs);
		return;
	}
	sp->unsignaled = 0;
	posted_locked(sp, fence, 0, rs);
}

/* a null peer: every message completes at once, nothing is sent */
static void null_complete(struct spool *sp, struct msg *msg, struct replies *rs)
{
	msg->seq = sp->next_seq++;
	count_posted_locked(sp, msg);
	spool_finish_locked(sp, msg, END_CONFIRMED, IBV_WC_SUCCESS, NULL, rs);
}

void spool_submit(struct spool *sp, struct msg *msg)
{
	struct replies rs = REPLIES_INIT(rs);
	uint64_t deadline = 0;
	struct await w;
	bool awaited = false;

	pthread_mutex_lock(&sp->lock);
	if (msg->fh) {
		msg->fh->in_flight++;
		msg->fh->refs++;
	}
	if (!sp->link) {
		null_complete(sp, msg, &rs);
		pthread_mutex_unlock(&sp->lock);
		replies_send(&rs);
		spool_attrs_changed(sp);
		return;
	}

	msg->seq = sp->next_seq++;
	if (!sp->up) {
		if (sp->cfg->send_timeout_ms == 0 || sp->gave_up) {
			spool_refuse_unsent_locked(sp, msg, sp->gave_up, "not connected", &rs);
			pthread_mutex_unlock(&sp->lock);
			replies_send(&rs);
			return;
		}
		msg->deadline_ms = deadline = now_ms() + sp->cfg->send_timeout_ms;
	}
	pending_push(sp, msg);
	/*
	 * An async write returns once queued (§4.2), unless the pool is at its
	 * reserve: then it returns once posted (posted_locked), so that a peer
	 * that holds its messages back (credits, a full window) cannot take the
	 * buffers every other request of the mount needs to be read (§13).
	 */
	if (sp->up && msg->req && !msg->sync && !msg_at_reserve(sp->env, msg))
		reply_msg(&rs, msg, true, 0);
	/* a sync write on a connection: this worker reaps its completion (await.h) */
	if (sp->up && msg->req && msg->sync) {
		await_arm_locked(sp, msg, &w);
		awaited = true;
	}
	pthread_mutex_unlock(&sp->lock);
	/* the worker posts after its reply: what others queue meanwhile joins the chain (§8.4) */
	replies_send(&rs);
	loop_arm(sp->env->loop, deadline);
	pthread_mutex_lock(&sp->lock);
	spool_post_ready_locked(sp, &rs);
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	if (awaited)
		await_sync(sp, &w);
	/* what this worker posted: reaped here, the CQ armed only if some is still to come */
	link_settle(sp->link);
}
