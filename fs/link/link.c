// SPDX-License-Identifier: BSD-3-Clause
/*
 * link.c -- the RDMA connection to one peer (see link.h)
 *
 * The whole state machine is here, one function per event; the table
 * below (link_table) is every transition there is, and move_locked(), the
 * one place the state changes, refuses any other (and logs it: a bug).
 *
 * The state is guarded by link->lock, which is never held while calling
 * the user's functions (link_ops): they may take their own locks and call
 * link_drop or link_post.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>
#include <librpma_ext.h>

#include "accept.h"
#include "attempt.h"
#include "devices.h"
#include "link.h"
#include "link_priv.h"
#include "linkack.h"
#include "linkauth.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/loop.h"
#include "wc.h"

/*
 * Connection attempts in flight at once, across the process (LINK_MAX_ATTEMPTS).
 * Unbounded, a mount of 1,000 peers starts 1,000 connect threads at once:
 * the receiver's CM answers late, most attempts hit connect_timeout_ms and
 * storm again after the back-off (lab, TCG: 914 of 1,000 timed out, 387 s
 * until all were up). A due attempt over the bound waits in LINK_BACKOFF
 * ("connecting") until attempt_done re-arms the tick. Small: an unreachable
 * peer holds its slot for its whole connect_timeout_ms.
 */
static unsigned attempts_running;
static bool attempts_waiting; /* a due attempt found no slot since the last one ended */

static void attempt_done(void *arg);

/* every transition of the state machine: the event, and the function that makes it */
static const struct link_transition {
	enum link_state from, to;
	const char *event;
} link_table[] = {
	{LINK_BACKOFF, LINK_CONNECTING, "link_tick: the retry is due (start_attempt_locked)"},
	{LINK_RETRY_SLOW, LINK_CONNECTING, "link_tick: the cap is over (start_attempt_locked)"},
	{LINK_CONNECTING, LINK_UP, "attempt_done: connected"},
	{LINK_CONNECTING, LINK_BACKOFF,
		"attempt_failed: the attempt failed or could not start; "
		"attempt_done: it ended after link_stop"},
	{LINK_CONNECTING, LINK_RETRY_SLOW,
		"attempt_failed: retrying alone will not mend it (bad private data, no pool "
		"registration)"},
	{LINK_UP, LINK_DRAINING,
		"begin_drain_locked: a CM event, a failed channel (lost), the user's link_drop"},
	{LINK_DRAINING, LINK_BACKOFF,
		"end_drain: nothing outstanding (on_cq, link_tick), or the grace is over (link_tick)"},
	{LINK_BACKOFF, LINK_CLOSED, "link_close: unmount"},
	{LINK_RETRY_SLOW, LINK_CLOSED, "link_close: unmount"},
	{LINK_CONNECTING, LINK_CLOSED,
		"link_close: unmount; the attempt is discarded when it ends"},
	{LINK_UP, LINK_CLOSED, "link_close: unmount; disconnected"},
	{LINK_DRAINING, LINK_CLOSED, "link_close: unmount; the drain is cut short"},
};

static const char *const state_names[LINK_STATES] = {
	[LINK_BACKOFF] = "BACKOFF",
	[LINK_CONNECTING] = "CONNECTING",
	[LINK_UP] = "UP",
	[LINK_DRAINING] = "DRAINING",
	[LINK_RETRY_SLOW] = "RETRY_SLOW",
	[LINK_CLOSED] = "CLOSED",
};

const char *link_state_name(enum link_state s)
{
	return (unsigned)s < LINK_STATES ? state_names[s] : "?";
}

bool link_may_move(enum link_state from, enum link_state to)
{
	for (size_t i = 0; i < sizeof(link_table) / sizeof(link_table[0]); i++)
		if (link_table[i].from == from && link_table[i].to == to)
			return true;
	return false;
}

/* under link->lock: the one place the state changes; false (and logged) if not in the table */
static bool move_locked(struct link *link, enum link_state to)
{
	if (!link_may_move(link->state, to)) {
		log_err("%s: link: %s -> %s refused: not a transition of the link",
			link->cfg.peer->name, link_state_name(link->state), link_state_name(to));
		return false;
	}
	link->state = to;
	return true;
}

int link_new(const struct link_cfg *cfg, struct link **link_ptr)
{
	struct link *link = calloc(1, sizeof(*link));

	if (!link)
		return -ENOMEM;
	link->cfg = *cfg;
	pthread_mutexattr_t recursive;

	pthread_mutex_init(&link->lock, NULL);
	/* end_drain takes it, and runs inside a reap too (outstanding) */
	pthread_mutexattr_init(&recursive);
	pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&link->reap_lock, &recursive);
	pthread_mutexattr_destroy(&recursive);
	link->state = LINK_BACKOFF;
	link->backoff_ms = LINK_BACKOFF_FIRST_MS;
	link->retry_at_ms = 1; /* at once */
	link->session = cfg->session;
	*link_ptr = link;
	return 0;
}

void link_delete(struct link **link_ptr)
{
	struct link *link = *link_ptr;

	if (!link)
		return;
	pthread_mutex_destroy(&link->lock);
	pthread_mutex_destroy(&link->reap_lock);
	free(link);
	*link_ptr = NULL;
}

enum link_state link_state(struct link *link)
{
	enum link_state s;

	pthread_mutex_lock(&link->lock);
	s = link->state;
	pthread_mutex_unlock(&link->lock);
	return s;
}

int link_unsent(struct link *link, bool waited, const char *what, char *why, size_t len)
{
	int cause;

	pthread_mutex_lock(&link->lock);
	cause = link->cause;
	if (cause)
		snprintf(why, len, "%s (last attempt: %s)", what, link->cause_why);
	else
		snprintf(why, len, "%s", what);
	pthread_mutex_unlock(&link->lock);
	if (cause == ECONNREFUSED || cause == EHOSTUNREACH)
		return cause;
	if (waited)
		return ETIMEDOUT;
	return cause ? cause : ENOTCONN;
}

const char *link_status(struct link *link)
{
	const char *s;

	pthread_mutex_lock(&link->lock);
	switch (link->state) {
	case LINK_UP:
		s = "connected";
		break;
	case LINK_RETRY_SLOW:
		s = "failed";
		break;
	default:
		/* before the first attempt ended: connecting, then reconnecting */
		s = link->tried ? "reconnecting" : "connecting";
		break;
	}
	pthread_mutex_unlock(&link->lock);
	return s;
}

static uint64_t doubled(uint64_t ms)
{
	return ms * 2 > LINK_BACKOFF_CAP_MS ? LINK_BACKOFF_CAP_MS : ms * 2;
}

/* under link->lock: the next attempt after the back-off (none while stopping) */
static void schedule_retry_locked(struct link *link)
{
	link->retry_at_ms = link->stopping ? 0 : now_ms() + link->backoff_ms;
	loop_arm(link->cfg.loop, link->retry_at_ms);
}

/* ---- the connection's descriptors (loop thread) ---- */

static void conn_free(void *arg)
{
	struct link_conn *c = arg;

	rpma_conn_delete(&c->conn);
	linkack_delete(&c->la);
	linkauth_delete(&c->auth);
	free(c);
}

static void on_cm_event(void *arg);

/* watch a new connection's descriptors; NULL (why set) on failure */
static struct link_conn *conn_attach(struct link_attempt *a)
{
	struct link_conn *c = calloc(1, sizeof(*c));
	struct loop *loop = a->link->cfg.loop;
	int ret;

	if (!c) {
		snprintf(a->why, sizeof(a->why), "out of memory");
		return NULL;
	}
	c->link = a->link;
	c->dev = a->dev;
	c->conn = a->conn;
	c->la = a->la;
	c->auth = a->lauth;
	c->armed = true; /* rpma_cq_new arms a CQ it makes */
	c->free_task = (struct loop_task){.fn = conn_free, .arg = c};
	c->ev_watch = (struct loop_watch){.fn = on_cm_event, .arg = c};
	c->cq_watch = (struct loop_watch){.fn = link_on_cq, .arg = c};
	if (rpma_conn_get_cq(c->conn, &c->cq) || rpma_conn_get_event_fd(c->conn, &c->event_fd) ||
		rpma_cq_get_fd(c->cq, &c->compl_fd) ||
		rpma_mr_get_ptr(c->dev->pool_mr, (void **)&c->pool)) {
		snprintf(a->why, sizeof(a->why), "connection has no completion queue");
		free(c);
		return NULL;
	}
	/* the handlers drain each descriptor until it would block */
	fcntl(c->event_fd, F_SETFL, fcntl(c->event_fd, F_GETFL) | O_NONBLOCK);
	fcntl(c->compl_fd, F_SETFL, fcntl(c->compl_fd, F_GETFL) | O_NONBLOCK);
	ret = loop_watch(loop, c->event_fd, &c->ev_watch);
	if (!ret) {
		ret = loop_watch(loop, c->compl_fd, &c->cq_watch);
		if (ret)
			loop_unwatch(loop, c->event_fd);
	}
	if (ret) {
		snprintf(a->why, sizeof(a->why), "cannot watch the connection: %s", strerror(-ret));
		free(c);
		return NULL;
	}
	a->conn = NULL;
	a->la = NULL;
	a->lauth = NULL;
	return c;
}

/* ---- the transitions ---- */

/* CONNECTING -> BACKOFF or RETRY_SLOW; loop thread, no lock held */
static void attempt_failed(struct link *link, bool permanent, int cause, const char *why)
{
	const struct rpmafs_peer_cfg *pc = link->cfg.peer;

	pthread_mutex_lock(&link->lock);
	link->tried = true;
	link->cause = cause ? cause : ENOTCONN;
	snprintf(link->cause_why, sizeof(link->cause_why), "%s", why);
	if (!move_locked(link, permanent ? LINK_RETRY_SLOW : LINK_BACKOFF)) {
		pthread_mutex_unlock(&link->lock);
		return; /* closed meanwhile */
	}
	if (permanent || link->backoff_ms == LINK_BACKOFF_FIRST_MS)
		log_warn("%s: cannot connect to %s:%u: %s", pc->name, pc->address, pc->port, why);
	else
		log_info("%s: cannot connect to %s:%u: %s", pc->name, pc->address, pc->port, why);
	if (permanent)
		link->backoff_ms = LINK_BACKOFF_CAP_MS;
	schedule_retry_locked(link);
	link->backoff_ms = doubled(link->backoff_ms);
	pthread_mutex_unlock(&link->lock);
	link->cfg.ops->on_down(link->cfg.ctx, LINK_ATTEMPT_FAILED, why);
}

/* a listening receiver rejected a request with a session: the next offers none (§11); loop thread */
static void session_fallback(struct link *link, const struct rpmafs_peer_cfg *pc)
{
	if (__atomic_exchange_n(&link->session, 0, __ATOMIC_RELAXED))
		accept_tell_fallback(pc, &link->fallback_told);
}

/*
 * BACKOFF or RETRY_SLOW -> CONNECTING; under link->lock. 0 or why it cannot
 * start (still CONNECTING: the caller fails the attempt, attempt_failed).
 */
static int start_attempt_locked(struct link *link, char *why, size_t whylen)
{
	struct link_attempt *a;
	pthread_attr_t attr;
	pthread_t tid;
	int ret;

	if (!move_locked(link, LINK_CONNECTING)) {
		snprintf(why, whylen, "cannot start a connection attempt from %s",
			link_state_name(link->state));
		return -EINVAL;
	}
	link->retry_at_ms = 0;
	a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(why, whylen, "cannot start a connection attempt: out of memory");
		return -ENOMEM;
	}
	a->link = link;
	a->peer = link->cfg.peer;
	a->devices = link->cfg.devices;
	a->loop = link->cfg.loop;
	a->sq_depth = LINK_SQ_DEPTH(link->cfg.window);
	/* a fallback lasts one attempt: a receiver's reject for another reason costs no more */
	a->session = __atomic_exchange_n(&link->session, link->cfg.session, __ATOMIC_RELAXED);
	a->done_task = (struct loop_task){.fn = attempt_done, .arg = a};
	__atomic_add_fetch(&attempts_running, 1, __ATOMIC_RELAXED);
	/* the loop does not stop while the attempt may still hand it its result */
	loop_hold(link->cfg.loop);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&tid, &attr, attempt_thread, a);
	pthread_attr_destroy(&attr);
	if (ret) {
		__atomic_sub_fetch(&attempts_running, 1, __ATOMIC_RELAXED);
		loop_release(link->cfg.loop);
		free(a);
		snprintf(why, whylen, "cannot start a connection thread: %s", strerror(ret));
		return -ret;
	}
	return 0;
}

/* the attempt's thread has ended: CONNECTING -> UP, BACKOFF or RETRY_SLOW (closed: discarded) */
static void attempt_done(void *arg)
{
	struct link_attempt *a = arg;
	struct link *link = a->link;
	struct link_conn *c = NULL;
	bool stopping, closed;

	/* a slot is free: the tick starts the next due attempt waiting for one */
	__atomic_sub_fetch(&attempts_running, 1, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&attempts_waiting, false, __ATOMIC_RELAXED))
		loop_arm(link->cfg.loop, 1);
	pthread_mutex_lock(&link->lock);
	stopping = link->stopping;
	closed = link->state == LINK_CLOSED;
	pthread_mutex_unlock(&link->lock);
	if (a->conn && !stopping && !closed)
		c = conn_attach(a);
	if (a->conn) {
		/* unmounting, closed, or it cannot be watched: nobody will use it */
		rpma_conn_disconnect(a->conn);
		rpma_conn_delete(&a->conn);
	}
	linkack_delete(&a->la);
	linkauth_delete(&a->lauth);

	if (closed) {
		/* link_close came first: CLOSED stays (nothing leaves it) */
	} else if (c) {
		pthread_mutex_lock(&link->lock);
		move_locked(link, LINK_UP);
		link->cur = c;
		link->tried = true;
		link->backoff_ms = LINK_BACKOFF_FIRST_MS;
		link->cause = 0;
		pthread_mutex_unlock(&link->lock);
		link->cfg.ops->on_up(link->cfg.ctx, a->peer_max, a->credits);
		link_settle_on(link, true); /* what on_up posted */
	} else if (stopping) {
		pthread_mutex_lock(&link->lock);
		move_locked(link, LINK_BACKOFF);
		link->retry_at_ms = 0;
		pthread_mutex_unlock(&link->lock);
	} else {
		if (a->session_refused)
			session_fallback(link, link->cfg.peer);
		attempt_failed(link, a->permanent, a->cause, a->why);
	}
	free(a);
	loop_release(link->cfg.loop);
}

/* UP -> DRAINING; under link->lock. false when it was not up. */
static bool begin_drain_locked(struct link *link, const char *reason)
{
	const struct rpmafs_peer_cfg *pc = link->cfg.peer;

	if (link->state != LINK_UP)
		return false;
	move_locked(link, LINK_DRAINING);
	link->drained = false;
	log_warn("%s: connection to %s lost: %s", pc->name, pc->address, reason);
	rpma_conn_disconnect(link->cur->conn);
	link->teardown_at_ms = now_ms() + LINK_TEARDOWN_GRACE_MS;
	loop_arm(link->cfg.loop, link->teardown_at_ms);
	return true;
}

/* DRAINING -> BACKOFF: the connection is freed after the batch; loop thread */
static void end_drain(struct link *link)
{
	struct loop *loop = link->cfg.loop;
	struct link_conn *c;

	/* no reap on a worker (link_reap) has the connection from here on */
	pthread_mutex_lock(&link->reap_lock);
	pthread_mutex_lock(&link->lock);
	if (link->state != LINK_DRAINING) {
		pthread_mutex_unlock(&link->lock);
		pthread_mutex_unlock(&link->reap_lock);
		return;
	}
	c = link->cur;
	link->cur = NULL;
	move_locked(link, LINK_BACKOFF);
	schedule_retry_locked(link);
	pthread_mutex_unlock(&link->lock);

	loop_unwatch(loop, c->event_fd);
	loop_unwatch(loop, c->compl_fd);
	c->dead = true;
	pthread_mutex_unlock(&link->reap_lock);
	loop_after_batch(loop, &c->free_task);
	link->cfg.ops->on_down(link->cfg.ctx, LINK_DRAINED, "drained");
}

/*
 * the user's count of what is still posted: a drain ends when it reaches
 * 0. On the loop thread at once; on a worker (link_reap) the loop ends it
 * at its next tick, as after link_drop: the descriptors are the loop's.
 */
void link_outstanding(struct link *link, unsigned n, bool on_loop)
{
	bool end;

	pthread_mutex_lock(&link->lock);
	end = link->state == LINK_DRAINING && n == 0;
	if (end && !on_loop) {
		link->drained = true;
		loop_kick(link->cfg.loop);
		end = false;
	}
	pthread_mutex_unlock(&link->lock);
	if (end)
		end_drain(link);
}

/* the connection is gone under us (CM event, channel failure): UP -> DRAINING */
void link_lost(struct link *link, const char *reason, bool on_loop)
{
	bool was_up;

	pthread_mutex_lock(&link->lock);
	was_up = begin_drain_locked(link, reason);
	pthread_mutex_unlock(&link->lock);
	if (was_up)
		link_outstanding(
			link, link->cfg.ops->on_down(link->cfg.ctx, LINK_LOST, reason), on_loop);
}

void link_drop(struct link *link, const char *reason, unsigned outstanding_now)
{
	pthread_mutex_lock(&link->lock);
	if (begin_drain_locked(link, reason) && outstanding_now == 0) {
		/* nothing to wait for: the loop ends the drain at its next tick */
		link->drained = true;
		loop_kick(link->cfg.loop);
	}
	pthread_mutex_unlock(&link->lock);
}

static void on_cm_event(void *arg)
{
	struct link_conn *c = arg;
	enum rpma_conn_event ev;
	int ret;

	while (!c->dead) {
		ret = rpma_conn_next_event(c->conn, &ev);
		if (ret == RPMA_E_NO_EVENT)
			return;
		if (ret) {
			link_lost(c->link, "connection event channel failed", true);
			return;
		}
		if (ev != RPMA_CONN_ESTABLISHED) {
			/*
			 * What the CQ holds came before the event: a receiver's
			 * acknowledgement of its last messages before it closes
			 * (rpma-recv --count). The CQ may not be armed (linkreap.c),
			 * and a drain with nothing outstanding ends at once.
			 */
			link_reap_all(c);
			link_lost(c->link, rpma_utils_conn_event_2str(ev), true);
		}
	}
}

uint64_t link_tick(struct link *link, uint64_t now)
{
	char why[128];
	uint64_t next = 0;
	bool start_failed = false, drain_over = false;

	/* what the user's tick posted (a fence, an acknowledgement request) */
	link_settle_on(link, true);
	pthread_mutex_lock(&link->lock);
	switch (link->state) {
	case LINK_BACKOFF:
	case LINK_RETRY_SLOW:
		if (link->stopping || !link->retry_at_ms)
			break;
		if (link->retry_at_ms > now)
			next = link->retry_at_ms;
		else if (__atomic_load_n(&attempts_running, __ATOMIC_RELAXED) >= LINK_MAX_ATTEMPTS)
			/* due: waits for a slot (attempt_done arms the tick) */
			__atomic_store_n(&attempts_waiting, true, __ATOMIC_RELAXED);
		else
			start_failed = start_attempt_locked(link, why, sizeof(why)) != 0;
		break;
	case LINK_DRAINING:
		if (link->drained || link->teardown_at_ms <= now)
			drain_over = true;
		else
			next = link->teardown_at_ms;
		break;
	case LINK_CONNECTING:
	case LINK_UP:
	case LINK_CLOSED:
	case LINK_STATES:
		break;
	}
	pthread_mutex_unlock(&link->lock);

	/* an attempt that cannot even start is a failed attempt: retried after the back-off */
	if (start_failed)
		attempt_failed(link, false, ENOMEM, why);
	if (drain_over)
		end_drain(link);
	pthread_mutex_lock(&link->lock);
	if ((start_failed || drain_over) && link->retry_at_ms)
		next = link->retry_at_ms;
	pthread_mutex_unlock(&link->lock);
	return next;
}

void link_stop(struct link *link)
{
	pthread_mutex_lock(&link->lock);
	link->stopping = true;
	link->retry_at_ms = 0;
	pthread_mutex_unlock(&link->lock);
}

void link_close(struct link *link)
{
	struct link_conn *c;

	pthread_mutex_lock(&link->lock);
	if (link->state == LINK_CLOSED) {
		pthread_mutex_unlock(&link->lock);
		return;
	}
	c = link->cur;
	link->cur = NULL;
	if (link->state == LINK_UP)
		rpma_conn_disconnect(c->conn);
	move_locked(link, LINK_CLOSED);
	link->stopping = true;
	link->retry_at_ms = 0;
	pthread_mutex_unlock(&link->lock);
	if (c) {
		loop_unwatch(link->cfg.loop, c->event_fd);
		loop_unwatch(link->cfg.loop, c->compl_fd);
		conn_free(c);
	}
}
