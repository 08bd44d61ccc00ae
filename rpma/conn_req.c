// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_req.c -- connection requests: outgoing ones made here, incoming ones from an endpoint
 *
 * A request owns a CM ID with its RC queue pair, a CM event channel of its own to which the
 * ID is migrated as soon as the request exists (an incoming request then outlives its
 * endpoint, and the channel becomes the connection's), the CQs, the shared completion channel
 * when configured and, when incoming, a copy of the private data. rpma_conn_req_connect()
 * hands all of it over to a connection, or releases it on failure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conn.h"
#include "conn_cfg.h"
#include "conn_req.h"
#include "cq.h"
#include "info.h"
#include "librpma_ext.h"
#include "log.h"
#include "mr.h"
#include "peer.h"
#include "private_data.h"

/* librpma's: the largest 3-bit values, so "receiver not ready" is retried without limit */
#define RPMA_RETRY_COUNT 7
#define RPMA_RNR_RETRY_COUNT 7

struct rpma_conn_req {
	bool is_passive; /* made from a CONNECT_REQUEST event: reject it when abandoned */
	struct rdma_cm_id *id;
	struct rdma_event_channel *evch;
	struct rpma_cq *cq;
	struct rpma_cq *rcq;		  /* NULL when rcq_size is 0 or the SRQ has one */
	struct ibv_comp_channel *channel; /* shared completion channel or NULL */
	struct rpma_conn_private_data pdata;
};

/*
 * abandon_id -- reject an incoming request's ID (so the other side hears it at once instead
 * of timing out), then destroy it; 0 or RPMA_E_PROVIDER, and *destroyed tells whether the ID
 * is gone (a failed rejection does not keep it)
 */
static int abandon_id(struct rdma_cm_id *id, bool is_passive, bool *destroyed)
{
	int ret = 0;

	if (is_passive && rdma_reject(id, NULL, 0)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_reject()");
		ret = RPMA_E_PROVIDER;
	}

	*destroyed = true;
	if (rdma_destroy_id(id)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_destroy_id()");
		ret = RPMA_E_PROVIDER;
		*destroyed = false;
	}

	return ret;
}

/*
 * req_release -- release everything the request holds, rejecting it first when incoming;
 * the first failure is returned, the rest is released anyway (the object is not freed)
 */
static int req_release(struct rpma_conn_req *req)
{
	/*
	 * The queue pair before its CQs, the CQs before their channel, the ID before its evch.
	 * rdma_destroy_qp() dereferences the queue pair: only when there is one.
	 */
	if (req->id->qp != NULL)
		rdma_destroy_qp(req->id);

	int ret_cq = rpma_cq_delete(&req->rcq);
	int ret2 = rpma_cq_delete(&req->cq);
	if (!ret_cq)
		ret_cq = ret2;
	int ret = ret_cq;

	bool id_destroyed;
	ret2 = abandon_id(req->id, req->is_passive, &id_destroyed);
	if (ret2 && !ret)
		ret = ret2;

	/* what a failed destroy leaves behind still uses its channel: leave that too */
	if (req->channel != NULL && !ret_cq) {
		int err = ibv_destroy_comp_channel(req->channel);
		if (err) {
			RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_destroy_comp_channel()");
			if (!ret)
				ret = RPMA_E_PROVIDER;
		}
	}

	if (id_destroyed)
		rdma_destroy_event_channel(req->evch);

	rpma_private_data_delete(&req->pdata);
	return ret;
}

/*
 * req_new_from_id -- make a request of id: its own CM event channel, the CQs, the shared
 * channel and the queue pair as cfg says. The request owns id from the call on: on failure
 * everything, id included, is released (and an incoming request rejected).
 */
static int req_new_from_id(struct rpma_peer *peer, struct rdma_cm_id *id, bool is_passive,
	const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr)
{
	int cqe = rpma_conn_cfg_get_cqe(cfg);
	int rcqe = rpma_conn_cfg_get_rcqe(cfg);
	bool shared = false;
	(void)rpma_conn_cfg_get_compl_channel(cfg, &shared);

	/* an SRQ with a receive CQ takes the receive completions: no receive CQ of our own */
	struct rpma_srq *srq = NULL;
	struct rpma_cq *srq_rcq = NULL;
	(void)rpma_conn_cfg_get_srq(cfg, &srq);
	if (srq != NULL)
		(void)rpma_srq_get_rcq(srq, &srq_rcq);

	int ret;
	if (shared && srq_rcq != NULL) {
		/* the SRQ's CQ has its own channel, which the connection cannot share (librpma) */
		RPMA_LOG_ERROR("a shared completion channel cannot be used with a shared RQ that "
			       "has its own receive CQ");
		ret = RPMA_E_INVAL;
		goto err_abandon_id;
	}

	struct rpma_conn_req *req = malloc(sizeof(*req));
	if (req == NULL) {
		ret = RPMA_E_NOMEM;
		goto err_abandon_id;
	}

	req->evch = rdma_create_event_channel();
	if (req->evch == NULL) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_create_event_channel()");
		ret = RPMA_E_PROVIDER;
		goto err_free;
	}

	/* the CONNECT_REQUEST event must be acknowledged by now, or this waits for it */
	if (rdma_migrate_id(id, req->evch)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_migrate_id()");
		ret = RPMA_E_PROVIDER;
		goto err_destroy_evch;
	}

	req->is_passive = is_passive;
	req->id = id;
	req->channel = NULL;
	req->cq = NULL;
	req->rcq = NULL;
	req->pdata.ptr = NULL;
	req->pdata.len = 0;

	if (shared) {
		req->channel = ibv_create_comp_channel(id->verbs);
		if (req->channel == NULL) {
			RPMA_LOG_ERROR_WITH_ERRNO(errno, "ibv_create_comp_channel()");
			ret = RPMA_E_PROVIDER;
			goto err_release;
		}
	}

	ret = rpma_cq_new(id->verbs, cqe, req->channel, &req->cq);
	if (ret)
		goto err_release;

	if (srq_rcq == NULL && rcqe > 0) {
		ret = rpma_cq_new(id->verbs, rcqe, req->channel, &req->rcq);
		if (ret)
			goto err_release;
	}

	struct rpma_cq *recv_cq = srq_rcq != NULL ? srq_rcq : req->rcq;
	ret = rpma_peer_setup_qp(peer, id, rpma_cq_get_ibv_cq(req->cq),
		recv_cq ? rpma_cq_get_ibv_cq(recv_cq) : NULL, cfg);
	if (ret)
		goto err_release;

	*req_ptr = req;
	return 0;

err_release:
	/* the ID is on req->evch now: release in the same order as an abandoned request */
	(void)req_release(req);
	free(req);
	return ret;
err_destroy_evch:
	rdma_destroy_event_channel(req->evch);
err_free:
	free(req);
err_abandon_id:
	(void)abandon_id(id, is_passive, &(bool){false});
	return ret;
}

/*
 * req_connect -- turn the request into a connection, then connect (outgoing) or accept
 * (incoming) with conn_param; on failure everything is released (an incoming request is
 * rejected)
 */
static int req_connect(
	struct rpma_conn_req *req, struct rdma_conn_param *conn_param, struct rpma_conn **conn_ptr)
{
	/* the connection object first: its failure needs no disconnect */
	struct rpma_conn *conn = NULL;
	int ret = rpma_conn_new(req->id, req->evch, req->cq, req->rcq, req->channel, &conn);
	if (ret) {
		(void)req_release(req);
		return ret;
	}

	/* the connection owns everything from here */
	rpma_conn_transfer_private_data(conn, &req->pdata);

	if (req->is_passive) {
		if (rdma_accept(req->id, conn_param)) {
			RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_accept(private_data_len=%u)",
				(unsigned)conn_param->private_data_len);
			/* tell the other side now rather than let it time out */
			(void)rdma_reject(req->id, NULL, 0);
			(void)rpma_conn_delete(&conn);
			return RPMA_E_PROVIDER;
		}
		rpma_conn_shorten_rnr_timer(conn);
	} else if (rdma_connect(req->id, conn_param)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_connect(private_data_len=%u)",
			(unsigned)conn_param->private_data_len);
		(void)rpma_conn_delete(&conn);
		return RPMA_E_PROVIDER;
	}

	*conn_ptr = conn;
	return 0;
}

/* internal API */

int rpma_conn_req_new_from_cm_event(struct rpma_peer *peer, struct rdma_cm_event *event,
	const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr)
{
	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return RPMA_E_INVAL;

	struct rdma_cm_id *id = event->id;
	struct rpma_conn_private_data pdata = {NULL, 0};
	int store_ret = rpma_private_data_store(event, &pdata);

	/* the event's memory, private data included, goes with the acknowledgement */
	if (rdma_ack_cm_event(event)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_ack_cm_event(CONNECT_REQUEST)");
		rpma_private_data_delete(&pdata);
		(void)abandon_id(id, true, &(bool){false});
		return RPMA_E_PROVIDER;
	}

	if (store_ret) {
		(void)abandon_id(id, true, &(bool){false});
		return store_ret;
	}

	struct rpma_conn_req *req;
	int ret = req_new_from_id(peer, id, true, cfg, &req);
	if (ret) {
		rpma_private_data_delete(&pdata);
		return ret;
	}

	req->pdata = pdata;
	*req_ptr = req;
	return 0;
}

/* public API */

int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
	const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr)
{
	if (peer == NULL || addr == NULL || port == NULL || req_ptr == NULL)
		return RPMA_E_INVAL;

	if (cfg == NULL)
		cfg = rpma_conn_cfg_default();

	int timeout_ms = 0;
	(void)rpma_conn_cfg_get_timeout(cfg, &timeout_ms);

	struct rdma_addrinfo *rai;
	int ret = rpma_info_new(addr, port, RPMA_INFO_ACTIVE, &rai);
	if (ret)
		return ret;

	/* no event channel: address and route resolution run synchronously */
	struct rdma_cm_id *id;
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_create_id()");
		rdma_freeaddrinfo(rai);
		return RPMA_E_PROVIDER;
	}

	ret = rpma_info_resolve_addr(rai, id, addr, timeout_ms);
	rdma_freeaddrinfo(rai);
	if (ret)
		goto err_destroy_id;

	if (rdma_resolve_route(id, timeout_ms)) {
		RPMA_LOG_ERROR_WITH_ERRNO(
			errno, "rdma_resolve_route(%s, timeout_ms=%d)", addr, timeout_ms);
		ret = RPMA_E_PROVIDER;
		goto err_destroy_id;
	}

	/* from here the request owns the ID, also when making it fails */
	struct rpma_conn_req *req;
	ret = req_new_from_id(peer, id, false, cfg, &req);
	if (ret)
		return ret;

	*req_ptr = req;
	RPMA_LOG_NOTICE("connection to %s:%s requested", addr, port);
	return 0;

err_destroy_id:
	(void)rdma_destroy_id(id);
	return ret;
}

int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
	const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr)
{
	if (req_ptr == NULL || *req_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_conn_req *req = *req_ptr;
	*req_ptr = NULL;

	int ret;
	if (conn_ptr == NULL || (pdata != NULL && (pdata->ptr == NULL || pdata->len == 0))) {
		/* librpma 1.3 consumes the request on these errors too */
		(void)req_release(req);
		ret = RPMA_E_INVAL;
	} else {
		struct rdma_conn_param conn_param = {
			.private_data = pdata ? pdata->ptr : NULL,
			.private_data_len = pdata ? pdata->len : 0,
			.responder_resources = RDMA_MAX_RESP_RES,
			.initiator_depth = RDMA_MAX_INIT_DEPTH,
			.flow_control = 1,
			.retry_count = RPMA_RETRY_COUNT,
			.rnr_retry_count = RPMA_RNR_RETRY_COUNT,
		};
		ret = req_connect(req, &conn_param, conn_ptr);
	}

	free(req);
	return ret;
}

int rpma_conn_req_delete(struct rpma_conn_req **req_ptr)
{
	if (req_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_conn_req *req = *req_ptr;
	if (req == NULL)
		return 0;

	int ret = req_release(req);
	free(req);
	*req_ptr = NULL;
	return ret;
}

int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset,
	size_t len, const void *op_context)
{
	if (req == NULL || dst == NULL)
		return RPMA_E_INVAL;

	return rpma_mr_post_recv(req->id->qp, dst, offset, len, op_context);
}

int rpma_conn_req_get_peer_addr(const struct rpma_conn_req *req, struct sockaddr_storage *addr)
{
	/* an outgoing request's peer is the address its caller gave rpma_conn_req_new() */
	if (req == NULL || addr == NULL || !req->is_passive)
		return RPMA_E_INVAL;

	const struct sockaddr *peer = rdma_get_peer_addr(req->id);
	size_t len;
	switch (peer->sa_family) {
	case AF_INET:
		len = sizeof(struct sockaddr_in);
		break;
	case AF_INET6:
		len = sizeof(struct sockaddr_in6);
		break;
	default:
		RPMA_LOG_ERROR("rpma_conn_req_get_peer_addr(): the peer's address is of family %d, "
			       "neither AF_INET nor AF_INET6",
			(int)peer->sa_family);
		return RPMA_E_INVAL;
	}

	memset(addr, 0, sizeof(*addr));
	memcpy(addr, peer, len);
	return 0;
}

int rpma_conn_req_get_private_data(
	const struct rpma_conn_req *req, struct rpma_conn_private_data *pdata)
{
	if (req == NULL || pdata == NULL)
		return RPMA_E_INVAL;

	*pdata = req->pdata;
	return 0;
}
