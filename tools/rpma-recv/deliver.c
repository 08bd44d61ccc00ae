// SPDX-License-Identifier: BSD-3-Clause
/*
 * deliver.c -- received messages to the output, in batches, and the
 * acknowledgements of what was written out
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ack.h"
#include "auth.h"
#include "conn_priv.h"
#include "log.h"
#include "received.h"
#include "rxq.h"

static void output_failed(struct recv_conn *c, int err, uint32_t len)
{
	struct recv_server *srv = c->srv;

	c->dropped++;
	if (err == -EPIPE || err == -EBADF) {
		if (srv->stop != RECV_STOP_OUTPUT_GONE)
			recv_log(RECV_LOG_ERROR,
				"connection %lu %s: cannot write a message of %" PRIu32 " bytes to "
				"%s: %s; the output is gone, closing every connection",
				c->id, c->peer, len, recv_output_name(srv->out), strerror(-err));
		srv->stop = RECV_STOP_OUTPUT_GONE;
		return;
	}
	recv_log(RECV_LOG_ERROR,
		"connection %lu %s: cannot write a message of %" PRIu32 " bytes to %s: %s; "
		"closing the connection",
		c->id, c->peer, len, recv_output_name(srv->out), strerror(-err));
	c->discard = true;
	recv_conn_close(c, "output error");
}

void recv_deliver_owe(struct recv_conn *c)
{
	if (c->owed)
		return;
	c->owed = true;
	c->owed_next = c->srv->owed;
	c->srv->owed = c;
}

void recv_deliver_forget(struct recv_conn *c)
{
	struct recv_conn **pp = &c->srv->owed;

	if (!c->owed)
		return;
	while (*pp != c)
		pp = &(*pp)->owed_next;
	*pp = c->owed_next;
	c->owed = false;
}

void recv_deliver_auth_failed(struct recv_conn *c, const char *why)
{
	struct recv_server *srv = c->srv;

	if (c->discard)
		return;
	/* what came before it is good: written now, before the connection is dropped */
	recv_deliver_flush(srv);
	c->discard = true;
	srv->auth_failures++;
	recv_log(RECV_LOG_REJECT,
		"connection %lu %s: SEND seq %" PRIu64 ": %s: dropping the connection, nothing "
		"more of it is written",
		c->id, c->peer, c->auth_seq, why);
	recv_conn_close(c, "authentication failed");
}

/*
 * open_sealed -- an authenticated connection's SEND checked (and, with
 * encrypt, decrypted in place) before anything else looks at it: its first
 * is the proof of key, every later one the payload and its tag. true: a
 * message of *len bytes (its tag off) to take; false: nothing to take (the
 * proof, or a SEND that failed: the connection is dropped)
 */
static bool open_sealed(struct recv_conn *c, const struct ibv_wc *wc, uint8_t *msg, uint32_t *len)
{
	bool with_imm = (wc->wc_flags & IBV_WC_WITH_IMM) != 0;
	char why[96];

	switch (rpmafs_auth_take(c->auth, &c->proven, with_imm, with_imm ? ntohl(wc->imm_data) : 0,
		msg, len, why, sizeof(why))) {
	case RPMAFS_AUTH_MESSAGE:
		c->auth_seq++;
		return true;
	case RPMAFS_AUTH_PROOF:
		c->auth_seq++;
		if (c->unproven_counted)
			c->srv->unproven--;
		c->unproven_counted = false;
		recv_log(RECV_LOG_DEBUG, "connection %lu %s: proof of key taken", c->id, c->peer);
		return false;
	case RPMAFS_AUTH_BAD:
		break;
	}
	recv_deliver_auth_failed(c, why);
	return false;
}

void recv_deliver(struct recv_conn *c, const struct ibv_wc *wc, const uint8_t *msg)
{
	struct recv_server *srv = c->srv;
	uint32_t len = wc->byte_len, num = 0;
	struct ibv_wc opened;
	struct recv_batch *b;
	const char *why;

	RECEIVED(msg, len);
	if (c->auth) {
		/*
		 * Checked first (the counters of both ends go on only with
		 * every SEND opened); one that fails, and everything after it,
		 * is never written. The slot is ours until it is posted again.
		 */
		if (c->discard) {
			c->dropped++;
			return;
		}
		if (!open_sealed(c, wc, (uint8_t *)msg, &len)) {
			if (c->discard)
				c->dropped++;
			return;
		}
		opened = *wc;
		opened.byte_len = len; /* what ackreq sees: the message, its tag off */
		wc = &opened;
	}
	/* --count: what the batch holds counts as written already */
	if (c->discard || c->state == CONN_SENDING_LAST_ACK || srv->stop == RECV_STOP_COUNT ||
		srv->stop == RECV_STOP_OUTPUT_GONE ||
		(srv->opts->count && srv->messages + srv->batch.n >= srv->opts->count)) {
		c->dropped++;
		return;
	}
	if (c->confirm) {
		switch (recv_confirm_take(c->confirm, wc, &num, &why)) {
		case RECV_TAKE_RECORD:
			break;
		case RECV_TAKE_DUPLICATE:
			recv_log(RECV_LOG_DEBUG,
				"connection %lu %s: message %" PRIu32
				" again: a duplicate, dropped",
				c->id, c->peer, ntohl(wc->imm_data) & RPMAFS_SEQ_MASK);
			recv_deliver_owe(c);
			return;
		case RECV_TAKE_REQUEST:
			recv_deliver_owe(c);
			return;
		case RECV_TAKE_BAD:
			recv_log(RECV_LOG_ERROR, "connection %lu %s: %s", c->id, c->peer, why);
			c->discard = true;
			c->dropped++;
			recv_conn_close(c, why);
			return;
		}
	}
	/* written out with the rest of the poll's messages (recv_deliver_flush) */
	b = &srv->batch;
	if (b->n == RECV_BATCH_MAX)
		recv_deliver_flush(srv); /* a drain nested in a close added to it */
	b->rec[b->n] = (struct recv_record){msg, len};
	b->conn[b->n] = c;
	b->num[b->n++] = num;
}

/* written: the message is counted, and acknowledgeable (after its write(2) returned) */
static void written(struct recv_conn *c, uint32_t num, uint32_t len)
{
	struct recv_server *srv = c->srv;

	if (c->confirm) {
		recv_confirm_written(c->confirm, num, recv_now_ms());
		recv_deliver_owe(c);
	}
	if (c->session && srv->sessions)
		rpmafs_sessions_mark(srv->sessions, c->session, num, recv_wall_ms());
	if (srv->state) {
		srv->state_dirty = true;
		/* nothing will be acknowledged: the state is saved after the batch */
		if (!c->confirm)
			srv->state_plain = true;
	}
	c->messages++;
	c->bytes += len;
	srv->messages++;
	srv->bytes += len;
	if (srv->opts->count && srv->messages >= srv->opts->count)
		srv->stop = RECV_STOP_COUNT;
}

void recv_deliver_repost_later(struct recv_server *srv, struct recv_conn *owner, uint32_t slot)
{
	struct recv_batch *b = &srv->batch;

	if (b->nslots == RECV_BATCH_MAX)
		recv_deliver_flush(srv);
	b->slot_conn[b->nslots] = owner;
	b->slot[b->nslots++] = slot;
}

/* the receives of the batch go again: one chain for each queue */
static void repost_batch(struct recv_server *srv, const struct recv_batch *b)
{
	unsigned i = 0, k;

	while (i < b->nslots) {
		struct recv_conn *owner = b->slot_conn[i];

		for (k = i + 1; k < b->nslots && b->slot_conn[k] == owner; k++)
			;
		recv_rxq_post(srv->rxq, owner, b->slot + i, k - i);
		i = k;
	}
}

static int save_state(struct recv_server *srv, bool durable);

uint64_t recv_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* entry i is a message of a session, written before (the table says so) */
static bool seen_before(struct recv_server *srv, const struct recv_batch *b, size_t i)
{
	const struct recv_conn *c = b->conn[i];

	return c->session && srv->sessions &&
	       rpmafs_sessions_seen(srv->sessions, c->session, b->num[i], recv_wall_ms());
}

/* entry j has the (session, number) of one in [from, j): its re-send in the same batch */
static bool again_in_run(const struct recv_batch *b, size_t from, size_t j)
{
	const struct recv_conn *c = b->conn[j];

	if (!c->session)
		return false;
	for (size_t k = from; k < j; k++)
		if (b->conn[k]->session == c->session && b->num[k] == b->num[j])
			return true;
	return false;
}

/*
 * duplicate -- a message its session delivered before (on this or an
 * earlier connection, or in an earlier run with a state file): not written,
 * but acknowledged as if it were, in its place in the connection's order
 */
static void duplicate(struct recv_conn *c, uint32_t num)
{
	c->srv->session_duplicates++;
	recv_log(RECV_LOG_DEBUG,
		"connection %lu %s: message %" PRIu32 " of session %016" PRIx64
		" was delivered before: a duplicate, acknowledged, not written",
		c->id, c->peer, num, c->session);
	recv_confirm_written(c->confirm, num, recv_now_ms());
	recv_deliver_owe(c);
}

/*
 * A record that fails is the error of its connection (output_failed), and
 * what comes after it goes on as it would have one by one. A message of a
 * session is asked about (rpmafs_sessions_seen) before it is written and
 * marked once it is; a run written at once ends before a message whose
 * (session, number) an earlier one of the run has, so that it is asked
 * about after that one was marked -- or not, if its write failed.
 */
void recv_deliver_flush(struct recv_server *srv)
{
	/*
	 * Taken out first: a failure may close a connection, and a close may
	 * drain its CQ (start_settling), which fills and flushes a new batch.
	 */
	struct recv_batch taken = srv->batch, *b = &taken;
	size_t i = 0, j, done;
	int ret;

	srv->batch.n = 0;
	srv->batch.nslots = 0;

	while (i < b->n) {
		struct recv_conn *c = b->conn[i];

		if (c->discard || srv->stop == RECV_STOP_OUTPUT_GONE) {
			c->dropped++; /* an earlier record of the batch failed */
			i++;
			continue;
		}
		if (seen_before(srv, b, i)) {
			duplicate(c, b->num[i]);
			i++;
			continue;
		}
		for (j = i + 1; j < b->n; j++)
			if (b->conn[j]->discard || again_in_run(b, i, j) || seen_before(srv, b, j))
				break;
		done = 0;
		ret = recv_output_write_batch(srv->out, b->rec + i, j - i, &done);
		for (size_t k = i; k < i + done; k++)
			written(b->conn[k], b->num[k], (uint32_t)b->rec[k].len);
		i += done;
		if (ret) {
			output_failed(b->conn[i], ret, (uint32_t)b->rec[i].len);
			i++;
		}
	}
	/*
	 * Records of plain senders (no acknowledgements): the state says they
	 * are there, or a restart would cut them off. Not synced: their
	 * senders were told nothing beyond the transport's confirmation.
	 */
	if (srv->state_plain)
		(void)save_state(srv, false);
	repost_batch(srv, b);
}

int recv_state_flush(struct recv_server *srv)
{
	return save_state(srv, srv->opts->fsync);
}

static int save_state(struct recv_server *srv, bool durable)
{
	int ret;

	if (!srv->state || !srv->state_dirty)
		return 0;
	ret = recv_state_save(srv->state, recv_output_position(srv->out), srv->sessions, durable);
	if (ret) {
		recv_log(RECV_LOG_ERROR,
			"cannot save the state of %s: %s; nothing more is acknowledged",
			recv_output_name(srv->out), strerror(-ret));
		srv->stop = RECV_STOP_OUTPUT_GONE;
		return -1;
	}
	srv->state_dirty = false;
	srv->state_plain = false;
	return 0;
}

int recv_deliver_send_ack(struct recv_conn *c)
{
	const char *why;
	int ret;

	/* what the acknowledgement covers is in the state file first (state.h) */
	if (recv_state_flush(c->srv)) {
		recv_conn_close(c, "state not saved");
		return -1;
	}
	ret = recv_confirm_send(c->confirm, c->conn, recv_rxq_send_cq(c->srv->rxq, c), &why);
	if (ret < 0) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: sending an acknowledgement: %s", c->id,
			c->peer, why);
		recv_conn_close(c, "acknowledgement not sent");
	}
	return ret;
}

int recv_conn_acks(struct recv_server *srv)
{
	struct recv_conn **pp = &srv->owed, *c;
	int64_t now = recv_now_ms();
	bool synced = false;
	int wait = -1, due;

	while ((c = *pp)) {
		due = recv_conn_talking(c) ? recv_confirm_due(c->confirm, now) : -1;
		if (due == 0 && srv->opts->fsync && !synced) {
			/* one sync for every acknowledgement of this round */
			int ret = recv_output_sync(srv->out);

			if (ret) {
				recv_log(RECV_LOG_ERROR,
					"cannot sync %s: %s; nothing more is "
					"acknowledged",
					recv_output_name(srv->out), strerror(-ret));
				srv->stop = RECV_STOP_OUTPUT_GONE;
				return -1;
			}
			synced = true;
		}
		if (due == 0 && recv_deliver_send_ack(c) == 1)
			due = 1; /* every buffer in flight: look again in a moment */
		if (due == 0)
			due = recv_confirm_due(c->confirm, now);
		if (due < 0) {
			/* nothing owed: off the list until the next record */
			*pp = c->owed_next;
			c->owed = false;
			continue;
		}
		if (wait < 0 || due < wait)
			wait = due;
		pp = &c->owed_next;
	}
	return wait;
}
