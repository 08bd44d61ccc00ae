// SPDX-License-Identifier: BSD-3-Clause
/*
 * accept.c -- connection requests: the peer judged (common/peer_check.h),
 * then accepted with its receives in place, or rejected; either way logged
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#ifdef RPMA_HAVE_EXT
#include <librpma_ext.h>
#endif

#include "conn_priv.h"
#include "fd.h"
#include "log.h"
#include "auth.h"
#include "pdata.h"
#include "peer_check.h"
#include "rxq.h"

/* peer_address -- the peer's address when this build's librpma can tell it */
static bool peer_address(
	struct rpma_conn_req *req, struct sockaddr_storage *ss, char *text, size_t size)
{
#ifdef RPMA_HAVE_EXT
	char addr[INET6_ADDRSTRLEN + 16];

	if (rpma_conn_req_get_peer_addr(req, ss) == 0) {
		if (peer_describe(ss, addr, sizeof(addr)))
			snprintf(text, size, "from %s", addr);
		else
			snprintf(text, size, "from an address of family %d", ss->ss_family);
		return true;
	}
#else
	(void)req;
	(void)ss;
#endif
	snprintf(text, size, "(peer address unknown)");
	return false;
}

static void reject(struct recv_server *srv, struct rpma_conn_req **req, const char *peer,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void reject(
	struct recv_server *srv, struct rpma_conn_req **req, const char *peer, const char *fmt, ...)
{
	char why[256];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);

	ret = rpma_conn_req_delete(req);
	srv->rejected++;
	recv_log(RECV_LOG_REJECT, "rejected connection %s: %s", peer, why);
	if (ret)
		recv_log(RECV_LOG_ERROR, "rejecting connection %s failed: %s", peer,
			rpma_err_2str(ret));
}

/* judge -- the peer_check verdict on req; false: rejected (and logged) */
static bool judge(struct recv_server *srv, struct rpma_conn_req **req, const char *peer,
	const struct sockaddr_storage *ss, const struct rpma_conn_private_data *their,
	struct peer_facts *facts)
{
	struct peer_request pr = {0};
	char hex[64];

	pr = (struct peer_request){ss, their->ptr, their->len, srv->open, srv->opts->max_conns};
	switch (peer_check_keys(srv->opts->allow, &pr, srv->keys != NULL, facts)) {
	case PEER_ACCEPT:
		return true;
	case PEER_NOT_ALLOWED:
		reject(srv, req, peer, "address not allowed by --allow");
		return false;
	case PEER_FOREIGN:
	case PEER_MALFORMED:
		if (facts->kind == RPMAFS_PDATA_OK || facts->kind == RPMAFS_PDATA_NONE) {
			/* its private data parsed: refused for the key it offers or not */
			srv->auth_failures++;
			if (strcmp(facts->why, "sender proves no key") == 0)
				reject(srv, req, peer, "%s (%s)", facts->why,
					facts->kind == RPMAFS_PDATA_OK
						? "rpmafs private data without a key"
						: "no private data: a plain RDMA peer");
			else
				reject(srv, req, peer, "%s", facts->why);
			return false;
		}
		peer_hex_prefix(their->ptr, their->len, hex, sizeof(hex));
		if (srv->keys)
			srv->auth_failures++;
		reject(srv, req, peer, "%s%s private data (%u bytes: %s%s): %s",
			srv->keys ? "sender proves no key: " : "",
			facts->kind == RPMAFS_PDATA_FOREIGN ? "foreign" : "malformed",
			(unsigned)their->len, hex, their->len > 16 ? " ..." : "", facts->why);
		return false;
	case PEER_TOO_MANY:
		reject(srv, req, peer, "%u connections are open, the most --max-connections allows",
			srv->open);
		return false;
	}
	return false;
}

/*
 * judge_key -- --keys (docs/design.md §11): the request must prove one of
 * the keys (version 3, its key id and request tag), with a nonce not seen
 * before; without --keys a request that offers a key is refused (it would
 * take our accept for the receiver's failed proof). *key: the key it
 * proved (NULL without --keys). false: rejected, counted and logged.
 */
static bool judge_key(struct recv_server *srv, struct rpma_conn_req **req, const char *peer,
	const struct rpma_conn_private_data *their, const struct peer_facts *facts,
	const struct rpmafs_key **key)
{
	const bool offers = facts->kind == RPMAFS_PDATA_OK && facts->pd.auth.on;
	const char *why = NULL;

	*key = NULL;
	if (!srv->keys) {
		if (!offers)
			return true;
		srv->auth_failures++;
		reject(srv, req, peer, "sender offers a key, this receiver has none");
		return false;
	}
	if (!offers) {
		srv->auth_failures++;
		reject(srv, req, peer, "sender proves no key (%s)",
			facts->kind == RPMAFS_PDATA_OK ? "rpmafs private data without a key"
						       : "no private data: a plain RDMA peer");
		return false;
	}
	*key = rpmafs_auth_request_check(srv->keys, their->ptr, their->len, &why);
	if (!*key) {
		srv->auth_failures++;
		if (!why || strncmp(why, "sender's key", 12) == 0)
			reject(srv, req, peer, "sender's key is not one of %s's", srv->opts->keys);
		else if (strcmp(why, "sender proves no key") == 0)
			reject(srv, req, peer, "%s", why);
		else
			reject(srv, req, peer, "sender proves no key: %s", why); /* malformed */
		return false;
	}
	/* only a request that proved a key takes a place in the window */
	if (rpmafs_nonces_seen(srv->nonces, facts->pd.auth.nonce)) {
		srv->auth_failures++;
		reject(srv, req, peer, "replayed connect request (key %s)", rpmafs_key_name(*key));
		*key = NULL;
		return false;
	}
	return true;
}

/*
 * setup_confirm -- the sender offered receiver confirmation: take it, with
 * credits that are true: the receives the receive path holds for it
 * (recv_rxq_ack_share; see rpma-recv(1), FLOW CONTROL), one kept for a
 * REQUEST. On failure the connection goes on without.
 */
static void setup_confirm(struct recv_conn *c, bool proof)
{
	struct recv_server *srv = c->srv;
	bool held;
	uint32_t share = recv_rxq_ack_share(srv->rxq, srv->reserved, &held);
	int ret;

	/* an authenticated sender's proof of key takes a receive too */
	ret = recv_confirm_new(
		srv->peer, (uint16_t)(share - 1 - (proof && share > 2)), &c->confirm);
	if (ret) {
		recv_log(RECV_LOG_ERROR,
			"connection %s: cannot register its acknowledgement buffers (%s): it goes "
			"on without receiver confirmation",
			c->peer, ret < 0 ? strerror(-ret) : rpma_err_2str(ret));
		return;
	}
	if (held) {
		c->confirm->reserved = share;
		srv->reserved += share;
	}
}

void recv_accept_undo_auth(struct recv_conn *c)
{
	if (c->unproven_counted)
		c->srv->unproven--;
	c->unproven_counted = false;
	rpmafs_auth_delete(&c->auth);
}

void recv_accept_undo_confirm(struct recv_conn *c)
{
	if (!c->confirm)
		return;
	c->srv->reserved -= c->confirm->reserved;
	c->srv->duplicates += c->confirm->duplicates;
	c->srv->acks += c->confirm->acks;
	recv_confirm_delete(&c->confirm);
}

/* watch_events -- its CM events on the loop's epoll */
static int watch_events(struct recv_conn *c)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->event_watch};
	int ret;

	ret = rpma_conn_get_event_fd(c->conn, &c->event_fd);
	if (!ret)
		ret = rpma_conn_get_qp_num(c->conn, &c->qp_num);
	if (ret) {
		c->event_fd = -1;
		recv_log(RECV_LOG_ERROR, "connection %lu %s: cannot get its file descriptors: %s",
			c->id, c->peer, rpma_err_2str(ret));
		return -1;
	}
	if (fd_set_nonblock(c->event_fd)) {
		c->event_fd = -1;
		recv_log(RECV_LOG_ERROR, "connection %lu %s: fcntl: %s", c->id, c->peer,
			strerror(errno));
		return -1;
	}
	c->event_watch = (struct recv_watch){RECV_WATCH_CONN_EVENT, c};
	if (epoll_ctl(c->srv->epfd, EPOLL_CTL_ADD, c->event_fd, &ev)) {
		c->event_fd = -1;
		recv_log(RECV_LOG_ERROR, "connection %lu %s: epoll_ctl: %s", c->id, c->peer,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* undo -- an accept that did not complete: everything it took given back */
static void undo(struct recv_conn *c)
{
	struct recv_server *srv = c->srv;

	if (c->event_fd >= 0)
		(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->event_fd, NULL);
	if (c->conn) {
		(void)rpma_conn_disconnect(c->conn);
		(void)rpma_conn_delete(&c->conn);
	}
	recv_rxq_release(srv->rxq, c);
	recv_accept_undo_confirm(c);
	recv_accept_undo_auth(c);
	free(c);
}

void recv_conn_request(struct recv_server *srv, struct rpma_conn_req **req)
{
	const struct recv_options *opts = srv->opts;
	struct rpma_conn_private_data ours, their = {NULL, 0};
	uint8_t reply[RPMAFS_AUTH_ACCEPT_LEN];
	const struct rpmafs_key *key = NULL;
	struct rpmafs_pdata answer;
	struct peer_facts facts;
	struct sockaddr_storage ss;
	char peer[INET6_ADDRSTRLEN + 32], why[128], how[96], keyed[112] = "";
	struct recv_conn *c;
	bool known;
	int ret;

	_Static_assert(RPMAFS_AUTH_ACCEPT_LEN >= RPMAFS_PDATA_MAX_LEN, "the accept fits");
	known = peer_address(*req, &ss, peer, sizeof(peer));
	if (rpma_conn_req_get_private_data(*req, &their)) {
		their.ptr = NULL;
		their.len = 0;
	}
	if (!judge(srv, req, peer, known ? &ss : NULL, &their, &facts) ||
		!judge_key(srv, req, peer, &their, &facts, &key))
		return;

	c = calloc(1, sizeof(*c));
	if (!c) {
		reject(srv, req, peer, "out of memory");
		return;
	}
	c->srv = srv;
	c->event_fd = -1;
	c->rx.cq_fd = -1;
	c->id = srv->accepted + 1;
	if (key)
		snprintf(c->peer, sizeof(c->peer), "%s key=%s", peer, rpmafs_key_name(key));
	else
		snprintf(c->peer, sizeof(c->peer), "%s", peer);
	if (facts.acked)
		setup_confirm(c, key != NULL);
	if (c->confirm)
		c->session = facts.session;
	if (key)
		snprintf(keyed, sizeof(keyed), ", key %s, %s", rpmafs_key_name(key),
			facts.pd.auth.encrypt || opts->encrypt ? "encrypt" : "mac");
	if (facts.kind == RPMAFS_PDATA_OK && c->session)
		snprintf(c->kind, sizeof(c->kind),
			"rpmafs sender, max_message %" PRIu32 ", acknowledged, session %016" PRIx64
			"%s",
			facts.pd.max_message, c->session, keyed);
	else if (facts.kind == RPMAFS_PDATA_OK)
		snprintf(c->kind, sizeof(c->kind), "rpmafs sender, max_message %" PRIu32 "%s%s",
			facts.pd.max_message, c->confirm ? ", acknowledged" : "", keyed);
	else
		snprintf(c->kind, sizeof(c->kind), "no rpmafs private data");

	if (recv_rxq_prepare(srv->rxq, c, *req, why, sizeof(why))) {
		undo(c);
		reject(srv, req, peer, "%s", why);
		return;
	}

	/* the flag only in answer to a sender that offered it */
	if (c->confirm)
		answer = (struct rpmafs_pdata){.max_message = opts->max_message,
			.credits = c->confirm->credits,
			.flags = RPMAFS_PDATA_F_ACK};
	else
		answer = (struct rpmafs_pdata){
			.max_message = opts->max_message, .credits = recv_rxq_credits(srv->rxq)};
	if (key) {
		/* version 3: our proof of the key, and the connection's keys */
		if (!c->confirm && answer.credits > 1)
			answer.credits--; /* its proof takes a receive */
		if (rpmafs_auth_accept_encode(key, their.ptr, &answer,
			    facts.pd.auth.encrypt || opts->encrypt, reply, &c->auth)) {
			undo(c);
			reject(srv, req, peer, "cannot make the connection's keys");
			return;
		}
		if (c->confirm)
			recv_confirm_seal(c->confirm, c->auth);
		ours.len = RPMAFS_AUTH_ACCEPT_LEN;
	} else {
		/* an accept without a key is version 1 (no session): every sender parses it */
		ours.len = (uint8_t)rpmafs_pdata_encode(&answer, reply);
	}
	ours.ptr = reply;
	ret = rpma_conn_req_connect(req, &ours, &c->conn);
	if (ret) {
		recv_log(RECV_LOG_ERROR, "accepting connection %s failed: %s", peer,
			rpma_err_2str(ret));
		c->conn = NULL;
		undo(c);
		return;
	}
	if (watch_events(c) || recv_rxq_attach(srv->rxq, c)) {
		undo(c);
		return;
	}

	srv->accepted++;
	srv->open++;
	if (c->auth) {
		/* nothing is taken from it before its proof of key (recv_conn_proofs) */
		c->proof_by = recv_now_ms() + RECV_PROOF_MS;
		c->unproven_counted = true;
		srv->unproven++;
	}
	recv_conn_start(c);
	recv_rxq_describe(srv->rxq, c, how, sizeof(how));
	recv_log(RECV_LOG_DEBUG, "connection %lu %s: accepting (%s); %s", c->id, c->peer, c->kind,
		how);
}
