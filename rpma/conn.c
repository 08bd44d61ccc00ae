// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn.c -- connections: events, completion channels, teardown, and the messaging calls
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "cq.h"
#include "librpma_ext.h"
#include "log.h"
#include "mr.h"
#include "private_data.h"

struct rpma_conn {
	struct rdma_cm_id *id;		     /* with the queue pair in id->qp */
	struct rdma_event_channel *evch;     /* the connection's own CM events */
	struct rpma_cq *cq;		     /* main CQ */
	struct rpma_cq *rcq;		     /* receive CQ or NULL */
	struct ibv_comp_channel *channel;    /* shared completion channel or NULL */
	struct rpma_conn_private_data pdata; /* what the other side sent */
	bool rnr_timer_set;		     /* rpma_conn_shorten_rnr_timer() was tried */
	int event_status;		     /* the status of the last event read, 0: none */
};

/*
 * How long a sender waits before retrying a SEND that found no receive posted here (the value
 * our queue pair puts in its RNR NAKs). The kernel's CM moves both sides' queue pairs to RTR
 * with min_rnr_timer 0, which encodes the longest wait, 655.36 ms: a receiver that runs out of
 * receives for a moment then costs the sender 655 ms per message (seen on Soft-RoCE: 78
 * messages/s instead of 30,000; 200 sends to a receiver that re-posts its one receive 2 ms
 * after each message took 134 s, and 1.6 s with this). 12 encodes 0.64 ms, the value of
 * rdma-core's own examples (rc_pingpong). The connecting side receives too: a spool's
 * receiver-confirmation acknowledgements (the inbox sends one per message read).
 */
#define RPMA_MIN_RNR_TIMER 12

/* internal API */

int rpma_conn_new(struct rdma_cm_id *id, struct rdma_event_channel *evch, struct rpma_cq *cq,
	struct rpma_cq *rcq, struct ibv_comp_channel *channel, struct rpma_conn **conn_ptr)
{
	struct rpma_conn *conn = malloc(sizeof(*conn));
	if (conn == NULL)
		return RPMA_E_NOMEM;

	conn->id = id;
	conn->evch = evch;
	conn->cq = cq;
	conn->rcq = rcq;
	conn->channel = channel;
	conn->pdata.ptr = NULL;
	conn->pdata.len = 0;
	conn->rnr_timer_set = false;
	conn->event_status = 0;
	*conn_ptr = conn;
	return 0;
}

void rpma_conn_transfer_private_data(struct rpma_conn *conn, struct rpma_conn_private_data *pdata)
{
	conn->pdata = *pdata;
	pdata->ptr = NULL;
	pdata->len = 0;
}

/*
 * The queue pair is in RTS: librdmacm's rdma_accept() takes it INIT -> RTR -> RTS before the
 * accept goes out, and on the connecting side the CONNECT_RESPONSE does the same before
 * ESTABLISHED is handed out. The timer is changed by an RTS -> RTS transition, where it is an
 * optional attribute (it cannot be set earlier: the RTR transition overwrites it). The peer
 * can send only once its own queue pair is in RTS, and a spool sends nothing before its
 * ESTABLISHED, so nothing it is answered with meets the old timer; on the accepting side only
 * a SEND racing rdma_accept(), to a receiver with no receive posted, would. iWARP has no RNR
 * NAK: left alone there.
 */
void rpma_conn_shorten_rnr_timer(struct rpma_conn *conn)
{
	struct rdma_cm_id *id = conn->id;

	conn->rnr_timer_set = true;
	if (id->qp == NULL || id->verbs->device->transport_type != IBV_TRANSPORT_IB)
		return;

	struct ibv_qp_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.min_rnr_timer = RPMA_MIN_RNR_TIMER;
	int err = ibv_modify_qp(id->qp, &attr, IBV_QP_MIN_RNR_TIMER);
	if (err)
		RPMA_LOG_WARNING_WITH_ERRNO(err,
			"ibv_modify_qp(min_rnr_timer=%d): senders will wait 655 ms whenever no "
			"receive is posted",
			RPMA_MIN_RNR_TIMER);
}

/*
 * map_event -- librpma's mapping of CM events, plus ADDR_ERROR and ROUTE_ERROR as
 * UNREACHABLE; false for events with no meaning for an existing connection
 */
static bool map_event(enum rdma_cm_event_type cm_event, enum rpma_conn_event *event)
{
	switch (cm_event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		*event = RPMA_CONN_ESTABLISHED;
		return true;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		*event = RPMA_CONN_LOST;
		return true;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		*event = RPMA_CONN_CLOSED;
		return true;
	case RDMA_CM_EVENT_REJECTED:
		*event = RPMA_CONN_REJECTED;
		return true;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		*event = RPMA_CONN_UNREACHABLE;
		return true;
	default:
		return false;
	}
}

/* public API */

int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL)
		return RPMA_E_INVAL;

	*fd = conn->evch->fd;
	return 0;
}

int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	if (conn == NULL || event == NULL)
		return RPMA_E_INVAL;

	struct rdma_cm_event *edata = NULL;
	if (rdma_get_cm_event(conn->evch, &edata)) {
		/*
		 * On a non-blocking fd the kernel says EAGAIN; librdmacm turns a short read
		 * into ENODATA. Neither is a failure.
		 */
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENODATA)
			return RPMA_E_NO_EVENT;

		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_get_cm_event()");
		return RPMA_E_PROVIDER;
	}

	enum rdma_cm_event_type cm_event = edata->event;
	int status = edata->status;

	conn->event_status = status;

	/* the active side learns the accept's private data here */
	if (cm_event == RDMA_CM_EVENT_ESTABLISHED && conn->pdata.ptr == NULL) {
		int ret = rpma_private_data_store(edata, &conn->pdata);
		if (ret) {
			(void)rdma_ack_cm_event(edata);
			return ret;
		}
	}

	if (rdma_ack_cm_event(edata)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_ack_cm_event(%s)", rdma_event_str(cm_event));
		return RPMA_E_PROVIDER;
	}

	if (!map_event(cm_event, event)) {
		RPMA_LOG_WARNING("unexpected connection event %s (status %d)",
			rdma_event_str(cm_event), status);
		return RPMA_E_UNKNOWN;
	}

	/* the connecting side's queue pair is in RTS now (the accepting side's was already) */
	if (*event == RPMA_CONN_ESTABLISHED && !conn->rnr_timer_set)
		rpma_conn_shorten_rnr_timer(conn);

	RPMA_LOG_NOTICE("%s (%s, status %d)", rpma_utils_conn_event_2str(*event),
		rdma_event_str(cm_event), status);
	return 0;
}

int rpma_conn_get_event_status(const struct rpma_conn *conn, int *status)
{
	if (conn == NULL || status == NULL)
		return RPMA_E_INVAL;

	*status = conn->event_status;
	return 0;
}

int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata)
{
	if (conn == NULL || pdata == NULL)
		return RPMA_E_INVAL;

	*pdata = conn->pdata;
	return 0;
}

int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num)
{
	if (conn == NULL || qp_num == NULL)
		return RPMA_E_INVAL;

	*qp_num = conn->id->qp->qp_num;
	return 0;
}

int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr)
{
	if (conn == NULL || cq_ptr == NULL)
		return RPMA_E_INVAL;

	*cq_ptr = conn->cq;
	return 0;
}

int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr)
{
	if (conn == NULL || rcq_ptr == NULL)
		return RPMA_E_INVAL;

	*rcq_ptr = conn->rcq;
	return 0;
}

int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL)
		return RPMA_E_INVAL;

	if (conn->channel == NULL)
		return RPMA_E_NOT_SHARED_CHNL;

	*fd = conn->channel->fd;
	return 0;
}

int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq)
{
	(void)flags;

	if (conn == NULL || cq == NULL)
		return RPMA_E_INVAL;

	if (conn->channel == NULL)
		return RPMA_E_NOT_SHARED_CHNL;

	struct ibv_cq *ev_cq;
	void *ev_ctx;
	if (ibv_get_cq_event(conn->channel, &ev_cq, &ev_ctx)) {
		RPMA_LOG_DEBUG_WITH_ERRNO(errno, "ibv_get_cq_event()");
		return RPMA_E_NO_COMPLETION;
	}

	/* acknowledge first, whatever the CQ: an unacknowledged event blocks ibv_destroy_cq() */
	ibv_ack_cq_events(ev_cq, 1);

	struct rpma_cq *found;
	bool found_rcq;
	if (rpma_cq_get_ibv_cq(conn->cq) == ev_cq) {
		found = conn->cq;
		found_rcq = false;
	} else if (conn->rcq != NULL && rpma_cq_get_ibv_cq(conn->rcq) == ev_cq) {
		found = conn->rcq;
		found_rcq = true;
	} else {
		RPMA_LOG_ERROR("ibv_get_cq_event() returned a CQ that is not the connection's");
		return RPMA_E_UNKNOWN;
	}

	int err = ibv_req_notify_cq(ev_cq, 0);
	if (err) {
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_req_notify_cq()");
		*cq = NULL;
		return RPMA_E_PROVIDER;
	}

	*cq = found;
	if (is_rcq != NULL)
		*is_rcq = found_rcq;
	return 0;
}

int rpma_conn_disconnect(struct rpma_conn *conn)
{
	if (conn == NULL)
		return RPMA_E_INVAL;

	if (rdma_disconnect(conn->id)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_disconnect()");
		return RPMA_E_PROVIDER;
	}

	RPMA_LOG_NOTICE("disconnecting");
	return 0;
}

int rpma_conn_delete(struct rpma_conn **conn_ptr)
{
	if (conn_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_conn *conn = *conn_ptr;
	if (conn == NULL)
		return 0;

	/*
	 * The queue pair before its CQs, the CQs before their channel, the ID before its event
	 * channel; what a failed destroy leaves behind still uses its channel, so that stays too.
	 */
	rdma_destroy_qp(conn->id);

	int ret_cq = rpma_cq_delete(&conn->rcq);
	int ret2 = rpma_cq_delete(&conn->cq);
	if (!ret_cq)
		ret_cq = ret2;
	int ret = ret_cq;

	bool id_destroyed = true;
	if (rdma_destroy_id(conn->id)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_destroy_id()");
		ret = RPMA_E_PROVIDER;
		id_destroyed = false;
	}

	if (conn->channel != NULL && !ret_cq) {
		int err = ibv_destroy_comp_channel(conn->channel);
		if (err) {
			RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_destroy_comp_channel()");
			ret = RPMA_E_PROVIDER;
		}
	}

	if (id_destroyed)
		rdma_destroy_event_channel(conn->evch);
	rpma_private_data_delete(&conn->pdata);
	free(conn);
	*conn_ptr = NULL;

	return ret;
}

/* messaging */

int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	int flags, const void *op_context)
{
	if (conn == NULL || flags == 0 || (src == NULL && (offset != 0 || len != 0)))
		return RPMA_E_INVAL;

	return rpma_mr_post_send(conn->id->qp, src, offset, len, flags, IBV_WR_SEND, 0, op_context);
}

int rpma_send_batch(
	struct rpma_conn *conn, const struct rpma_send_desc *descs, unsigned n, unsigned *posted)
{
	if (posted)
		*posted = 0;
	if (conn == NULL || descs == NULL || n == 0 || n > RPMA_SEND_BATCH_MAX)
		return RPMA_E_INVAL;

	return rpma_mr_post_send_chain(conn->id->qp, descs, n, posted);
}

int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
	size_t len, int flags, uint32_t imm, const void *op_context)
{
	if (conn == NULL || flags == 0 || (src == NULL && (offset != 0 || len != 0)))
		return RPMA_E_INVAL;

	return rpma_mr_post_send(
		conn->id->qp, src, offset, len, flags, IBV_WR_SEND_WITH_IMM, imm, op_context);
}

int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	const void *op_context)
{
	if (conn == NULL || (dst == NULL && (offset != 0 || len != 0)))
		return RPMA_E_INVAL;

	return rpma_mr_post_recv(conn->id->qp, dst, offset, len, op_context);
}

int rpma_recv_batch(
	struct rpma_conn *conn, const struct rpma_recv_desc *descs, unsigned n, unsigned *posted)
{
	if (posted)
		*posted = 0;
	if (conn == NULL || descs == NULL || n == 0 || n > RPMA_RECV_BATCH_MAX)
		return RPMA_E_INVAL;

	return rpma_mr_post_recv_chain(conn->id->qp, NULL, descs, n, posted);
}

int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	const void *op_context)
{
	if (conn == NULL || flags == 0)
		return RPMA_E_INVAL;

	/* only the 0-byte form exists: remote memory regions are not implemented */
	if (dst != NULL || src != NULL || dst_offset != 0 || src_offset != 0 || len != 0)
		return RPMA_E_INVAL;

	return rpma_mr_post_write_0(conn->id->qp, flags, op_context);
}
