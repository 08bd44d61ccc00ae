// SPDX-License-Identifier: BSD-3-Clause
/*
 * events.c -- the connection as the spool sees it: what the link reports
 * (struct link_ops, on the loop thread) and what the spool tells the link
 *
 * The connection's life is the link's (link.c); this file turns its
 * reports into the spool's: up (posts go, with the receiver's limit and
 * credits), completions and acknowledgements (messages finished, in
 * order), down (posts stop; what was in flight is failed or sent again).
 */

#include <errno.h>

#include <librpma.h>

#include "ack.h"
#include "confirm.h"
#include "spool_impl.h"
#include "link/link.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/loop.h"
#include "runtime/pool.h"

void spool_lost_locked(struct spool *sp, const char *reason)
{
	uint64_t deadline;

	if (!sp->up)
		return;
	sp->up = false;
	if (!sp->error_since_up || !sp->st.error_recorded)
		spool_set_error_locked(sp, reason);
	deadline = now_ms() + sp->cfg->send_timeout_ms;
	for (struct msg *msg = sp->pending.head; msg; msg = msg->next)
		if (!msg->deadline_ms)
			msg->deadline_ms = deadline;
	if (sp->pending.head)
		loop_arm(sp->env->loop, deadline);
}

void spool_drop_locked(struct spool *sp, const char *reason)
{
	if (!sp->up)
		return;
	spool_lost_locked(sp, reason);
	link_drop(sp->link, reason, sp->in_flight.count);
}

void spool_flush_in_flight_locked(struct spool *sp, struct replies *rs)
{
	struct msg *msg;

	while ((msg = msgq_pop(&sp->in_flight)))
		spool_finish_locked(sp, msg, END_FAILED, IBV_WC_WR_FLUSH_ERR, NULL, rs);
	/* completed, but the receiver never said it wrote them out */
	while ((msg = confirm_take_any(&sp->cf)))
		spool_finish_locked(sp, msg, END_FAILED, IBV_WC_WR_FLUSH_ERR, NULL, rs);
	confirm_down(&sp->cf);
	sp->fence_in_flight = false;
	sp->unsignaled = 0;
	sp->fence_at_ms = 0;
}

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
	/* every slot a message can hold, big or small (pool.h) */
	sp->window = LINK_WINDOW(pool_nslots(sp->env->pool) + pool_nsmall(sp->env->pool));
	if (credits && credits < sp->window)
		sp->window = credits;
	confirm_up(&sp->cf, link_acks(sp->link), credits, &sp->pending);
	sp->st.confirm_receiver = sp->cf.on;
	if (sp->st.ever_up)
		sp->st.reconnects++;
	sp->st.ever_up = true;
	sp->error_since_up = false;
	sp->gave_up = false;
	sp->up = true;
	/*
	 * What still waits (for the window or the receiver's credits) waited
	 * for this connection: the next loss gives it send_timeout_ms afresh
	 * (spool_lost_locked), not what is left of the last one's (§8.6).
	 */
	for (struct msg *msg = sp->pending.head; msg; msg = msg->next)
		msg->deadline_ms = 0;
	log_notice("%s: connected to %s:%u (max message %u, window %u)", sp->cfg->name,
		sp->cfg->address, sp->cfg->port, max, sp->window);
	spool_post_ready_locked(sp, &rs);
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	spool_attrs_changed(sp);
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
		spool_finish_locked(sp, msg, END_CONFIRMED, IBV_WC_SUCCESS, NULL, rs);
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
			spool_finish_locked(sp, msg, END_CONFIRMED, IBV_WC_SUCCESS, NULL, &rs);
		spool_post_ready_locked(sp, &rs);
	}
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	spool_attrs_changed(sp);
}

/* msg completed with an error and goes no more: say which, unless it is one of a flush */
static void failed_locked(struct spool *sp, struct msg *msg, int status, struct replies *rs)
{
	if (status != IBV_WC_WR_FLUSH_ERR)
		log_warn("%s: message %llu (%u bytes) failed: %s", sp->cfg->name,
			(unsigned long long)msg->seq, (unsigned)msg->len, ibv_wc_status_str(status));
	spool_finish_locked(sp, msg, END_FAILED, status, NULL, rs);
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
				if (wc[i].status == IBV_WC_SUCCESS || confirm_acked(&sp->cf, msg))
					complete_locked(sp, msg, &rs);
				else if (!confirm_retry(&sp->cf, msg, wc[i].status, &sp->st))
					failed_locked(sp, msg, wc[i].status, &rs);
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
	spool_post_ready_locked(sp, &rs);
	left = sp->in_flight.count;
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	spool_attrs_changed(sp);
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
		spool_lost_locked(sp, reason);
		break;
	case LINK_DRAINED:
		/* receiver confirmation: what was not acknowledged goes again, first (§8.6) */
		confirm_requeue(&sp->cf, &sp->in_flight, &sp->pending,
			now_ms() + sp->cfg->send_timeout_ms, &sp->st);
		if (sp->pending.head)
			loop_arm(sp->env->loop, sp->pending.head->deadline_ms);
		spool_flush_in_flight_locked(sp, &rs);
		break;
	case LINK_ATTEMPT_FAILED:
		spool_set_error_locked(sp, reason);
		break;
	}
	left = sp->in_flight.count;
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	spool_attrs_changed(sp);
	return left;
}

/*
 * Someone waits for an acknowledgement: a reply owed at it (a sync write,
 * a file-framed close), an fsync or a waiting close, a message held back
 * for credits, a request asked, writers short of slots; or the connection
 * is going (its flushes end what is left).
 */
static bool ack_wanted_now_locked(struct spool *sp)
{
	if (!sp->up || sp->fsync_waiting || sp->pending.head || sp->cf.unanswered ||
		spool_pool_short(sp))
		return true;
	for (const struct msg *msg = sp->cf.parked.head; msg; msg = msg->next)
		if (msg->req)
			return true;
	return false;
}

/*
 * A completion is still to come that someone waits for: the CQ is armed
 * (link_settle). Acknowledgements of async writes nobody waits for do not
 * arm it while the spool is posting: each post's settle reaps them, so a
 * streaming writer's acknowledgements wake nobody. Once the spool has
 * posted nothing for SPOOL_ACK_LOOK_MS no settle is coming: the tick looks
 * (timers.c), and arms it from then on.
 */
static bool awaits(void *ctx)
{
	struct spool *sp = ctx;
	uint64_t look = 0;
	bool now;

	pthread_mutex_lock(&sp->lock);
	if (sp->in_flight.count)
		now = true;
	else if (!confirm_awaits(&sp->cf))
		now = false;
	else if (ack_wanted_now_locked(sp) ||
		 now_ms_coarse() >= sp->last_post_ms + SPOOL_ACK_LOOK_MS)
		now = true;
	else {
		now = false;
		if (!sp->ack_look_ms)
			look = sp->ack_look_ms = sp->last_post_ms + SPOOL_ACK_LOOK_MS;
	}
	pthread_mutex_unlock(&sp->lock);
	loop_arm(sp->env->loop, look);
	return now;
}

const struct link_ops spool_link_ops = {
	.on_up = on_up,
	.on_completions = on_completions,
	.on_down = on_down,
	.on_ack = on_ack,
	.awaits = awaits,
};
