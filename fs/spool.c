// SPDX-License-Identifier: BSD-3-Clause
/*
 * spool.c -- a peer's messages: queued, posted, completed (see spool.h)
 *
 * The data path in one place: spool_submit() queues a message and posts
 * what the connection and the window allow (rpma_send from the pool buffer
 * the kernel wrote the request into); spool_completions() takes the
 * completions the engine reaped, in order, and settles each message:
 * counters, the FUSE reply it owes, its buffer back to the pool.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>

#include "clock.h"
#include "engine.h"
#include "link.h"
#include "log.h"
#include "mount.h"
#include "pool.h"
#include "spool.h"

/* how long unsignaled sends may stay unconfirmed before a fence is posted */
#define FENCE_DELAY_MS 2
/* how long flush completions may take after a connection is lost */
#define TEARDOWN_GRACE_MS 2000
/*
 * A send that has not completed after send_timeout_ms (at least this long)
 * means the peer is gone without a word: Soft-RoCE, for one, retries
 * forever with librpma's retry count of 7 when the link dies. The
 * connection is then dropped, which flushes what is in flight.
 */
#define IN_FLIGHT_TIMEOUT_MIN_MS 1000

static uint64_t in_flight_timeout(const struct spool *sp)
{
	return sp->cfg->send_timeout_ms > IN_FLIGHT_TIMEOUT_MIN_MS ? sp->cfg->send_timeout_ms :
		IN_FLIGHT_TIMEOUT_MIN_MS;
}

static void msgq_push(struct msgq *q, struct msg *msg)
{
	msg->next = NULL;
	if (q->tail)
		q->tail->next = msg;
	else
		q->head = msg;
	q->tail = msg;
	q->count++;
}

static struct msg *msgq_pop(struct msgq *q)
{
	struct msg *msg = q->head;

	if (msg) {
		q->head = msg->next;
		if (!q->head)
			q->tail = NULL;
		q->count--;
		msg->next = NULL;
	}
	return msg;
}

const char *spool_state_str(enum spool_state s)
{
	switch (s) {
	case SPOOL_CONNECTING:
		return "connecting";
	case SPOOL_CONNECTED:
		return "connected";
	case SPOOL_RECONNECTING:
		return "reconnecting";
	case SPOOL_FAILED:
		return "failed";
	}
	return "unknown";
}

static void set_error(struct spool *sp, const char *text)
{
	snprintf(sp->st.last_error, sizeof(sp->st.last_error), "%.*s",
		(int)sizeof(sp->st.last_error) - 1, text);
}

void spool_init(struct spool *sp, struct mount *m, unsigned index,
	const struct rpmafs_peer_cfg *cfg)
{
	memset(sp, 0, sizeof(*sp));
	sp->cfg = cfg;
	sp->m = m;
	sp->index = index;
	sp->ino = spool_ino(index);
	sp->status_ino = status_ino(index);
	pthread_mutex_init(&sp->lock, NULL);
	sp->max_message = cfg->max_message < FUSE_ATOMIC_WRITE_MAX ? cfg->max_message :
		FUSE_ATOMIC_WRITE_MAX;
	sp->next_seq = 1;
	sp->backoff_ms = BACKOFF_FIRST_MS;
	sp->st.last_wc_status = -1;
	set_error(sp, "none");
	if (cfg->type == RPMAFS_PEER_NULL) {
		sp->state = SPOOL_CONNECTED;
	} else {
		sp->state = SPOOL_CONNECTING;
		sp->retry_at_ms = 1; /* at once */
	}
}

void spool_fini(struct spool *sp)
{
	pthread_mutex_destroy(&sp->lock);
}

/* ---- handles ---- */

void handle_put_locked(struct handle *fh)
{
	if (--fh->refs == 0) {
		free(fh->text);
		free(fh);
	}
}

/* answer the fsyncs waiting on fh once its messages are all settled */
static void fsync_check_locked(struct handle *fh)
{
	struct fsync_wait *w;

	if (fh->in_flight)
		return;
	while ((w = fh->fsyncs)) {
		fh->fsyncs = w->next;
		if (fh->error) {
			fuse_reply_err(w->req, fh->error);
			fh->error = 0;
		} else {
			fuse_reply_err(w->req, 0);
		}
		free(w);
	}
}

/* ---- settling a message ---- */

static void release_msg(struct spool *sp, struct msg *msg)
{
	if (msg->slot != POOL_NO_SLOT)
		pool_put(sp->m->pool, msg->slot);
	if (msg->fh) {
		msg->fh->in_flight--;
		fsync_check_locked(msg->fh);
		handle_put_locked(msg->fh);
	}
	free(msg);
}

/* a message that was never posted: the write fails with err */
static void refuse_msg(struct spool *sp, struct msg *msg, int err, const char *why)
{
	sp->st.refused++;
	set_error(sp, why);
	if (msg->req)
		fuse_reply_err(msg->req, err);
	else if (msg->fh && msg->kind == MSG_EMPTY)
		log_warn("%s: 0-byte message not sent: %s", sp->cfg->name, why);
	release_msg(sp, msg);
}

/* a posted message completed, with IBV_WC_SUCCESS or an error status */
static void settle_msg(struct spool *sp, struct msg *msg, int status)
{
	now_coarse(&sp->st.ctime);
	if (msg->kind == MSG_FENCE) {
		sp->fence_in_flight = false;
		/*
		 * Unsignaled sends posted while it was in flight are not covered
		 * by it, and their own fence was skipped (one at a time): fence
		 * them now, or they wait for the in-flight timeout and fail.
		 */
		if (sp->unsignaled && !sp->fence_at_ms) {
			sp->fence_at_ms = now_ms() + FENCE_DELAY_MS;
			engine_arm(sp->m->engine, sp->fence_at_ms);
		}
	} else if (status == IBV_WC_SUCCESS) {
		sp->st.completed++;
		sp->st.bytes_confirmed += msg->len;
		sp->st.last_wr_id = msg->seq;
	} else {
		sp->st.failed++;
		sp->st.last_wr_id = msg->seq;
		/* keep the cause, not the flushes that follow it */
		if (status != IBV_WC_WR_FLUSH_ERR || sp->st.last_wc_status < 0 ||
			!sp->error_since_up) {
			sp->st.last_wc_status = status;
			set_error(sp, ibv_wc_status_str(status));
		}
		sp->error_since_up = true;
	}

	if (msg->req) {
		/* a sync write: its caller learns the outcome now */
		if (status == IBV_WC_SUCCESS)
			fuse_reply_write(msg->req, msg->write_size);
		else
			fuse_reply_err(msg->req, EIO);
		msg->req = NULL;
	} else if (status != IBV_WC_SUCCESS && msg->fh) {
		/* an async one: the next write, fsync or close says EIO, once */
		msg->fh->error = EIO;
	}
	release_msg(sp, msg);
}

/* ---- posting ---- */

static bool wants_signal(struct spool *sp, const struct msg *msg)
{
	unsigned every;

	if (msg->sync || sp->cfg->completion == RPMAFS_COMPLETION_ALWAYS)
		return true;
	/*
	 * RPMA_F_COMPLETION_ON_ERROR: most sends make no completion. One in
	 * every quarter window is signaled so that buffers come back under
	 * load; the rest are confirmed by it (RC completes in order), or by a
	 * fence once the spool goes quiet.
	 */
	every = sp->window / 4 ? sp->window / 4 : 1;
	if (sp->unsignaled + 1 >= every)
		return true;
	return pool_free_count(sp->m->pool) < sp->m->nworkers;
}

static void mark_down_locked(struct spool *sp, const char *reason);

/* post one message; false when the link refused it */
static bool post_one(struct spool *sp, struct msg *msg)
{
	int ret;

	msg->signaled = msg->kind == MSG_FENCE || wants_signal(sp, msg);
	ret = link_post(sp->link, msg);
	if (ret) {
		char why[96];

		snprintf(why, sizeof(why), "post failed: %s", rpma_err_2str(ret));
		log_err("%s: %s", sp->cfg->name, why);
		sp->st.failed++;
		set_error(sp, why);
		if (msg->req) {
			fuse_reply_err(msg->req, EIO);
			msg->req = NULL;
		}
		release_msg(sp, msg);
		mark_down_locked(sp, why);
		return false;
	}

	/* a deadline of seconds: a tick early does not matter */
	msg->posted_ms = now_ms_coarse();
	msgq_push(&sp->in_flight, msg);
	/* cheap: the timer only moves when this is earlier than what is set */
	engine_arm(sp->m->engine, msg->posted_ms + in_flight_timeout(sp));
	if (msg->kind == MSG_FENCE) {
		sp->fence_in_flight = true;
		sp->unsignaled = 0;
		return true;
	}
	sp->st.posted++;
	sp->st.bytes_posted += msg->len;
	now_coarse(&sp->st.mtime);
	if (msg->signaled) {
		sp->unsignaled = 0;
	} else {
		sp->unsignaled++;
		if (!sp->fence_at_ms) {
			sp->fence_at_ms = now_ms() + FENCE_DELAY_MS;
			engine_arm(sp->m->engine, sp->fence_at_ms);
		}
	}
	if (msg->req && !msg->sync) {
		/* an async write returns once its message is posted */
		fuse_reply_write(msg->req, msg->write_size);
		msg->req = NULL;
	}
	return true;
}

/* a null peer: every message completes at once, nothing is sent */
static void null_complete(struct spool *sp, struct msg *msg)
{
	msg->seq = sp->next_seq++;
	sp->st.posted++;
	sp->st.bytes_posted += msg->len;
	now_coarse(&sp->st.mtime);
	if (msg->req && !msg->sync) {
		fuse_reply_write(msg->req, msg->write_size);
		msg->req = NULL;
	}
	settle_msg(sp, msg, IBV_WC_SUCCESS);
}

static void post_ready_locked(struct spool *sp)
{
	while (sp->pending.head && sp->state == SPOOL_CONNECTED && sp->link && !sp->link->down &&
		sp->in_flight.count - sp->fence_in_flight < sp->window) {
		struct msg *msg = msgq_pop(&sp->pending);

		if (msg->kind == MSG_DATA && msg->len > sp->max_message) {
			/* the receiver that answered has a smaller limit than the config */
			refuse_msg(sp, msg, EMSGSIZE, "message larger than the receiver accepts");
			continue;
		}
		msg->deadline_ms = 0;
		if (!post_one(sp, msg))
			break;
	}
}

/* invalidate the kernel's cached attributes if it has any (see getattr) */
static void attrs_changed(struct spool *sp)
{
	if (atomic_exchange(&sp->attr_cached, false))
		fuse_lowlevel_notify_inval_inode(sp->m->se, sp->ino, -1, 0);
}

void spool_submit(struct spool *sp, struct msg *msg)
{
	bool arm = false;

	pthread_mutex_lock(&sp->lock);
	if (msg->fh) {
		msg->fh->in_flight++;
		msg->fh->refs++;
	}
	if (sp->cfg->type == RPMAFS_PEER_NULL) {
		null_complete(sp, msg);
		pthread_mutex_unlock(&sp->lock);
		attrs_changed(sp);
		return;
	}

	msg->seq = sp->next_seq++;
	if (sp->state != SPOOL_CONNECTED) {
		if (sp->cfg->send_timeout_ms == 0 || sp->gave_up) {
			refuse_msg(sp, msg, ENOTCONN, "not connected");
			pthread_mutex_unlock(&sp->lock);
			return;
		}
		msg->deadline_ms = now_ms() + sp->cfg->send_timeout_ms;
		arm = true;
	}
	msgq_push(&sp->pending, msg);
	post_ready_locked(sp);
	pthread_mutex_unlock(&sp->lock);
	if (arm)
		engine_arm(sp->m->engine, msg->deadline_ms);
}

/* ---- completions ---- */

/* is a before b, in wr_id order (wrap-safe) */
static bool seq_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

void spool_completions(struct spool *sp, struct link *link, const struct ibv_wc *wc, int n)
{
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
				settle_msg(sp, msg, wc[i].status);
				break;
			}
			settle_msg(sp, msg, IBV_WC_SUCCESS);
		}
		if (wc[i].status != IBV_WC_SUCCESS && link == sp->link && !link->down) {
			log_err("%s: send failed: %s", sp->cfg->name,
				ibv_wc_status_str(wc[i].status));
			mark_down_locked(sp, ibv_wc_status_str(wc[i].status));
		}
	}
	pthread_mutex_unlock(&sp->lock);
}

/* the link is down and settled: free it and schedule the next attempt */
static void bury_link_locked(struct spool *sp)
{
	struct link *link = sp->link;
	struct msg *msg;

	/* whatever the flush did not report is failed now */
	while ((msg = msgq_pop(&sp->in_flight)))
		settle_msg(sp, msg, IBV_WC_WR_FLUSH_ERR);
	sp->fence_in_flight = false;
	sp->unsignaled = 0;
	sp->fence_at_ms = 0;
	sp->link = NULL;
	sp->teardown_at_ms = 0;
	engine_bury(sp->m->engine, link);
	if (!sp->m->stopping) {
		sp->retry_at_ms = now_ms() + sp->backoff_ms;
		engine_arm(sp->m->engine, sp->retry_at_ms);
	}
}

void spool_after_completions(struct spool *sp)
{
	pthread_mutex_lock(&sp->lock);
	if (sp->link && sp->link->down && sp->in_flight.count == 0)
		bury_link_locked(sp);
	else
		post_ready_locked(sp);
	pthread_mutex_unlock(&sp->lock);
	attrs_changed(sp);
}

/* ---- the connection's life ---- */

static void mark_down_locked(struct spool *sp, const char *reason)
{
	struct link *link = sp->link;
	uint64_t deadline;

	if (!link || link->down)
		return;
	link->down = true;
	sp->state = SPOOL_RECONNECTING;
	if (!sp->error_since_up || strcmp(sp->st.last_error, "none") == 0)
		set_error(sp, reason);
	log_warn("%s: connection to %s lost: %s", sp->cfg->name, sp->cfg->address, reason);
	link_disconnect(link);

	/* writes waiting for the connection now wait at most send_timeout_ms */
	deadline = now_ms() + sp->cfg->send_timeout_ms;
	for (struct msg *msg = sp->pending.head; msg; msg = msg->next)
		if (!msg->deadline_ms)
			msg->deadline_ms = deadline;
	sp->teardown_at_ms = now_ms() + TEARDOWN_GRACE_MS;
	if (sp->pending.head)
		engine_arm(sp->m->engine, deadline);
	engine_arm(sp->m->engine, sp->teardown_at_ms);
	/* the engine buries the link once its flush completions are in */
	engine_kick(sp->m->engine);
}

void spool_link_down(struct spool *sp, const char *reason)
{
	pthread_mutex_lock(&sp->lock);
	mark_down_locked(sp, reason);
	if (sp->link && sp->in_flight.count == 0)
		bury_link_locked(sp);
	pthread_mutex_unlock(&sp->lock);
	attrs_changed(sp);
}

void spool_attempt_done(struct spool *sp, struct link_attempt *a)
{
	pthread_mutex_lock(&sp->lock);
	sp->connecting = false;
	if (a->link && !sp->m->stopping) {
		uint32_t max = sp->cfg->max_message;

		if (a->peer_max && a->peer_max < max)
			max = a->peer_max;
		if (max > FUSE_ATOMIC_WRITE_MAX)
			max = FUSE_ATOMIC_WRITE_MAX;
		sp->max_message = max;
		sp->window = pool_nslots(sp->m->pool) + 2;
		if (a->credits && a->credits < sp->window)
			sp->window = a->credits;
		sp->link = a->link;
		a->link = NULL;
		if (sp->ever_connected)
			sp->st.reconnects++;
		sp->ever_connected = true;
		sp->error_since_up = false;
		sp->gave_up = false;
		sp->state = SPOOL_CONNECTED;
		sp->backoff_ms = BACKOFF_FIRST_MS;
		log_notice("%s: connected to %s:%u (max message %u, window %u)", sp->cfg->name,
			sp->cfg->address, sp->cfg->port, sp->max_message, sp->window);
		post_ready_locked(sp);
	} else {
		if (a->link) {
			/* unmounting: the engine attached it, nobody will use it */
			link_disconnect(a->link);
			engine_bury(sp->m->engine, a->link);
			a->link = NULL;
		}
		sp->state = a->permanent ? SPOOL_FAILED : SPOOL_RECONNECTING;
		set_error(sp, a->why);
		if (a->permanent || sp->backoff_ms == BACKOFF_FIRST_MS)
			log_warn("%s: cannot connect to %s:%u: %s", sp->cfg->name, sp->cfg->address,
				sp->cfg->port, a->why);
		else
			log_info("%s: cannot connect to %s:%u: %s", sp->cfg->name,
				sp->cfg->address, sp->cfg->port, a->why);
		if (a->permanent)
			sp->backoff_ms = BACKOFF_CAP_MS;
		if (!sp->m->stopping) {
			sp->retry_at_ms = now_ms() + sp->backoff_ms;
			engine_arm(sp->m->engine, sp->retry_at_ms);
		}
		sp->backoff_ms = sp->backoff_ms * 2 > BACKOFF_CAP_MS ? BACKOFF_CAP_MS :
			sp->backoff_ms * 2;
	}
	pthread_mutex_unlock(&sp->lock);
	attrs_changed(sp);
}

static void fence_locked(struct spool *sp)
{
	struct msg *fence;

	if (!sp->unsignaled || sp->fence_in_flight || !sp->link || sp->link->down)
		return;
	fence = calloc(1, sizeof(*fence));
	if (!fence)
		return; /* the next signaled send or fence attempt confirms them */
	fence->kind = MSG_FENCE;
	fence->slot = POOL_NO_SLOT;
	fence->seq = sp->next_seq++;
	post_one(sp, fence);
}

uint64_t spool_tick(struct spool *sp, uint64_t now)
{
	uint64_t next = 0;
	struct msg *msg;

#define SOONEST(t) \
	do { \
		if ((t) && (!next || (t) < next)) \
			next = (t); \
	} while (0)

	pthread_mutex_lock(&sp->lock);
	/* writes that waited send_timeout_ms for a connection */
	while ((msg = sp->pending.head) && msg->deadline_ms && msg->deadline_ms <= now &&
		sp->state != SPOOL_CONNECTED) {
		msgq_pop(&sp->pending);
		refuse_msg(sp, msg, ENOTCONN, "not connected: send_timeout_ms passed");
		sp->gave_up = true;
	}
	if (sp->pending.head)
		SOONEST(sp->pending.head->deadline_ms);

	if (sp->link && !sp->link->down && (msg = sp->in_flight.head)) {
		uint64_t due = msg->posted_ms + in_flight_timeout(sp);

		if (due <= now) {
			char why[80];

			snprintf(why, sizeof(why), "no completion within %llu ms",
				(unsigned long long)in_flight_timeout(sp));
			mark_down_locked(sp, why);
			/*
			 * The peer has said nothing for send_timeout_ms: what waits
			 * behind the silent sends has waited long enough.
			 */
			sp->gave_up = true;
			while ((msg = msgq_pop(&sp->pending)))
				refuse_msg(sp, msg, ENOTCONN, why);
		} else {
			SOONEST(due);
		}
	}
	if (sp->link && sp->link->down) {
		if (sp->in_flight.count == 0 || sp->teardown_at_ms <= now)
			bury_link_locked(sp);
		else
			SOONEST(sp->teardown_at_ms);
	}

	if (sp->fence_at_ms && sp->fence_at_ms <= now) {
		sp->fence_at_ms = 0;
		fence_locked(sp);
	}
	SOONEST(sp->fence_at_ms);

	if (!sp->link && !sp->connecting && sp->retry_at_ms && !sp->m->stopping &&
		sp->cfg->type == RPMAFS_PEER_RDMA) {
		if (sp->retry_at_ms <= now) {
			sp->retry_at_ms = 0;
			sp->connecting = true;
			if (sp->state == SPOOL_FAILED)
				sp->state = SPOOL_RECONNECTING;
			if (link_connect_async(sp)) {
				/* the attempt could not even start: try again after the back-off */
				sp->connecting = false;
				set_error(sp, "cannot start a connection attempt: out of memory");
				sp->retry_at_ms = now + sp->backoff_ms;
				SOONEST(sp->retry_at_ms);
				sp->backoff_ms = sp->backoff_ms * 2 > BACKOFF_CAP_MS ?
					BACKOFF_CAP_MS : sp->backoff_ms * 2;
			}
		} else {
			SOONEST(sp->retry_at_ms);
		}
	}
	pthread_mutex_unlock(&sp->lock);
#undef SOONEST
	return next;
}

int spool_fsync(struct spool *sp, struct handle *fh, fuse_req_t req)
{
	struct fsync_wait *w;

	pthread_mutex_lock(&sp->lock);
	if (fh->in_flight == 0) {
		int err = fh->error;

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
	/* unsignaled sends are confirmed by a fence: post it now, not later */
	fence_locked(sp);
	pthread_mutex_unlock(&sp->lock);
	return 0;
}

int spool_take_error(struct spool *sp, struct handle *fh)
{
	int err;

	pthread_mutex_lock(&sp->lock);
	err = fh->error;
	fh->error = 0;
	pthread_mutex_unlock(&sp->lock);
	return err;
}

void spool_release(struct spool *sp, struct handle *fh)
{
	pthread_mutex_lock(&sp->lock);
	fh->released = true;
	handle_put_locked(fh);
	pthread_mutex_unlock(&sp->lock);
}

void spool_close(struct spool *sp)
{
	struct msg *msg;

	pthread_mutex_lock(&sp->lock);
	while ((msg = msgq_pop(&sp->pending)))
		refuse_msg(sp, msg, ENOTCONN, "unmounted");
	if (sp->link) {
		if (!sp->link->down) {
			sp->link->down = true;
			link_disconnect(sp->link);
		}
		bury_link_locked(sp);
	}
	pthread_mutex_unlock(&sp->lock);
}

unsigned spool_busy(struct spool *sp)
{
	unsigned n;

	pthread_mutex_lock(&sp->lock);
	n = sp->pending.count + sp->in_flight.count;
	pthread_mutex_unlock(&sp->lock);
	return n;
}

void spool_stats_get(struct spool *sp, struct spool_stats *st)
{
	pthread_mutex_lock(&sp->lock);
	*st = sp->st;
	st->state = sp->state;
	st->in_flight = sp->in_flight.count - sp->fence_in_flight;
	st->pending = sp->pending.count;
	st->max_message = sp->max_message;
	pthread_mutex_unlock(&sp->lock);
}
