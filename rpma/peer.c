// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer.c -- a peer: one protection domain on one RDMA device
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "conn_cfg.h"
#include "log.h"
#include "peer.h"
#include "srq.h"

/* one scatter/gather element per work request is all the messaging API ever posts */
#define RPMA_MAX_SGE 1

struct rpma_peer {
	struct ibv_pd *pd;
};

/* internal API */

int rpma_peer_usage2access(const struct rpma_peer *peer, int usage)
{
	enum ibv_transport_type transport = peer->pd->context->device->transport_type;
	int access = 0;

	/* remote reads serve both reading and the read-based flush emulation */
	if (usage & (RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		access |= IBV_ACCESS_REMOTE_READ;

	if (usage & RPMA_MR_USAGE_READ_DST) {
		access |= IBV_ACCESS_LOCAL_WRITE;
		/* iWARP carries a READ response as a WRITE into the requester's memory */
		if (transport == IBV_TRANSPORT_IWARP)
			access |= IBV_ACCESS_REMOTE_WRITE;
	}

	if (usage & RPMA_MR_USAGE_WRITE_SRC)
		access |= IBV_ACCESS_LOCAL_WRITE;

	/* verbs refuse REMOTE_WRITE without LOCAL_WRITE */
	if (usage & RPMA_MR_USAGE_WRITE_DST)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;

	/* the adapter writes received messages into the buffer */
	if (usage & RPMA_MR_USAGE_RECV)
		access |= IBV_ACCESS_LOCAL_WRITE;

	/* RPMA_MR_USAGE_SEND: the adapter only reads local memory, which needs no right */

	return access;
}

int rpma_peer_setup_qp(const struct rpma_peer *peer, struct rdma_cm_id *id, struct ibv_cq *cq,
	struct ibv_cq *rcq, const struct rpma_conn_cfg *cfg)
{
	uint32_t sq_size = 0;
	uint32_t rq_size = 0;
	struct rpma_srq *srq = NULL;
	(void)rpma_conn_cfg_get_sq_size(cfg, &sq_size);
	(void)rpma_conn_cfg_get_rq_size(cfg, &rq_size);
	(void)rpma_conn_cfg_get_srq(cfg, &srq);

	struct ibv_srq *ibv_srq = srq ? rpma_srq_get_ibv_srq(srq) : NULL;
	if (ibv_srq != NULL) {
		/* verbs want the QP and its SRQ in one protection domain */
		if (ibv_srq->pd != peer->pd) {
			RPMA_LOG_ERROR("the connection configuration's shared RQ was made with "
				       "another peer (another protection domain)");
			return RPMA_E_INVAL;
		}
		/* the QP has no receive queue of its own: its size is not asked for */
		rq_size = 0;
	}

	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = rcq ? rcq : cq,
		.srq = ibv_srq,
		.cap =
			{
				.max_send_wr = sq_size,
				.max_recv_wr = rq_size,
				.max_send_sge = RPMA_MAX_SGE,
				.max_recv_sge = RPMA_MAX_SGE,
				.max_inline_data = 0,
			},
		.qp_type = IBV_QPT_RC,
		/* each work request says whether it wants a completion on success */
		.sq_sig_all = 0,
	};

	if (rdma_create_qp(id, peer->pd, &attr)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno,
			"rdma_create_qp(max_send_wr=%" PRIu32 ", max_recv_wr=%" PRIu32
			", max_sge=%d, IBV_QPT_RC%s)",
			sq_size, rq_size, RPMA_MAX_SGE, ibv_srq ? ", with a shared RQ" : "");
		return RPMA_E_PROVIDER;
	}

	return 0;
}

int rpma_peer_create_srq(const struct rpma_peer *peer, uint32_t rq_size, struct ibv_srq **srq_ptr)
{
	struct ibv_srq_init_attr attr = {
		.srq_context = NULL,
		.attr =
			{
				.max_wr = rq_size,
				.max_sge = RPMA_MAX_SGE,
				/* no limit event: nothing here waits for IBV_EVENT_SRQ_LIMIT_REACHED */
				.srq_limit = 0,
			},
	};

	struct ibv_srq *srq = ibv_create_srq(peer->pd, &attr);
	if (srq == NULL) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "ibv_create_srq(max_wr=%" PRIu32 ", max_sge=%d)",
			rq_size, RPMA_MAX_SGE);
		return RPMA_E_PROVIDER;
	}

	*srq_ptr = srq;
	return 0;
}

int rpma_peer_mr_reg(const struct rpma_peer *peer, struct ibv_mr **ibv_mr_ptr, void *addr,
	size_t length, int usage)
{
	int access = rpma_peer_usage2access(peer, usage);

	/* the parentheses call the function, not rdma-core's ibv_reg_mr() macro */
	struct ibv_mr *mr = (ibv_reg_mr)(peer->pd, addr, length, access);
	if (mr != NULL) {
		*ibv_mr_ptr = mr;
		return 0;
	}

	int err = errno;
	if (err == ENOMEM || err == EPERM) {
		struct rlimit lim;
		char limit[32] = "unknown";
		if (getrlimit(RLIMIT_MEMLOCK, &lim) == 0) {
			if (lim.rlim_cur == RLIM_INFINITY)
				(void)snprintf(limit, sizeof(limit), "unlimited");
			else
				(void)snprintf(limit, sizeof(limit), "%llu bytes",
					(unsigned long long)lim.rlim_cur);
		}
		RPMA_LOG_ERROR_WITH_ERRNO(err,
			"ibv_reg_mr(addr=%p, length=%zu, access=0x%x) failed; registered memory "
			"is locked and counts against RLIMIT_MEMLOCK (soft limit %s) unless the "
			"process has CAP_IPC_LOCK",
			addr, length, (unsigned)access, limit);
	} else {
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_reg_mr(addr=%p, length=%zu, access=0x%x)", addr,
			length, (unsigned)access);
	}

	return RPMA_E_PROVIDER;
}

/* public API */

int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr)
{
	if (ibv_ctx == NULL || peer_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_peer *peer = malloc(sizeof(*peer));
	if (peer == NULL)
		return RPMA_E_NOMEM;

	/* ibv_alloc_pd(3) does not document errno; clear it to tell "not set" apart */
	errno = 0;
	peer->pd = ibv_alloc_pd(ibv_ctx);
	if (peer->pd == NULL) {
		int err = errno;
		free(peer);
		if (err == 0) {
			RPMA_LOG_ERROR("ibv_alloc_pd() failed without an errno");
			return RPMA_E_UNKNOWN;
		}
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_alloc_pd()");
		return err == ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}

	*peer_ptr = peer;
	return 0;
}

int rpma_peer_delete(struct rpma_peer **peer_ptr)
{
	if (peer_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_peer *peer = *peer_ptr;
	if (peer == NULL)
		return 0;

	int err = ibv_dealloc_pd(peer->pd);
	if (err) {
		/* still in use: keep the peer so the caller can release the users and retry */
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_dealloc_pd()");
		return RPMA_E_PROVIDER;
	}

	free(peer);
	*peer_ptr = NULL;
	return 0;
}
