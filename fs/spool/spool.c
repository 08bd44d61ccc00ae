// SPDX-License-Identifier: BSD-3-Clause
/*
 * spool.c -- a peer's messages: queued, posted, finished (see spool.h)
 *
 * The data path in one place: spool_submit() queues a message and posts
 * what the connection and the window allow (from the pool buffer the
 * kernel wrote the request into); on_completions() takes the completions
 * the link reaped, in order, and finishes each message. The connection's
 * life is the link's (link.c); this file hears of it through link_ops.
 * Lock order: sp->lock, then the link's, the pool's, the loop's. No FUSE
 * reply is sent with sp->lock held: they are collected (msg.h) and sent
 * after the unlock.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>

#include "ack.h"
#include "confirm.h"
#include "msg.h"
#include "post.h"
#include "spool.h"
#include "spool_locked.h"
#include "link/link.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/loop.h"
#include "runtime/pool.h"

/* how long unsignaled sends may stay unconfirmed before a fence is posted */
#define FENCE_DELAY_MS 2
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

/* ---- errors and attributes ---- */

static void set_error(struct spool *sp, const char *text)
{
	snprintf(sp->st.last_error, sizeof(sp->st.last_error), "%.*s",
		(int)sizeof(sp->st.last_error) - 1, text);
	sp->st.error_recorded = true;
}

/* invalidate the kernel's cached attributes if it has any (see getattr) */
static void attrs_changed(struct spool *sp)
{
	if (atomic_exchange(&sp->attr_cached, false) && sp->env->se)
		fuse_lowlevel_notify_inval_inode(sp->env->se, sp->ino, -1, 0);
}

/* ---- handles ---- */

static void handle_put_locked(struct handle *fh)
{
	if (--fh->refs == 0) {
		free(fh->text);
		free(fh);
	}
}

/* answer the fsyncs waiting on fh once its messages are all finished */
static void fsync_check_locked(struct handle *fh, struct replies *rs)
{
	struct reply *w;

	if (fh->in_flight)
		return;
	while ((w = fh->fsyncs)) {
		fh->fsyncs = w->next;
		fh->sp->fsync_waiting--;
		w->err = fh->error;
		fh->error = 0;
		replies_add(rs, w);
	}
}

/* ---- finishing a message: the one place ---- */

enum msg_end {
	END_CONFIRMED, /* posted, completed with IBV_WC_SUCCESS */
	END_FAILED,    /* posted, completed with an error (or could not be posted) */
	END_REFUSED,   /* never posted: the write fails with an errno */
};

static void arm_fence_locked(struct spool *sp)
{
	if (!sp->fence_at_ms) {
		sp->fence_at_ms = now_ms() + FENCE_DELAY_MS;
		loop_arm(sp->env->loop, sp->fence_at_ms);
	}
}

/*
 * finish_locked -- count msg as it ended, free its buffer, drop its handle
 * and collect the reply it still owes. code: the completion status
 * (END_CONFIRMED, END_FAILED) or the errno (END_REFUSED); why: for the
 * status' last_error (END_REFUSED, or END_FAILED without a completion).
 */
static void finish_locked(struct spool *sp, struct msg *msg, enum msg_end end, int code,
	const char *why, struct replies *rs)
{
	if (end == END_REFUSED) {
		sp->st.refused++;
		set_error(sp, why);
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
				set_error(sp, why);
			} else if (code != IBV_WC_WR_FLUSH_ERR || sp->st.last_wc_status < 0 ||
				!sp->error_since_up) {
				/* keep the cause, not the flushes that follow it */
				sp->st.last_wc_status = code;
				set_error(sp, ibv_wc_status_str(code));
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

	if (msg->slot != POOL_NO_SLOT)
		pool_put(sp->env->pool, msg->slot);
	if (msg->fh) {
		msg->fh->in_flight--;
		fsync_check_locked(msg->fh, rs);
		handle_put_locked(msg->fh);
	}
	msg_unhold(msg);
}

/* ---- the connection, as the spool sees it ---- */

/* the link is not up any more: writes waiting for it wait at most send_timeout_ms */
static void lost_locked(struct spool *sp, const char *reason)
{
	uint64_t deadline;

	if (!sp->up)
		return;
	sp->up = false;
	if (!sp->error_since_up || !sp->st.error_recorded)
		set_error(sp, reason);
	deadline = now_ms() + sp->cfg->send_timeout_ms;
	for (struct msg *msg = sp->pending.head; msg; msg = msg->next)
		if (!msg->deadline_ms)
			msg->deadline_ms = deadline;
	if (sp->pending.head)
		loop_arm(sp->env->loop, deadline);
}

/* the spool saw the link fail: tell the link, which drains it */
void spool_drop_locked(struct spool *sp, const char *reason)
{
	if (!sp->up)
		return;
	lost_locked(sp, reason);
	link_drop(sp->link, reason, sp->in_flight.count);
}

/* the connection is gone: whatever the flush did not report is failed now */
static void flush_in_flight_locked(struct spool *sp, struct replies *rs)
{
	struct msg *msg;

	while ((msg = msgq_pop(&sp->in_flight)))
		finish_locked(sp, msg, END_FAILED, IBV_WC_WR_FLUSH_ERR, NULL, rs);
	/* completed, but the receiver never said it wrote them out */
	while ((msg = confirm_take_any(&sp->cf)))
		finish_locked(sp, msg, END_FAILED, IBV_WC_WR_FLUSH_ERR, NULL, rs);
	confirm_down(&sp->cf);
	sp->fence_in_flight = false;
	sp->unsignaled = 0;
	sp->fence_at_ms = 0;
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
void spool_refuse_locked(struct spool *sp, struct msg *msg, int err, const char *why,
	struct replies *rs)
{
	if (msg->resend) {
		count_posted_locked(sp, msg);
		sp->st.resent--; /* not sent again after all */
	}
	finish_locked(sp, msg, msg->numbered ? END_FAILED : END_REFUSED, err, why, rs);
}

/* not sent for want of a connection: the link says why (docs/design.md §4.2) */
void spool_refuse_unsent_locked(struct spool *sp, struct msg *msg, bool waited, const char *what,
	struct replies *rs)
{
	char why[256];

	spool_refuse_locked(sp, msg, link_unsent(sp->link, waited, what, why, sizeof(why)), why, rs);
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
		finish_locked(sp, msg, END_FAILED, IBV_WC_GENERAL_ERR, why, rs);
	}
	spool_drop_locked(sp, why);
}

/* msg reached the send queue with imm: in flight (sp->unsignaled was counted in post_build) */
static void posted_locked(struct spool *sp, struct msg *msg, uint32_t imm, struct replies *rs)
{
	/* a deadline of seconds: a tick early does not matter */
	msg->posted_ms = now_ms_coarse();
	msg->deadline_ms = 0;
	msgq_push(&sp->in_flight, msg);
	/*
	 * Cheap: the timer only moves when this is earlier than what is set.
	 * With receiver confirmation the tick also watches for the
	 * acknowledgement (confirm_watch), a quarter of the silence after the post.
	 */
	loop_arm(sp->env->loop, msg->posted_ms + LINK_SILENCE_MS(sp->cfg->send_timeout_ms) /
					     (sp->cf.on ? 4 : 1));
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
 * the workers need to read requests. Writes then return once posted, and
 * posts ask for prompt acknowledgements, so that buffers come back.
 */
static bool at_reserve(const struct spool_env *env, unsigned free_buffers)
{
	return free_buffers <= env->nworkers;
}

/*
 * Post what is pending, up to the window and the credits, as chains (one
 * ibv_post_send each, post.h, docs/design.md §8.4). A message larger than
 * the receiver accepts ends a chain and is refused at the head.
 */
static void post_ready_locked(struct spool *sp, struct replies *rs)
{
	while (sp->pending.head && sp->up && confirm_may_post(&sp->cf, sp->pending.head) &&
		sp->in_flight.count - sp->fence_in_flight < sp->window) {
		struct link_send sends[LINK_BATCH_MAX];
		unsigned room = sp->window - (sp->in_flight.count - sp->fence_in_flight);
		unsigned free_buffers = pool_free_count(sp->env->pool);
		/* someone waits: a sync write, an fsync or close, a writer short of buffers */
		struct post_policy pp = {.window = sp->window, .max_message = sp->st.max_message,
			.always = sp->cfg->completion == RPMAFS_COMPLETION_ALWAYS,
			.free_buffers = free_buffers, .nworkers = sp->env->nworkers,
			.prompt = sp->fsync_waiting || at_reserve(sp->env, free_buffers),
			.cf = &sp->cf, .unsignaled = &sp->unsignaled};
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
	fence = calloc(1, sizeof(*fence));
	if (!fence)
		return; /* the next signaled send or fence attempt confirms them */
	fence->kind = MSG_FENCE;
	fence->slot = POOL_NO_SLOT;
	fence->seq = sp->next_seq++;
	fence->signaled = true;
	atomic_init(&fence->holds, 1);
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
	finish_locked(sp, msg, END_CONFIRMED, IBV_WC_SUCCESS, NULL, rs);
}

void spool_submit(struct spool *sp, struct msg *msg)
{
	struct replies rs = REPLIES_INIT(rs);
	uint64_t deadline = 0;

	atomic_init(&msg->holds, 1);
	pthread_mutex_lock(&sp->lock);
	if (msg->fh) {
		msg->fh->in_flight++;
		msg->fh->refs++;
	}
	if (!sp->link) {
		null_complete(sp, msg, &rs);
		pthread_mutex_unlock(&sp->lock);
		replies_send(&rs);
		attrs_changed(sp);
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
	if (sp->up && msg->req && !msg->sync &&
		!at_reserve(sp->env, pool_free_count(sp->env->pool)))
		reply_msg(&rs, msg, true, 0);
	pthread_mutex_unlock(&sp->lock);
	/* the worker posts after its reply: what others queue meanwhile joins the chain (§8.4) */
	replies_send(&rs);
	loop_arm(sp->env->loop, deadline);
	pthread_mutex_lock(&sp->lock);
	post_ready_locked(sp, &rs);
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
}

/* ---- what the link reports (loop thread) ---- */

static void on_up(void *ctx, uint32_t peer_max, unsigned credits)
{
	struct spool *sp = ctx;
	struct replies rs = REPLIES_INIT(rs);
	uint32_t max = sp->cfg->max_message;

	pthread_mutex_lock(&sp->lock);
	if (peer_max && peer_max < max)
		max = peer_max;
	if (max > FUSE_ATOMIC_WRITE_MAX && sp->cfg->framing == RPMAFS_FRAMING_WRITE)
		max = FUSE_ATOMIC_WRITE_MAX;
	sp->st.max_message = max;
	sp->window = LINK_WINDOW(pool_nslots(sp->env->pool));
	if (credits && credits < sp->window)
		sp->window = credits;
	confirm_up(&sp->cf, link_acks(sp->link), credits);
	sp->st.confirm_receiver = sp->cf.on;
	sp->st.ever_up = true;
	if (sp->ever_up)
		sp->st.reconnects++;
	sp->ever_up = true;
	sp->error_since_up = false;
	sp->gave_up = false;
	sp->up = true;
	log_notice("%s: connected to %s:%u (max message %u, window %u)", sp->cfg->name,
		sp->cfg->address, sp->cfg->port, max, sp->window);
	post_ready_locked(sp, &rs);
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	attrs_changed(sp);
}

/* is a before b, in wr_id order (wrap-safe) */
static bool seq_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

/* a send completed: confirmed now, or (receiver confirmation) parked until acknowledged */
static void complete_locked(struct spool *sp, struct msg *msg, struct replies *rs)
{
	if (!confirm_park(&sp->cf, msg, &sp->st))
		finish_locked(sp, msg, END_CONFIRMED, IBV_WC_SUCCESS, NULL, rs);
}

/* the receiver wrote out every message up to ack->acked (NULL: an ack was refused) */
static void on_ack(void *ctx, const struct rpmafs_ack *ack, unsigned unanswered)
{
	struct spool *sp = ctx;
	struct replies rs = REPLIES_INIT(rs);
	struct msg *msg;

	pthread_mutex_lock(&sp->lock);
	sp->st.bad_acks += !ack;
	if (ack) {
		confirm_ack(&sp->cf, ack, unanswered);
		while ((msg = confirm_take(&sp->cf)))
			finish_locked(sp, msg, END_CONFIRMED, IBV_WC_SUCCESS, NULL, &rs);
		post_ready_locked(sp, &rs);
	}
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	attrs_changed(sp);
}

static unsigned on_completions(void *ctx, const struct ibv_wc *wc, int n)
{
	struct spool *sp = ctx;
	struct replies rs = REPLIES_INIT(rs);
	unsigned left;

	pthread_mutex_lock(&sp->lock);
	for (int i = 0; i < n; i++) {
		uint64_t seq = wc[i].wr_id;

		/*
		 * Sends on one QP complete in order: every message posted before
		 * this one and still listed went through unsignaled, successfully
		 * (a failed one would have made its own completion).
		 */
		while (sp->in_flight.head && !seq_before(seq, sp->in_flight.head->seq)) {
			struct msg *msg = msgq_pop(&sp->in_flight);

			if (msg->seq == seq) {
				if (wc[i].status == IBV_WC_SUCCESS)
					complete_locked(sp, msg, &rs);
				else if (!confirm_retry(&sp->cf, msg, wc[i].status, &sp->st))
					finish_locked(sp, msg, END_FAILED, wc[i].status, NULL, &rs);
				break;
			}
			complete_locked(sp, msg, &rs);
		}
		if (wc[i].status != IBV_WC_SUCCESS && sp->up) {
			log_err("%s: send failed: %s", sp->cfg->name,
				ibv_wc_status_str(wc[i].status));
			spool_drop_locked(sp, ibv_wc_status_str(wc[i].status));
		}
	}
	post_ready_locked(sp, &rs);
	left = sp->in_flight.count;
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	attrs_changed(sp);
	return left;
}

static unsigned on_down(void *ctx, enum link_down why, const char *reason)
{
	struct spool *sp = ctx;
	struct replies rs = REPLIES_INIT(rs);
	unsigned left;

	pthread_mutex_lock(&sp->lock);
	switch (why) {
	case LINK_LOST:
		lost_locked(sp, reason);
		break;
	case LINK_DRAINED:
		/* receiver confirmation: what was not acknowledged goes again, first (§8.6) */
		confirm_requeue(&sp->cf, &sp->in_flight, &sp->pending,
			now_ms() + sp->cfg->send_timeout_ms, &sp->st);
		if (sp->pending.head)
			loop_arm(sp->env->loop, sp->pending.head->deadline_ms);
		flush_in_flight_locked(sp, &rs);
		break;
	case LINK_ATTEMPT_FAILED:
		set_error(sp, reason);
		break;
	}
	left = sp->in_flight.count;
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	attrs_changed(sp);
	return left;
}

static const struct link_ops spool_link_ops = {
	.on_up = on_up,
	.on_completions = on_completions,
	.on_down = on_down,
	.on_ack = on_ack,
};

/* ---- set-up, timers, files ---- */

int spool_init(struct spool *sp, const struct spool_env *env, fuse_ino_t ino,
	const struct rpmafs_peer_cfg *cfg)
{
	memset(sp, 0, sizeof(*sp));
	sp->cfg = cfg;
	sp->env = env;
	sp->ino = ino;
	pthread_mutex_init(&sp->lock, NULL);
	/* file messages are assembled in a pool slot: no FUSE request limit (frame.h) */
	sp->st.max_message = cfg->max_message < FUSE_ATOMIC_WRITE_MAX ||
			cfg->framing == RPMAFS_FRAMING_FILE ?
		cfg->max_message :
		FUSE_ATOMIC_WRITE_MAX;
	sp->next_seq = 1;
	confirm_init(&sp->cf);
	sp->st.last_wc_status = -1;
	snprintf(sp->st.last_error, sizeof(sp->st.last_error), "none");
	if (cfg->type == RPMAFS_PEER_NULL) {
		sp->up = true;
		return 0;
	}
	struct link_cfg lc = {.peer = cfg, .devices = env->devices, .loop = env->loop,
		.window = LINK_WINDOW(pool_nslots(env->pool)), .ops = &spool_link_ops, .ctx = sp};
	return link_new(&lc, &sp->link);
}

void spool_fini(struct spool *sp)
{
	link_delete(&sp->link);
	pthread_mutex_destroy(&sp->lock);
}

int spool_fsync(struct spool *sp, struct handle *fh, fuse_req_t req)
{
	struct replies rs = REPLIES_INIT(rs);
	struct reply *w;
	int err;

	pthread_mutex_lock(&sp->lock);
	if (fh->in_flight == 0) {
		err = fh->error;
		fh->error = 0;
		pthread_mutex_unlock(&sp->lock);
		return fuse_reply_err(req, err);
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		pthread_mutex_unlock(&sp->lock);
		return fuse_reply_err(req, ENOMEM);
	}
	w->req = req;
	w->next = fh->fsyncs;
	fh->fsyncs = w;
	sp->fsync_waiting++; /* what is posted meanwhile asks for a prompt acknowledgement */
	/* unsignaled sends are confirmed by a fence: post it now, not later */
	spool_fence_locked(sp, &rs);
	if (sp->up && !sp->pending.head && confirm_request(&sp->cf, sp->link))
		spool_drop_locked(sp, "post failed: acknowledgement request");
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	return 0;
}

void spool_release(struct spool *sp, struct handle *fh)
{
	pthread_mutex_lock(&sp->lock);
	handle_put_locked(fh);
	pthread_mutex_unlock(&sp->lock);
}

void spool_close(struct spool *sp)
{
	struct replies rs = REPLIES_INIT(rs);
	struct msg *msg;

	pthread_mutex_lock(&sp->lock);
	while ((msg = spool_pending_pop(sp)))
		spool_refuse_locked(sp, msg, ESHUTDOWN, "unmounted", &rs);
	if (sp->link) {
		sp->up = false;
		link_close(sp->link);
		flush_in_flight_locked(sp, &rs);
	}
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
}
