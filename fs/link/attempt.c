// SPDX-License-Identifier: BSD-3-Clause
/* attempt.c -- one connection attempt to a peer (see attempt.h) */

#include <errno.h>
#include <poll.h>
#include <stdio.h>

#include <librpma.h>
#include <librpma_ext.h>

#include "accept.h"
#include "attempt.h"
#include "devices.h"
#include "linkack.h"
#include "linkauth.h"

/* wait for the CM's verdict on our connect request */
static int await_established(struct rpma_conn *conn, int timeout_ms, enum rpma_conn_event *ev)
{
	struct pollfd pfd = {.events = POLLIN};
	int ret;

	ret = rpma_conn_get_event_fd(conn, &pfd.fd);
	if (ret)
		return ret;
	/* the handshake itself retries inside the CM: allow it a margin */
	if (poll(&pfd, 1, timeout_ms + 1000) <= 0)
		return RPMA_E_NO_EVENT;
	return rpma_conn_next_event(conn, ev);
}

static void fail(
	struct link_attempt *a, bool permanent, int cause, const char *fmt, const char *arg)
{
	a->permanent = permanent;
	a->cause = cause;
	snprintf(a->why, sizeof(a->why), fmt, arg);
}

static void peer_pdata(struct link_attempt *a, struct rpma_conn *conn, const uint8_t *req)
{
	struct rpma_conn_private_data pd = {0};
	struct accept_answer ans;
	char why[200];

	if (rpma_conn_get_private_data(conn, &pd))
		pd = (struct rpma_conn_private_data){0};
	if (accept_judge(a->peer, req, pd.ptr, pd.len, &ans, why, sizeof(why))) {
		fail(a, true, ECONNREFUSED, "%s", why);
		return;
	}
	a->auth = ans.auth;
	a->peer_max = ans.peer_max;
	a->credits = ans.credits;
	a->acks = ans.acks;
}

/*
 * reject_hint -- what a rejection likely means. On InfiniBand and RoCE the
 * CM status tells a port nobody listens on from a receiver that refused
 * (rdma_reject); a refusal carries no reason from rpma-recv or an inbox,
 * so the spool names the causes that fit its own config, and the
 * receiver's log says which. Another status (iWARP's are errnos): all of them.
 */
static const char *reject_hint(
	const struct rpmafs_peer_cfg *pc, int ret, enum rpma_conn_event ev, int status)
{
	if (ret || ev != RPMA_CONN_REJECTED)
		return "";
	if (status == ACCEPT_REJ_NO_LISTENER)
		return " (nothing listens on that port: the receiver is not running, or not yet)";
	if (status == ACCEPT_REJ_CONSUMER)
		return pc->key ? " (the receiver refused; key = is set: a receiver with keys rejects a "
				 "key it does not hold, one without keys any key)"
			       : " (the receiver refused: its allow list leaves this host out, or it "
				 "wants a key and no key = is set: its log says which)";
	if (pc->key)
		return " (nothing listens there, or key = is set: a receiver with keys rejects a key "
		       "it does not hold, one without keys any key)";
	return " (nothing listens there, its allow list leaves this host out, or it wants a key "
	       "and no key = is set: the receiver's log says which)";
}

static void connect_once(struct link_attempt *a)
{
	const struct rpmafs_peer_cfg *pc = a->peer;
	uint32_t depth = a->sq_depth;
	struct rpma_conn_cfg *ccfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	uint8_t hdr[ACCEPT_OFFER_MAX];
	struct rpma_conn_private_data pd = {.ptr = hdr};
	char port[8];
	int ret;

	ret = devices_get(a->devices, pc->address, &a->dev, a->why, sizeof(a->why));
	if (ret) {
		a->permanent = ret == -EPERM;
		a->cause = ret == -EHOSTUNREACH ? EHOSTUNREACH : -ret;
		return;
	}

	ret = rpma_conn_cfg_new(&ccfg);
	if (!ret)
		ret = rpma_conn_cfg_set_timeout(ccfg, (int)pc->connect_timeout_ms);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(ccfg, depth);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(ccfg, depth + 1 + LINKACK_RECVS);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(ccfg, LINKACK_RECVS);
	if (ret) {
		fail(a, false, ENOMEM, "connection config: %s", rpma_err_2str(ret));
		goto out;
	}

	snprintf(port, sizeof(port), "%u", pc->port);
	ret = rpma_conn_req_new(a->dev->peer, pc->address, port, ccfg, &req);
	if (ret) {
		fail(a, false, EHOSTUNREACH,
			"cannot reach %.200s: address or route resolution failed", pc->address);
		goto out;
	}

	pd.len = (uint8_t)accept_offer(pc, a->session, hdr);
	ret = rpma_conn_req_connect(&req, &pd, &conn);
	if (ret) {
		fail(a, false, ENOTCONN, "connect request failed: %s", rpma_err_2str(ret));
		goto out;
	}

	ret = await_established(conn, (int)pc->connect_timeout_ms, &ev);
	if (ret || ev != RPMA_CONN_ESTABLISHED) {
		int status = 0;

		if (!ret && rpma_conn_get_event_status(conn, &status))
			status = 0;
		/* with a key no fallback: a receiver too old for a session rejects any key too */
		a->session_refused =
			!pc->key && accept_session_refused(a->session, ret, ev, status);
		snprintf(a->why, sizeof(a->why), "connection %s%s",
			ret ? "timed out" : rpma_utils_conn_event_2str(ev),
			/* the receiver's log says why; these are the likely reasons with a key */
			reject_hint(pc, ret, ev, status));
		a->permanent = false;
		a->cause = accept_cause(ret, ev);
		goto out;
	}

	peer_pdata(a, conn, hdr);
	/* before the loop hears of it: no message is sent, so no ack comes, before this */
	if (!a->permanent && a->acks) {
		ret = linkack_new(a->dev->peer, conn, &a->la);
		if (ret) {
			fail(a, false, ENOMEM, "cannot post receives for acknowledgements: %s",
				rpma_err_2str(ret));
			goto out;
		}
	}
	/* the proof: the first SEND, before the loop (and so any message) has the connection */
	if (!a->permanent && a->auth) {
		ret = linkauth_new(a->dev->peer, conn, &a->auth, depth, &a->lauth);
		if (ret) {
			fail(a, false, ENOMEM, "cannot send the proof of key: %s",
				rpma_err_2str(ret));
			goto out;
		}
		if (a->la)
			a->la->auth = a->lauth;
	}
	if (!a->permanent) {
		a->conn = conn;
		conn = NULL;
	}
out:
	if (conn) {
		rpma_conn_disconnect(conn);
		rpma_conn_delete(&conn);
	}
	rpmafs_auth_delete(&a->auth); /* made but not taken by a linkauth */
	rpma_conn_req_delete(&req);
	rpma_conn_cfg_delete(&ccfg);
}

void *attempt_thread(void *arg)
{
	struct link_attempt *a = arg;

	connect_once(a);
	loop_run_soon(a->loop, &a->done_task);
	return NULL;
}
