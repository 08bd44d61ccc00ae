// SPDX-License-Identifier: BSD-3-Clause
/*
 * inbox_conn.c -- a sender's connection to the inbox: its connect request
 * judged ([rpmafs] allow, the private data, listen_keys) and answered, its
 * CM events and acknowledgement completions, its proof of key awaited,
 * and its end
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <librpma.h>
#include <librpma_ext.h>

#include "fd.h"
#include "inbox_priv.h"
#include "pdata.h"
#include "peer_check.h"
#include "runtime/clock.h"
#include "runtime/log.h"

/*
 * A connection's acknowledgement, under ib->ack_lock: a reader's release
 * (a FUSE worker, inbox.c) decides whether one is due. One that can wait
 * is HELD on ib->waiting, and the tick sends it (inbox_tick); one due now
 * is marked DUE there, and the loop thread sends it (inbox_conn_ack_due).
 */

/* c off ib->waiting: its acknowledgement sent, or nothing left to send */
static void unlist_locked(struct inbox_conn *c)
{
	struct inbox_conn **pp = &c->ib->waiting;

	if (c->ack_wait == INBOX_ACK_IDLE)
		return;
	while (*pp != c)
		pp = &(*pp)->wait_next;
	*pp = c->wait_next;
	c->ack_wait = INBOX_ACK_IDLE;
}

/* c on ib->waiting, in state wait (HELD, or DUE, which an earlier HELD becomes) */
static void list_locked(struct inbox_conn *c, enum inbox_ack_wait wait)
{
	if (c->ack_wait == INBOX_ACK_IDLE) {
		c->wait_next = c->ib->waiting;
		c->ib->waiting = c;
	}
	c->ack_wait = wait;
}

/* c's acknowledgement waits, at most INBOX_ACK_DELAY_MS (inbox_tick sends it) */
static void hold_locked(struct inbox_conn *c)
{
	if (c->ack_wait != INBOX_ACK_IDLE)
		return; /* held already (since its first), or due */
	c->held_at = now_ms();
	list_locked(c, INBOX_ACK_HELD);
	loop_arm(c->ib->loop, c->held_at + INBOX_ACK_DELAY_MS);
}

/*
 * the first acknowledgement on ib->waiting to send now: DUE, or (now not 0)
 * HELD INBOX_ACK_DELAY_MS by now; NULL, with *at the next one's time
 */
static struct inbox_conn *next_out_locked(struct inbox *ib, uint64_t now, uint64_t *at)
{
	*at = 0;
	for (struct inbox_conn *c = ib->waiting; c; c = c->wait_next) {
		uint64_t due = c->held_at + INBOX_ACK_DELAY_MS;

		if (c->ack_wait == INBOX_ACK_DUE || (now && now >= due))
			return c;
		if (!*at || due < *at)
			*at = due;
	}
	return NULL;
}

/* on the loop thread: send c's acknowledgement now; -1: failed (the caller frees c, unlocked) */
static int send_locked(struct inbox_conn *c, const char **why)
{
	uint64_t before = c->ack.acks;
	int ret;

	unlist_locked(c);
	if (c->dead)
		return 0;
	ret = inbox_ack_send(c->ib->acks, &c->ack, c->conn, c->auth, why);
	if (c->ack.acks != before)
		inbox_count(c->ib, &c->ib->acks_sent); /* the figures stats reads, under ib->lock */
	return ret < 0 ? -1 : 0;
}

static void ack_failed(struct inbox_conn *c, const char *why)
{
	log_notice("inbox: connection %s: acknowledgement failed: %s; closing it", c->peer, why);
	inbox_conn_free(c);
}

/* what c's acknowledgement needs: nothing, held back, or sent now (true) */
static bool settle_locked(struct inbox_conn *c)
{
	if (c->dead || !c->ack.on)
		return false;
	switch (inbox_ack_due(&c->ack)) {
	case INBOX_ACK_NOTHING:
		unlist_locked(c);
		break;
	case INBOX_ACK_HOLD:
		hold_locked(c);
		break;
	case INBOX_ACK_NOW:
		return true;
	}
	return false;
}

bool inbox_conn_released_locked(struct inbox_conn *c)
{
	struct inbox *ib = c->ib;
	bool kick;

	if (!settle_locked(c) || c->ack_wait == INBOX_ACK_DUE)
		return false;
	list_locked(c, INBOX_ACK_DUE);
	kick = !ib->due_kicked;
	ib->due_kicked = true;
	return kick;
}

void inbox_conn_ack_due(void *arg)
{
	struct inbox *ib = arg;
	const char *why = "";
	struct inbox_conn *c;
	uint64_t at;
	int ret;

	for (;;) {
		pthread_mutex_lock(&ib->ack_lock);
		c = next_out_locked(ib, 0, &at);
		if (!c) {
			ib->due_kicked = false;
			pthread_mutex_unlock(&ib->ack_lock);
			return;
		}
		ret = send_locked(c, &why);
		pthread_mutex_unlock(&ib->ack_lock);
		if (ret < 0)
			ack_failed(c, why);
	}
}

void inbox_conn_ack(struct inbox_conn *c)
{
	struct inbox *ib = c->ib;
	const char *why = "";
	int ret = 0;

	pthread_mutex_lock(&ib->ack_lock);
	if (settle_locked(c))
		ret = send_locked(c, &why);
	pthread_mutex_unlock(&ib->ack_lock);
	if (ret < 0)
		ack_failed(c, why);
}

/* on the loop thread: a message of c's nobody has started is taken back */
static bool withdraw(void *arg, uint32_t slot)
{
	struct inbox *ib = arg;

	return !ib->closing && inbox_queue_withdraw(ib->q, slot);
}

/* a session's messages were marked when queued: they stay, a re-send is a duplicate */
static bool keep(void *arg, uint32_t slot)
{
	(void)arg;
	(void)slot;
	return false;
}

void inbox_conn_free(struct inbox_conn *c)
{
	struct inbox *ib = c->ib;

	if (c->dead)
		return;
	if (c->event_fd >= 0)
		loop_unwatch(ib->loop, c->event_fd);
	if (c->cq_fd >= 0)
		loop_unwatch(ib->loop, c->cq_fd);
	/*
	 * what it sent and nobody started reading was never acknowledged: it
	 * comes again. Without a session it is taken back, to be queued when
	 * it does; with one it stays queued, and comes again as a duplicate.
	 * From here no reader's release finds it (inbox_ack_drop).
	 */
	pthread_mutex_lock(&ib->ack_lock);
	c->dead = true;
	unlist_locked(c);
	inbox_ack_drop(ib->acks, &c->ack, c->session ? keep : withdraw, inbox_post_slot, ib);
	pthread_mutex_unlock(&ib->ack_lock);
	(void)rpma_conn_disconnect(c->conn);
	(void)rpma_conn_delete(&c->conn);
	if (c->auth && !c->proven)
		ib->unproven--;
	rpmafs_auth_delete(&c->auth);
	if (c->prev)
		c->prev->next = c->next;
	else
		ib->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_lock(&ib->lock);
	ib->nconns--;
	pthread_mutex_unlock(&ib->lock);
	c->free_task = (struct loop_task){NULL, free, c};
	if (ib->closing) /* inbox_delete: the loop is stopped and runs no task again */
		free(c);
	else
		loop_after_batch(ib->loop, &c->free_task);
}

struct inbox_conn *inbox_conn_by_qp(struct inbox *ib, uint32_t qp_num)
{
	for (struct inbox_conn *c = ib->conns; c; c = c->next)
		if (c->qp_num == qp_num)
			return c;
	return NULL;
}

/* c's send completions: its acknowledgements went out (or failed to) */
static void on_send_cq(void *arg)
{
	struct inbox_conn *c = arg;
	struct ibv_wc wc[INBOX_ACK_BUFS];
	const char *why;
	int n, ret;

	/* one event per report of the loop, as on_receives (inbox.c) */
	if (!c->dead)
		(void)rpma_cq_wait(c->cq);
	while (!c->dead) {
		n = 0;
		ret = rpma_cq_get_wc(c->cq, INBOX_ACK_BUFS, wc, &n);
		if (ret)
			break;
		for (int i = 0; i < n && !c->dead; i++) {
			pthread_mutex_lock(&c->ib->ack_lock);
			ret = inbox_ack_sent(c->ib->acks, &c->ack, &wc[i], &why);
			pthread_mutex_unlock(&c->ib->ack_lock);
			if (ret && wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				log_notice("inbox: connection %s: %s: %s; closing it", c->peer, why,
					ibv_wc_status_str(wc[i].status));
				inbox_conn_free(c);
			}
		}
	}
	if (!c->dead && c->ack.owed)
		inbox_conn_ack(c);
}

static void on_conn_event(void *arg)
{
	struct inbox_conn *c = arg;
	enum rpma_conn_event ev;
	int ret;

	while (!c->dead && fd_readable(c->event_fd)) {
		ev = RPMA_CONN_UNDEFINED;
		ret = rpma_conn_next_event(c->conn, &ev);
		if (ret == RPMA_E_NO_EVENT)
			return;
		if (ret == RPMA_E_UNKNOWN)
			continue;
		if (!ret && ev == RPMA_CONN_ESTABLISHED) {
			log_info("inbox: connection %s established", c->peer);
			continue;
		}
		log_info("inbox: connection %s ended", c->peer);
		inbox_conn_free(c);
		return;
	}
}

static void reject(struct inbox *ib, struct rpma_conn_req **req, const char *peer, const char *why)
{
	(void)rpma_conn_req_delete(req);
	inbox_count(ib, &ib->rejected);
	log_notice("inbox: rejected connection from %s: %s", peer, why);
}

/* reject for the key it proves or not (listen_keys), counted in auth_failures too */
static void reject_auth(
	struct inbox *ib, struct rpma_conn_req **req, const char *peer, const char *why)
{
	inbox_count(ib, &ib->auth_failures);
	reject(ib, req, peer, why);
}

/*
 * judge -- the verdict on a connect request: [rpmafs] allow, the private
 * data, listen_keys (a version 3 request that proves one of DIR's keys
 * with a fresh nonce: *key), the limit. false: rejected and logged.
 */
static bool judge(struct inbox *ib, struct rpma_conn_req **req, const char *peer,
	const struct peer_request *pr, struct peer_facts *facts, const struct rpmafs_key **key)
{
	char why[200];

	*key = NULL;
	switch (peer_check_keys(ib->allow, pr, ib->auth != NULL, facts)) {
	case PEER_ACCEPT:
		break;
	case PEER_NOT_ALLOWED:
		reject(ib, req, peer, "address not allowed by [rpmafs] allow");
		return false;
	case PEER_FOREIGN:
	case PEER_MALFORMED:
		if (!ib->auth && !(facts->kind == RPMAFS_PDATA_OK && facts->pd.auth.on)) {
			reject(ib, req, peer, facts->why);
			return false;
		}
		if (!ib->auth || facts->kind == RPMAFS_PDATA_MALFORMED)
			snprintf(why, sizeof(why), "%s", facts->why);
		else if (facts->kind == RPMAFS_PDATA_FOREIGN)
			snprintf(why, sizeof(why),
				"sender proves no key: foreign private data (%s)", facts->why);
		else
			snprintf(why, sizeof(why), "sender proves no key (%s)",
				facts->kind == RPMAFS_PDATA_OK
					? "rpmafs private data without a key"
					: "no private data: a plain RDMA peer");
		reject_auth(ib, req, peer, why);
		return false;
	case PEER_TOO_MANY:
		reject(ib, req, peer, "too many connections open");
		return false;
	}
	if (!ib->auth)
		return true;
	*key = inbox_auth_judge(ib->auth, pr->pdata, pr->pdata_len, why, sizeof(why));
	if (!*key) {
		reject_auth(ib, req, peer, why);
		return false;
	}
	return true;
}

/*
 * answer -- the accept's private data into reply (*len bytes): version 1
 * without a key (every sender parses it), the version 3 accept that proves
 * key back and makes c's connection keys with one. -1: out of memory.
 */
static int answer(struct inbox *ib, struct inbox_conn *c, const struct rpmafs_key *key,
	const void *req, int credits, uint8_t reply[RPMAFS_AUTH_ACCEPT_LEN], uint8_t *len)
{
	/*
	 * Plain senders: no credits, the shared queue promises no receive to
	 * any one of them. A receiver-confirmed sender: its share, less one
	 * kept for a REQUEST (inbox_ack_offer), less one its proof of key
	 * takes, and the flag in answer.
	 */
	struct rpmafs_pdata ours = {
		.max_message = ib->slot_size - (key ? RPMAFS_AUTH_TAG_BYTES : 0),
		.credits = credits > 1 && key ? (uint32_t)credits - 1
			   : credits > 0      ? (uint32_t)credits
					      : 0,
		.flags = c->ack.on ? RPMAFS_PDATA_F_ACK : 0};

	_Static_assert(RPMAFS_AUTH_ACCEPT_LEN >= RPMAFS_PDATA_MAX_LEN, "the accept fits");
	if (!key) {
		*len = (uint8_t)rpmafs_pdata_encode(&ours, reply);
		return 0;
	}
	if (inbox_auth_accept(ib->auth, key, req, &ours, reply, &c->auth))
		return -1;
	*len = RPMAFS_AUTH_ACCEPT_LEN;
	return 0;
}

/* a connection never made: its share given back (it received nothing) */
static void drop_unconnected(struct inbox_conn *c)
{
	pthread_mutex_lock(&c->ib->ack_lock);
	inbox_ack_drop(c->ib->acks, &c->ack, withdraw, inbox_post_slot, c->ib);
	pthread_mutex_unlock(&c->ib->ack_lock);
}

void inbox_conn_request(struct inbox *ib, struct rpma_conn_req **req)
{
	struct rpma_conn_private_data their = {NULL, 0}, ours;
	uint8_t reply[RPMAFS_AUTH_ACCEPT_LEN], len = 0;
	const struct rpmafs_key *key = NULL;
	struct sockaddr_storage ss = {0};
	struct peer_request pr = {0};
	struct peer_facts facts;
	char peer[64] = "(address unknown)", keyed[RPMAFS_AUTH_NAME_MAX + 16] = "";
	struct inbox_conn *c;
	int ret, credits = 0;

	if (rpma_conn_req_get_peer_addr(*req, &ss) == 0) {
		pr.addr = &ss;
		if (!peer_describe(&ss, peer, sizeof(peer)))
			snprintf(peer, sizeof(peer), "(unknown)");
	}
	if (rpma_conn_req_get_private_data(*req, &their)) {
		their.ptr = NULL;
		their.len = 0;
	}
	pr.pdata = their.ptr;
	pr.pdata_len = their.len;
	pr.open = ib->nconns;
	pr.max_conns = INBOX_CONNS_MAX;
	if (!judge(ib, req, peer, &pr, &facts, &key))
		return;
	c = calloc(1, sizeof(*c));
	if (!c) {
		reject(ib, req, peer, "out of memory");
		return;
	}
	c->ib = ib;
	c->event_fd = c->cq_fd = -1;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	if (key)
		snprintf(c->sender, sizeof(c->sender), "%s@%s", rpmafs_key_name(key), peer);
	else
		snprintf(c->sender, sizeof(c->sender), "%s", peer);
	if (facts.acked) {
		pthread_mutex_lock(&ib->ack_lock);
		credits = inbox_ack_offer(ib->acks, &c->ack);
		pthread_mutex_unlock(&ib->ack_lock);
	}
	c->session = c->ack.on ? facts.session : 0;
	if (answer(ib, c, key, their.ptr, credits, reply, &len)) {
		drop_unconnected(c);
		free(c);
		reject(ib, req, peer, "cannot make the connection's keys");
		return;
	}
	ours = (struct rpma_conn_private_data){reply, len};
	ret = rpma_conn_req_connect(req, &ours, &c->conn);
	if (ret) {
		log_notice("inbox: accepting %s failed: %s", peer, rpma_err_2str(ret));
		drop_unconnected(c);
		rpmafs_auth_delete(&c->auth);
		free(c);
		inbox_count(ib, &ib->rejected);
		return;
	}
	c->next = ib->conns;
	if (ib->conns)
		ib->conns->prev = c;
	ib->conns = c;
	if (c->auth) {
		/* nothing is taken from it before its proof of key (inbox_tick) */
		c->proof_by = now_ms() + RPMAFS_AUTH_PROOF_TIMEOUT_MS;
		ib->unproven++;
		loop_arm(ib->loop, c->proof_by);
		snprintf(keyed, sizeof(keyed), ", key %s, %s", rpmafs_key_name(key),
			rpmafs_auth_encrypts(c->auth) ? "encrypt" : "mac");
	}
	pthread_mutex_lock(&ib->lock);
	ib->nconns++;
	ib->accepted++;
	pthread_mutex_unlock(&ib->lock);
	c->watch = (struct loop_watch){on_conn_event, c};
	if (rpma_conn_get_event_fd(c->conn, &c->event_fd) ||
		rpma_conn_get_qp_num(c->conn, &c->qp_num) || fd_set_nonblock(c->event_fd) ||
		loop_watch(ib->loop, c->event_fd, &c->watch)) {
		c->event_fd = -1;
		log_err("inbox: connection %s: cannot watch it", peer);
		inbox_conn_free(c);
		return;
	}
	c->cq_watch = (struct loop_watch){on_send_cq, c};
	if (c->ack.on && (rpma_conn_get_cq(c->conn, &c->cq) || rpma_cq_get_fd(c->cq, &c->cq_fd) ||
				 fd_set_nonblock(c->cq_fd) ||
				 loop_watch(ib->loop, c->cq_fd, &c->cq_watch))) {
		c->cq_fd = -1;
		log_err("inbox: connection %s: cannot watch its completions", peer);
		inbox_conn_free(c);
		return;
	}
	log_info("inbox: accepting %s (%s%s)", peer,
		facts.kind != RPMAFS_PDATA_OK ? "no rpmafs private data"
		: c->session		      ? "rpmafs sender, a session, acknowledged at read"
		: c->ack.on		      ? "rpmafs sender, acknowledged at read"
					      : "rpmafs sender",
		keyed);
}

uint64_t inbox_tick(struct inbox *ib, uint64_t now)
{
	struct inbox_conn *c, *next;
	const char *why = "";
	uint64_t at;
	int ret;

	/* acknowledgements held back: each goes INBOX_ACK_DELAY_MS after it was held */
	for (;;) {
		pthread_mutex_lock(&ib->ack_lock);
		c = next_out_locked(ib, now, &at);
		ret = c ? send_locked(c, &why) : 0;
		pthread_mutex_unlock(&ib->ack_lock);
		if (!c)
			break;
		if (ret < 0)
			ack_failed(c, why);
	}

	for (c = ib->conns; c && ib->unproven; c = next) {
		next = c->next;
		if (!c->auth || c->proven)
			continue;
		if (now < c->proof_by) {
			if (!at || c->proof_by < at)
				at = c->proof_by;
			continue;
		}
		/* connect-and-idle: it holds a queue pair and proves nothing */
		log_notice("inbox: connection %s: no proof of key within %d ms: dropping it",
			c->sender, RPMAFS_AUTH_PROOF_TIMEOUT_MS);
		inbox_count(ib, &ib->auth_failures);
		inbox_conn_free(c);
	}
	return at;
}
