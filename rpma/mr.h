/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.h -- posting work requests that use local registrations (private)
 *
 * The checks that go beyond librpma live here because only mr.c sees inside a registration:
 * the range must lie within the registered memory (computed without overflow), a length must
 * fit the 32-bit SGE, and the registration's protection domain must be the queue pair's.
 */
#ifndef RPMA_MR_H
#define RPMA_MR_H

#include <infiniband/verbs.h>

#include "librpma.h"

/* the flags-to-signaled rule shared by every posting function */
static inline bool rpma_flags_signaled(int flags)
{
	return (flags & RPMA_F_COMPLETION_ALWAYS) == RPMA_F_COMPLETION_ALWAYS;
}

/*
 * rpma_mr_post_send -- post IBV_WR_SEND or IBV_WR_SEND_WITH_IMM (imm in host order) of
 * src[offset .. offset + len); src == NULL or len == 0 posts no SGE; 0, RPMA_E_INVAL or
 * RPMA_E_PROVIDER
 */
int rpma_mr_post_send(struct ibv_qp *qp, const struct rpma_mr_local *src, size_t offset, size_t len,
	int flags, enum ibv_wr_opcode opcode, uint32_t imm, const void *op_context);

/*
 * rpma_mr_post_send_chain -- post n sends (IBV_WR_SEND or _WITH_IMM) as one chain (rpma_send_batch() in
 * librpma_ext.h): all checked first; 0, RPMA_E_INVAL (nothing posted) or RPMA_E_PROVIDER
 * with *posted the number taken before the failed one
 */
struct rpma_send_desc;
int rpma_mr_post_send_chain(
	struct ibv_qp *qp, const struct rpma_send_desc *descs, unsigned n, unsigned *posted);

/*
 * rpma_mr_post_recv_chain -- post n receives as one chain on qp's receive queue (qp not
 * NULL) or on srq (rpma_recv_batch(), rpma_srq_recv_batch() in librpma_ext.h): all
 * checked first; 0, RPMA_E_INVAL (nothing posted) or RPMA_E_PROVIDER with *posted the
 * number taken before the failed one
 */
struct rpma_recv_desc;
int rpma_mr_post_recv_chain(struct ibv_qp *qp, struct ibv_srq *srq,
	const struct rpma_recv_desc *descs, unsigned n, unsigned *posted);

/*
 * rpma_mr_post_recv -- post a receive into dst[offset .. offset + len); dst == NULL or
 * len == 0 posts no SGE; 0, RPMA_E_INVAL (also for a queue pair on a shared receive queue) or
 * RPMA_E_PROVIDER
 */
int rpma_mr_post_recv(struct ibv_qp *qp, struct rpma_mr_local *dst, size_t offset, size_t len,
	const void *op_context);

/*
 * rpma_mr_post_srq_recv -- post a receive into dst[offset .. offset + len) on a shared receive
 * queue, as rpma_mr_post_recv(); 0, RPMA_E_INVAL or RPMA_E_PROVIDER
 */
int rpma_mr_post_srq_recv(struct ibv_srq *srq, struct rpma_mr_local *dst, size_t offset,
	size_t len, const void *op_context);

/* rpma_mr_post_write_0 -- post an RDMA WRITE with no SGE; 0 or RPMA_E_PROVIDER */
int rpma_mr_post_write_0(struct ibv_qp *qp, int flags, const void *op_context);

#endif /* RPMA_MR_H */
