/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.h -- what the rest of the library needs from a peer (private)
 */
#ifndef RPMA_PEER_H
#define RPMA_PEER_H

#include <rdma/rdma_cma.h>

#include "librpma.h"

/* rpma_peer_usage2access -- the ibv access flags for an RPMA_MR_USAGE_* combination */
int rpma_peer_usage2access(const struct rpma_peer *peer, int usage);

/*
 * rpma_peer_setup_qp -- create the RC queue pair of a CM ID in the peer's protection domain,
 * sending to cq and receiving to rcq (or cq when rcq is NULL), sized by cfg and attached to
 * cfg's shared RQ when it has one; 0, RPMA_E_INVAL (the shared RQ is another peer's) or
 * RPMA_E_PROVIDER
 */
int rpma_peer_setup_qp(const struct rpma_peer *peer, struct rdma_cm_id *id, struct ibv_cq *cq,
	struct ibv_cq *rcq, const struct rpma_conn_cfg *cfg);

/*
 * rpma_peer_create_srq -- create a shared receive queue of rq_size one-SGE receives in the
 * peer's protection domain; 0 or RPMA_E_PROVIDER
 */
int rpma_peer_create_srq(const struct rpma_peer *peer, uint32_t rq_size, struct ibv_srq **srq_ptr);

/*
 * rpma_peer_mr_reg -- register memory in the peer's protection domain for usage; 0 or
 * RPMA_E_PROVIDER (with an RLIMIT_MEMLOCK hint in the log for ENOMEM and EPERM)
 */
int rpma_peer_mr_reg(const struct rpma_peer *peer, struct ibv_mr **ibv_mr_ptr, void *addr,
	size_t length, int usage);

#endif /* RPMA_PEER_H */
