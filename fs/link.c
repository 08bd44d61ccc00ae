// SPDX-License-Identifier: BSD-3-Clause
/* link.c -- a spool's RDMA connection: made, used, torn down */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>

#include "devices.h"
#include "engine.h"
#include "link.h"
#include "log.h"
#include "mount.h"
#include "pdata.h"
#include "pool.h"

static void attempt_fail(struct link_attempt *a, bool permanent, const char *fmt, const char *arg)
{
	a->permanent = permanent;
	snprintf(a->why, sizeof(a->why), fmt, arg);
}

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

static void peer_pdata(struct link_attempt *a, struct rpma_conn *conn)
{
	struct rpma_conn_private_data pd = {0};
	struct rpmafs_pdata hdr;
	const char *why;

	if (rpma_conn_get_private_data(conn, &pd))
		return;
	switch (rpmafs_pdata_parse(pd.ptr, pd.len, &hdr, &why)) {
	case RPMAFS_PDATA_OK:
		a->peer_max = hdr.max_message;
		a->credits = hdr.credits;
		break;
	case RPMAFS_PDATA_NONE:
	case RPMAFS_PDATA_FOREIGN:
		/* a plain librpma or verbs receiver: the config's limit holds */
		break;
	case RPMAFS_PDATA_MALFORMED:
		a->permanent = true;
		snprintf(a->why, sizeof(a->why), "receiver's private data refused: %s", why);
		break;
	}
}

static void connect_once(struct link_attempt *a)
{
	struct spool *sp = a->sp;
	const struct rpmafs_peer_cfg *pc = sp->cfg;
	struct rpma_conn_cfg *ccfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct device *dev;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	uint8_t hdr[RPMAFS_PDATA_LEN];
	struct rpma_conn_private_data pd = {.ptr = hdr, .len = sizeof(hdr)};
	struct rpmafs_pdata mine = {.max_message = pc->max_message};
	uint32_t depth = pool_nslots(sp->m->pool) + 4;
	char port[8];
	int ret;

	ret = devices_get(sp->m->devices, pc->address, &dev, a->why, sizeof(a->why));
	if (ret) {
		a->permanent = ret == -EPERM;
		return;
	}

	ret = rpma_conn_cfg_new(&ccfg);
	if (!ret)
		ret = rpma_conn_cfg_set_timeout(ccfg, (int)pc->connect_timeout_ms);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(ccfg, depth);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(ccfg, depth + 1);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(ccfg, 1);
	if (ret) {
		attempt_fail(a, false, "connection config: %s", rpma_err_2str(ret));
		goto out;
	}

	snprintf(port, sizeof(port), "%u", pc->port);
	ret = rpma_conn_req_new(dev->peer, pc->address, port, ccfg, &req);
	if (ret) {
		attempt_fail(a, false, "cannot reach %.200s: address or route resolution failed",
			pc->address);
		goto out;
	}

	rpmafs_pdata_encode(&mine, hdr);
	ret = rpma_conn_req_connect(&req, &pd, &conn);
	if (ret) {
		attempt_fail(a, false, "connect request failed: %s", rpma_err_2str(ret));
		goto out;
	}

	ret = await_established(conn, (int)pc->connect_timeout_ms, &ev);
	if (ret || ev != RPMA_CONN_ESTABLISHED) {
		attempt_fail(a, false, "connection %s",
			ret ? "timed out" : rpma_utils_conn_event_2str(ev));
		goto out;
	}

	peer_pdata(a, conn);
	if (a->permanent)
		goto out;

	a->link = calloc(1, sizeof(*a->link));
	if (!a->link) {
		attempt_fail(a, false, "%s", "out of memory");
		goto out;
	}
	a->link->sp = sp;
	a->link->dev = dev;
	a->link->conn = conn;
	if (rpma_conn_get_cq(conn, &a->link->cq) || rpma_conn_get_event_fd(conn, &a->link->event_fd) ||
		rpma_cq_get_fd(a->link->cq, &a->link->compl_fd)) {
		attempt_fail(a, false, "%s", "connection has no completion queue");
		free(a->link);
		a->link = NULL;
		goto out;
	}
	conn = NULL;
out:
	if (conn) {
		rpma_conn_disconnect(conn);
		rpma_conn_delete(&conn);
	}
	rpma_conn_req_delete(&req);
	rpma_conn_cfg_delete(&ccfg);
}

static void *connect_thread(void *arg)
{
	struct link_attempt *a = arg;

	connect_once(a);
	engine_deliver(a->sp->m->engine, a);
	return NULL;
}

int link_connect_async(struct spool *sp)
{
	struct link_attempt *a = calloc(1, sizeof(*a));
	pthread_attr_t attr;
	pthread_t tid;
	int ret;

	if (!a)
		return -ENOMEM;
	a->sp = sp;
	engine_attempt_started(sp->m->engine);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&tid, &attr, connect_thread, a);
	pthread_attr_destroy(&attr);
	if (ret) {
		snprintf(a->why, sizeof(a->why), "cannot start a connection thread: %s",
			strerror(ret));
		engine_deliver(sp->m->engine, a);
	}
	return 0;
}

int link_post(struct link *link, struct msg *msg)
{
	int flags = msg->signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
	const void *ctx = (const void *)(uintptr_t)msg->seq;

	switch (msg->kind) {
	case MSG_DATA:
		return rpma_send(link->conn, link->dev->pool_mr, msg->offset, msg->len, flags, ctx);
	case MSG_EMPTY:
		return rpma_send(link->conn, NULL, 0, 0, flags, ctx);
	case MSG_FENCE:
		return rpma_write(link->conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, ctx);
	}
	return RPMA_E_INVAL;
}

void link_disconnect(struct link *link)
{
	if (link->conn)
		rpma_conn_disconnect(link->conn);
}

void link_delete(struct link **link_ptr)
{
	struct link *link = *link_ptr;

	if (!link)
		return;
	if (link->conn)
		rpma_conn_delete(&link->conn);
	free(link);
	*link_ptr = NULL;
}
