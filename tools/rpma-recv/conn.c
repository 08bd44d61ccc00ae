// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn.c -- the life of one connection, from its accept to its end
 *
 * The whole state machine is here; recv_conn_to() refuses a transition
 * that is not in this table (transitions[] below is the same table):
 *
 *	event					from		to
 *	accepted (accept.c)			-		ACCEPTING
 *	RPMA_CONN_ESTABLISHED			ACCEPTING	RECEIVING
 *	orderly stop, an ack in flight		ACCEPTING,	SENDING_LAST_ACK
 *	  (start_last_ack)			RECEIVING
 *	we disconnect (recv_conn_close), or	ACCEPTING,	DISCONNECTING
 *	  the peer went (peer_gone)		RECEIVING,
 *						SENDING_LAST_ACK
 *	RPMA_CONN_CLOSED or lost, or our	DISCONNECTING	SETTLING
 *	  disconnect failed (start_settling)
 *	settled: quiet, or too long		SETTLING	FINISHED
 *	  (recv_conn_settle -> finish)
 *	dropped at exit (recv_conn_drop_all)	any but FINISHED  FINISHED
 *
 * A connection in ACCEPTING, RECEIVING or SENDING_LAST_ACK is talking
 * (recv_conn_talking): its queue pair takes receives and may send an
 * acknowledgement. recv_conn_reap() frees a FINISHED one.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "conn_priv.h"
#include "fd.h"
#include "log.h"
#include "rxq.h"

/*
 * After a connection is put in the error state, how long its completion
 * queue must stay quiet before it is taken to hold everything that arrived
 * (SETTLE_QUIET_MS), and how long that may take at most (SETTLE_MAX_MS).
 */
#define SETTLE_QUIET_MS 50
#define SETTLE_MAX_MS 1000
#define SETTLE_POLL_MS 10 /* how often a settling connection is looked at */
/*
 * At an orderly stop, how long a connection waits for the send completion
 * of its last acknowledgement before its disconnect (LAST_ACK_MAX_MS; a
 * send still queued when the QP goes to the error state is flushed, not
 * sent), and how often it is looked at meanwhile (LAST_ACK_POLL_MS).
 */
#define LAST_ACK_MAX_MS 1000
#define LAST_ACK_POLL_MS 1

/* ---- the state machine ---- */

static const struct {
	enum conn_state from, to;
} transitions[] = {
	{CONN_ACCEPTING, CONN_RECEIVING},
	{CONN_ACCEPTING, CONN_SENDING_LAST_ACK},
	{CONN_RECEIVING, CONN_SENDING_LAST_ACK},
	{CONN_ACCEPTING, CONN_DISCONNECTING},
	{CONN_RECEIVING, CONN_DISCONNECTING},
	{CONN_SENDING_LAST_ACK, CONN_DISCONNECTING},
	{CONN_DISCONNECTING, CONN_SETTLING},
	{CONN_SETTLING, CONN_FINISHED},
	/* dropped at exit, whatever it was doing */
	{CONN_ACCEPTING, CONN_FINISHED},
	{CONN_RECEIVING, CONN_FINISHED},
	{CONN_SENDING_LAST_ACK, CONN_FINISHED},
	{CONN_DISCONNECTING, CONN_FINISHED},
};

static const char *const state_names[CONN_STATES] = {
	[CONN_ACCEPTING] = "accepting",
	[CONN_RECEIVING] = "receiving",
	[CONN_SENDING_LAST_ACK] = "sending its last acknowledgement",
	[CONN_DISCONNECTING] = "disconnecting",
	[CONN_SETTLING] = "settling",
	[CONN_FINISHED] = "finished",
};

const char *recv_conn_state_name(enum conn_state s)
{
	return (unsigned)s < CONN_STATES ? state_names[s] : "(no state)";
}

bool recv_conn_may(enum conn_state from, enum conn_state to)
{
	for (size_t i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++)
		if (transitions[i].from == from && transitions[i].to == to)
			return true;
	return false;
}

bool recv_conn_to(struct recv_conn *c, enum conn_state to)
{
	if (!recv_conn_may(c->state, to)) {
		recv_log(RECV_LOG_ERROR, "connection %lu: no transition from %s to %s: refused",
			c->id, recv_conn_state_name(c->state), recv_conn_state_name(to));
		return false;
	}
	c->state = to;
	return true;
}

bool recv_conn_talking(const struct recv_conn *c)
{
	switch (c->state) {
	case CONN_ACCEPTING:
	case CONN_RECEIVING:
	case CONN_SENDING_LAST_ACK:
		return true;
	default:
		return false;
	}
}

void recv_conn_start(struct recv_conn *c)
{
	struct recv_server *srv = c->srv;

	c->state = CONN_ACCEPTING;
	c->prev = NULL;
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
}

static void unlink_conn(struct recv_conn *c)
{
	struct recv_server *srv = c->srv;

	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = NULL;
	c->next = NULL;
}

/* ---- the end of a connection ---- */

/*
 * finish -- the connection is over: delete it and keep it for the reaper.
 * Called from the loop's top level only (never while completions are
 * being handled), so that its receive path may drain the shared CQ
 * (recv_rxq_stop).
 */
static void finish(struct recv_conn *c, const char *how)
{
	struct recv_server *srv = c->srv;
	char dropped[48] = "";
	int ret;

	if (c->state == CONN_FINISHED)
		return;
	recv_rxq_stop(srv->rxq, c);
	if (c->state == CONN_SETTLING)
		srv->settling--;
	if (c->dropped)
		snprintf(dropped, sizeof(dropped), ", %" PRIu64 " dropped", c->dropped);
	recv_log(RECV_LOG_NOTICE, "connection %lu %s %s: %" PRIu64 " messages, %" PRIu64 " bytes%s",
		c->id, c->peer, how, c->messages, c->bytes, dropped);

	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->event_fd, NULL);
	ret = rpma_conn_delete(&c->conn);
	if (ret)
		recv_log(RECV_LOG_ERROR, "connection %lu: deleting it: %s", c->id,
			rpma_err_2str(ret));
	recv_rxq_release(srv->rxq, c);
	recv_deliver_forget(c);
	recv_accept_undo_confirm(c);
	recv_accept_undo_auth(c);
	srv->open--;
	(void)recv_conn_to(c, CONN_FINISHED);

	unlink_conn(c);
	c->next = srv->dead;
	srv->dead = c;
}

int64_t recv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * start_settling -- the connection has stopped (its QP is in the error
 * state, or about to be destroyed): write out every message that arrived
 * before, then finish. A DEVICE_REMOVAL or a failed disconnect comes
 * without the CM round trip that would otherwise give rxe's responder
 * time to finish: a message it is taking in on the other CPU while the QP
 * goes to the error state still makes its completion, and its sender has
 * its acknowledgement. So the connection stays until its completions have
 * been quiet for SETTLE_QUIET_MS (at most SETTLE_MAX_MS; seen in the lab
 * without this: 2 acknowledged sync messages lost at a device removal).
 * The wait is the loop's (recv_conn_settle()), not a sleep: every other
 * connection goes on meanwhile.
 */
static void start_settling(struct recv_conn *c)
{
	struct recv_server *srv = c->srv;

	if (c->state != CONN_DISCONNECTING)
		return; /* settling already, or finished */
	(void)recv_conn_to(c, CONN_SETTLING);
	srv->settling++;
	c->settle_start = recv_now_ms();
	c->quiet_since = c->settle_start;
	c->seen = c->messages + c->dropped;
	recv_rxq_settle(srv->rxq, c);
}

static int last_acks(struct recv_server *srv);

int recv_conn_settle(struct recv_server *srv)
{
	int wait = last_acks(srv);
	struct recv_conn *c, *next;
	int64_t now;

	if (!srv->settling)
		return wait;
	now = recv_now_ms();
	for (c = srv->conns; c && srv->settling; c = next) {
		next = c->next;
		if (c->state != CONN_SETTLING)
			continue;
		/* take what has come meanwhile (the loop handles new events too) */
		recv_rxq_drain(srv->rxq, c);
		if (c->messages + c->dropped != c->seen) {
			c->seen = c->messages + c->dropped;
			c->quiet_since = now;
		}
		if (now - c->quiet_since >= SETTLE_QUIET_MS ||
			now - c->settle_start >= SETTLE_MAX_MS)
			finish(c, c->close_why);
	}
	if (!srv->settling)
		return wait;
	return wait >= 0 && wait < SETTLE_POLL_MS ? wait : SETTLE_POLL_MS;
}

int recv_conn_proofs(struct recv_server *srv)
{
	struct recv_conn *c, *next;
	int64_t now, wait = -1;
	char why[64];

	if (!srv->unproven)
		return -1;
	now = recv_now_ms();
	for (c = srv->conns; c && srv->unproven; c = next) {
		next = c->next;
		if (!c->unproven_counted)
			continue;
		if (!recv_conn_talking(c)) {
			/* closing anyway: no proof is waited for */
			c->unproven_counted = false;
			srv->unproven--;
			continue;
		}
		if (now < c->proof_by) {
			if (wait < 0 || c->proof_by - now < wait)
				wait = c->proof_by - now;
			continue;
		}
		snprintf(why, sizeof(why), "no proof of key within %d ms", RECV_PROOF_MS);
		recv_deliver_auth_failed(c, why);
		if (c->unproven_counted) {
			c->unproven_counted = false;
			srv->unproven--;
		}
	}
	return (int)wait;
}

void recv_conn_close(struct recv_conn *c, const char *why)
{
	int ret;

	if (!recv_conn_talking(c))
		return;
	snprintf(c->close_why, sizeof(c->close_why), "closed (%s)", why);
	(void)recv_conn_to(c, CONN_DISCONNECTING);
	ret = rpma_conn_disconnect(c->conn);
	if (ret) {
		recv_log(RECV_LOG_DEBUG, "connection %lu: disconnect: %s", c->id,
			rpma_err_2str(ret));
		/* no CLOSED event will come: what arrived is written, then it finishes */
		start_settling(c);
	}
}

/* the peer is gone: write what it sent before going, then finish */
static void peer_gone(struct recv_conn *c, const char *how)
{
	if (recv_conn_talking(c)) {
		snprintf(c->close_why, sizeof(c->close_why), "%s", how);
		(void)recv_conn_to(c, CONN_DISCONNECTING);
		/* moves the QP to the error state: what is left is flushed */
		(void)rpma_conn_disconnect(c->conn);
	}
	start_settling(c);
}

/* ---- its CM events ---- */

static const char *event_name(enum rpma_conn_event ev)
{
	switch (ev) {
	case RPMA_CONN_ESTABLISHED:
		return "established";
	case RPMA_CONN_CLOSED:
		return "closed";
	case RPMA_CONN_LOST:
		return "lost";
	case RPMA_CONN_REJECTED:
		return "rejected";
	case RPMA_CONN_UNREACHABLE:
		return "unreachable";
	default:
		return "undefined";
	}
}

static void on_events(struct recv_conn *c)
{
	enum rpma_conn_event ev;
	char how[64];
	int ret;

	while (c->state != CONN_FINISHED && fd_readable(c->event_fd)) {
		ev = RPMA_CONN_UNDEFINED;
		ret = rpma_conn_next_event(c->conn, &ev);
		if (ret == RPMA_E_NO_EVENT)
			break;
		if (ret == RPMA_E_UNKNOWN) {
			recv_log(RECV_LOG_DEBUG, "connection %lu: an unexpected CM event, ignored",
				c->id);
			continue;
		}
		if (ret) {
			snprintf(how, sizeof(how), "lost (reading its events: %s)",
				rpma_err_2str(ret));
			peer_gone(c, how);
			return;
		}
		switch (ev) {
		case RPMA_CONN_ESTABLISHED:
			if (c->state == CONN_ACCEPTING) {
				(void)recv_conn_to(c, CONN_RECEIVING);
				recv_log(RECV_LOG_NOTICE, "connection %lu %s accepted (%s)", c->id,
					c->peer, c->kind);
			}
			break;
		case RPMA_CONN_CLOSED:
			peer_gone(c, "closed by peer");
			return;
		default:
			snprintf(how, sizeof(how), "lost (%s)", event_name(ev));
			peer_gone(c, how);
			return;
		}
	}
}

void recv_conn_handle(struct recv_server *srv, struct recv_watch *watch)
{
	struct recv_conn *c = watch->conn;

	if (watch->kind == RECV_WATCH_SRQ_CQ) {
		recv_rxq_turn(srv->rxq, NULL);
		return;
	}
	if (c->state == CONN_FINISHED)
		return; /* closed earlier in this epoll batch */
	if (watch->kind == RECV_WATCH_CONN_EVENT)
		on_events(c);
	else
		recv_rxq_turn(srv->rxq, c);
}

void recv_conn_run_pending(struct recv_server *srv)
{
	recv_rxq_run_pending(srv->rxq);
}

/* ---- the orderly stop ---- */

static const char *stop_why(const struct recv_server *srv)
{
	switch (srv->stop) {
	case RECV_STOP_COUNT:
		return "--count reached";
	case RECV_STOP_OUTPUT_GONE:
		return "output gone";
	case RECV_STOP_ENDPOINT:
		return "endpoint lost";
	default:
		return "shutting down";
	}
}

/* still_owed -- what it wrote out is not all acknowledged, or a request not answered */
static bool still_owed(const struct recv_conn *c)
{
	return c->confirm && recv_conn_talking(c) && recv_confirm_due(c->confirm, 0) >= 0;
}

/*
 * start_last_ack -- at an orderly stop: acknowledge everything written
 * out, and keep the connection (CONN_SENDING_LAST_ACK) until no
 * acknowledgement is in flight; a disconnect now would flush a send still
 * queued, and its sender would take its messages for lost. false: nothing
 * in flight, it may be closed at once.
 */
static bool start_last_ack(struct recv_conn *c, int64_t now)
{
	c->confirm->prompt = true;
	if (recv_confirm_due(c->confirm, now) == 0 && recv_deliver_send_ack(c) < 0)
		return true; /* closed, and logged */
	if (!c->confirm->busy)
		return false;
	if (!recv_conn_to(c, CONN_SENDING_LAST_ACK))
		return false;
	c->last_ack_by = now + LAST_ACK_MAX_MS;
	return true;
}

/*
 * last_ack_turn -- a connection in CONN_SENDING_LAST_ACK: take the
 * completions of its acknowledgements, send the last one if no buffer was
 * free for it before, and close once none is owed or in flight, or at
 * last_ack_by (a peer that does not take it: dead, or hostile); true while
 * it waits
 */
static bool last_ack_turn(struct recv_conn *c, int64_t now)
{
	recv_rxq_take_sends(c->srv->rxq, c);
	if (c->state != CONN_SENDING_LAST_ACK)
		return false;
	if (recv_confirm_due(c->confirm, now) == 0 && recv_deliver_send_ack(c) < 0)
		return false;
	if (!c->confirm->busy && recv_confirm_due(c->confirm, now) < 0) {
		recv_conn_close(c, stop_why(c->srv));
		return false;
	}
	if (now < c->last_ack_by)
		return true;
	recv_log(RECV_LOG_NOTICE,
		"connection %lu %s: its last acknowledgement was not confirmed in %d ms: "
		"closing it anyway (its sender will send again what it did not see acknowledged)",
		c->id, c->peer, LAST_ACK_MAX_MS);
	recv_conn_close(c, stop_why(c->srv));
	return false;
}

/* last_acks -- every connection in CONN_SENDING_LAST_ACK has its turn: all wait at once */
static int last_acks(struct recv_server *srv)
{
	struct recv_conn *c, *next;
	bool waiting = false;
	int64_t now;

	if (srv->stop == RECV_RUNNING)
		return -1;
	now = recv_now_ms();
	for (c = srv->conns; c; c = next) {
		next = c->next;
		if (c->state == CONN_SENDING_LAST_ACK && last_ack_turn(c, now))
			waiting = true;
	}
	return waiting ? LAST_ACK_POLL_MS : -1;
}

void recv_conn_shutdown_all(struct recv_server *srv, bool drain)
{
	/* nothing is acknowledged once the output is gone: who knows what it took */
	bool ack = srv->stop != RECV_STOP_OUTPUT_GONE;
	const char *why = stop_why(srv);
	struct recv_conn *c, *next;
	bool owed = false;
	int64_t now;
	int ret;

	if (drain)
		recv_rxq_drain_all(srv->rxq);
	for (c = srv->conns; c; c = c->next)
		owed = owed || still_owed(c);
	/* with --fsync, what is acknowledged is synced first: one sync for all */
	if (ack && owed && srv->opts->fsync) {
		ret = recv_output_sync(srv->out);
		if (ret) {
			recv_log(RECV_LOG_ERROR, "cannot sync %s: %s; nothing more is acknowledged",
				recv_output_name(srv->out), strerror(-ret));
			ack = false;
		}
	}
	now = recv_now_ms();
	for (c = srv->conns; c; c = next) {
		next = c->next;
		if (ack && c->confirm && recv_conn_talking(c) && start_last_ack(c, now))
			continue;
		if (c->state != CONN_FINISHED)
			recv_conn_close(c, why);
	}
}

void recv_conn_drop_all(struct recv_server *srv, const char *why)
{
	while (srv->conns) {
		struct recv_conn *c = srv->conns;

		if (recv_conn_talking(c))
			snprintf(c->close_why, sizeof(c->close_why), "dropped (%s)", why);
		else
			snprintf(c->close_why + strlen(c->close_why),
				sizeof(c->close_why) - strlen(c->close_why), ", %s", why);
		finish(c, c->close_why);
	}
}

void recv_conn_reap(struct recv_server *srv)
{
	while (srv->dead) {
		struct recv_conn *c = srv->dead;

		srv->dead = c->next;
		free(c);
	}
}

void recv_conn_totals(const struct recv_server *srv, uint64_t *acks, uint64_t *duplicates)
{
	*acks = srv->acks;
	*duplicates = srv->duplicates + srv->session_duplicates;
	for (const struct recv_conn *c = srv->conns; c; c = c->next) {
		if (!c->confirm)
			continue;
		*acks += c->confirm->acks;
		*duplicates += c->confirm->duplicates;
	}
}
