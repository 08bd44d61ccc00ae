// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr.c -- local memory registrations and the work requests that use them
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "librpma_ext.h"
#include "log.h"
#include "mr.h"
#include "peer.h"

#define USAGE_ALL                                                                    \
	(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | \
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |      \
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV)

struct rpma_mr_local {
	struct ibv_mr *ibv_mr;
	void *ptr;   /* what the caller registered */
	size_t size; /* (ibv_mr's addr/length are the provider's to fill) */
	int usage;
};

/*
 * check_range -- may qp use mr[offset .. offset + len)? Logged, because these are the checks a
 * caller coming from librpma does not expect.
 */
static int check_range(const struct rpma_mr_local *mr, const struct ibv_pd *pd, size_t offset,
	size_t len, const char *what)
{
	if (offset > mr->size || len > mr->size - offset) {
		RPMA_LOG_ERROR("%s: offset %zu + length %zu is beyond the registered %zu bytes",
			what, offset, len, mr->size);
		return RPMA_E_INVAL;
	}

	if (len > UINT32_MAX) {
		RPMA_LOG_ERROR("%s: length %zu does not fit a work request (at most %u bytes)",
			what, len, UINT32_MAX);
		return RPMA_E_INVAL;
	}

	if (mr->ibv_mr->pd != pd) {
		RPMA_LOG_ERROR("%s: the memory was registered with another peer than the "
			       "connection's or SRQ's (another protection domain)",
			what);
		return RPMA_E_INVAL;
	}

	return 0;
}

static const char *opcode_name(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
		return "IBV_WR_SEND";
	case IBV_WR_SEND_WITH_IMM:
		return "IBV_WR_SEND_WITH_IMM";
	case IBV_WR_RDMA_WRITE:
		return "IBV_WR_RDMA_WRITE";
	default:
		return "?";
	}
}

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad_wr = NULL;

	/* ibv_post_send() returns the errno value itself */
	int err = ibv_post_send(qp, wr, &bad_wr);
	if (err) {
		RPMA_LOG_ERROR_WITH_ERRNO(err,
			"ibv_post_send(qp_num=%u, opcode=%s, length=%u, wr_id=0x%llx, "
			"send_flags=%s)",
			qp->qp_num, opcode_name(wr->opcode),
			wr->num_sge ? wr->sg_list[0].length : 0, (unsigned long long)wr->wr_id,
			(wr->send_flags & IBV_SEND_SIGNALED) ? "IBV_SEND_SIGNALED" : "0");
		return RPMA_E_PROVIDER;
	}

	return 0;
}

/* internal API */

int rpma_mr_post_send(struct ibv_qp *qp, const struct rpma_mr_local *src, size_t offset, size_t len,
	int flags, enum ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	struct ibv_sge sge = {0};
	struct ibv_send_wr wr = {0};

	if (src != NULL) {
		int ret = check_range(src, qp->pd, offset, len, "send");
		if (ret)
			return ret;
	}

	/*
	 * A zero length goes without an SGE: some adapters read an SGE length of 0 as 2 GiB.
	 */
	if (src != NULL && len > 0) {
		sge.addr = (uint64_t)(uintptr_t)src->ptr + offset;
		sge.length = (uint32_t)len;
		sge.lkey = src->ibv_mr->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}

	wr.wr_id = (uint64_t)(uintptr_t)op_context;
	wr.opcode = opcode;
	if (opcode == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htonl(imm);
	wr.send_flags = rpma_flags_signaled(flags) ? IBV_SEND_SIGNALED : 0;

	return post_send(qp, &wr);
}

int rpma_mr_post_send_chain(
	struct ibv_qp *qp, const struct rpma_send_desc *descs, unsigned n, unsigned *posted)
{
	struct ibv_sge sge[RPMA_SEND_BATCH_MAX];
	struct ibv_send_wr wr[RPMA_SEND_BATCH_MAX];
	struct ibv_send_wr *bad_wr = NULL;
	unsigned i;
	int err;

	memset(wr, 0, n * sizeof(wr[0]));
	for (i = 0; i < n; i++) {
		const struct rpma_send_desc *d = &descs[i];

		if (d->flags == 0 || (d->src == NULL && (d->offset != 0 || d->len != 0)))
			return RPMA_E_INVAL;
		if (d->src != NULL) {
			int ret = check_range(d->src, qp->pd, d->offset, d->len, "send");
			if (ret)
				return ret;
		}
		/* a zero length goes without an SGE, as in rpma_mr_post_send() */
		if (d->src != NULL && d->len > 0) {
			sge[i].addr = (uint64_t)(uintptr_t)d->src->ptr + d->offset;
			sge[i].length = (uint32_t)d->len;
			sge[i].lkey = d->src->ibv_mr->lkey;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
		}
		wr[i].wr_id = (uint64_t)(uintptr_t)d->op_context;
		wr[i].opcode = d->with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		if (d->with_imm)
			wr[i].imm_data = htonl(d->imm);
		wr[i].send_flags = rpma_flags_signaled(d->flags) ? IBV_SEND_SIGNALED : 0;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}

	/* ibv_post_send() returns the errno value itself */
	err = ibv_post_send(qp, wr, &bad_wr);
	if (err) {
		unsigned done = bad_wr ? (unsigned)(bad_wr - wr) : 0;

		RPMA_LOG_ERROR_WITH_ERRNO(err,
			"ibv_post_send(qp_num=%u, a chain of %u sends, failed at %u)", qp->qp_num,
			n, done);
		if (posted)
			*posted = done <= n ? done : 0;
		return RPMA_E_PROVIDER;
	}
	if (posted)
		*posted = n;
	return 0;
}

/*
 * fill_recv_wr -- a receive work request into dst[offset .. offset + len), with no SGE for
 * dst == NULL or len == 0 (sge is the caller's and becomes wr's list)
 */
static int fill_recv_wr(struct rpma_mr_local *dst, const struct ibv_pd *pd, size_t offset,
	size_t len, const void *op_context, struct ibv_sge *sge, struct ibv_recv_wr *wr)
{
	if (dst != NULL) {
		int ret = check_range(dst, pd, offset, len, "recv");
		if (ret)
			return ret;
	}

	if (dst != NULL && len > 0) {
		sge->addr = (uint64_t)(uintptr_t)dst->ptr + offset;
		sge->length = (uint32_t)len;
		sge->lkey = dst->ibv_mr->lkey;
		wr->sg_list = sge;
		wr->num_sge = 1;
	}

	wr->wr_id = (uint64_t)(uintptr_t)op_context;
	return 0;
}

int rpma_mr_post_recv(struct ibv_qp *qp, struct rpma_mr_local *dst, size_t offset, size_t len,
	const void *op_context)
{
	struct ibv_sge sge = {0};
	struct ibv_recv_wr wr = {0};
	struct ibv_recv_wr *bad_wr = NULL;

	/* the provider would refuse it with a bare EINVAL; say what to do instead */
	if (qp->srq != NULL) {
		RPMA_LOG_ERROR("recv: the connection receives through a shared RQ; post the "
			       "receive with rpma_srq_recv()");
		return RPMA_E_INVAL;
	}

	int ret = fill_recv_wr(dst, qp->pd, offset, len, op_context, &sge, &wr);
	if (ret)
		return ret;

	int err = ibv_post_recv(qp, &wr, &bad_wr);
	if (err) {
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_post_recv(qp_num=%u, length=%u, wr_id=0x%llx)",
			qp->qp_num, sge.length, (unsigned long long)wr.wr_id);
		return RPMA_E_PROVIDER;
	}

	return 0;
}

int rpma_mr_post_srq_recv(struct ibv_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len,
	const void *op_context)
{
	struct ibv_sge sge = {0};
	struct ibv_recv_wr wr = {0};
	struct ibv_recv_wr *bad_wr = NULL;

	int ret = fill_recv_wr(dst, srq->pd, offset, len, op_context, &sge, &wr);
	if (ret)
		return ret;

	/* ibv_post_srq_recv() returns the errno value itself */
	int err = ibv_post_srq_recv(srq, &wr, &bad_wr);
	if (err) {
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_post_srq_recv(length=%u, wr_id=0x%llx)",
			sge.length, (unsigned long long)wr.wr_id);
		return RPMA_E_PROVIDER;
	}

	return 0;
}

int rpma_mr_post_recv_chain(struct ibv_qp *qp, struct ibv_srq *srq,
	const struct rpma_recv_desc *descs, unsigned n, unsigned *posted)
{
	struct ibv_sge sge[RPMA_RECV_BATCH_MAX];
	struct ibv_recv_wr wr[RPMA_RECV_BATCH_MAX];
	struct ibv_recv_wr *bad_wr = NULL;
	const struct ibv_pd *pd = qp ? qp->pd : srq->pd;
	unsigned i;
	int err;

	if (qp != NULL && qp->srq != NULL) {
		RPMA_LOG_ERROR("recv: the connection receives through a shared RQ; post the "
			       "receives with rpma_srq_recv_batch()");
		return RPMA_E_INVAL;
	}
	memset(wr, 0, n * sizeof(wr[0]));
	for (i = 0; i < n; i++) {
		const struct rpma_recv_desc *d = &descs[i];

		if (d->dst == NULL && (d->offset != 0 || d->len != 0))
			return RPMA_E_INVAL;
		int ret =
			fill_recv_wr(d->dst, pd, d->offset, d->len, d->op_context, &sge[i], &wr[i]);
		if (ret)
			return ret;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}

	/* both return the errno value itself */
	err = qp ? ibv_post_recv(qp, wr, &bad_wr) : ibv_post_srq_recv(srq, wr, &bad_wr);
	if (err) {
		unsigned done = bad_wr ? (unsigned)(bad_wr - wr) : 0;

		RPMA_LOG_ERROR_WITH_ERRNO(err, "%s(a chain of %u receives, failed at %u)",
			qp ? "ibv_post_recv" : "ibv_post_srq_recv", n, done);
		if (posted)
			*posted = done <= n ? done : 0;
		return RPMA_E_PROVIDER;
	}
	if (posted)
		*posted = n;
	return 0;
}

int rpma_mr_post_write_0(struct ibv_qp *qp, int flags, const void *op_context)
{
	/* no SGE, remote address and rkey 0: a zero-length RDMA WRITE checks neither */
	struct ibv_send_wr wr = {0};

	wr.wr_id = (uint64_t)(uintptr_t)op_context;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = rpma_flags_signaled(flags) ? IBV_SEND_SIGNALED : 0;
	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = 0;

	return post_send(qp, &wr);
}

/* public API */

int rpma_mr_reg(
	struct rpma_peer *peer, void *ptr, size_t size, int usage, struct rpma_mr_local **mr_ptr)
{
	if (peer == NULL || ptr == NULL || size == 0 || mr_ptr == NULL)
		return RPMA_E_INVAL;

	if (usage == 0 || (usage & ~USAGE_ALL) != 0)
		return RPMA_E_INVAL;

	struct rpma_mr_local *mr = malloc(sizeof(*mr));
	if (mr == NULL)
		return RPMA_E_NOMEM;

	int ret = rpma_peer_mr_reg(peer, &mr->ibv_mr, ptr, size, usage);
	if (ret) {
		free(mr);
		return ret;
	}

	mr->ptr = ptr;
	mr->size = size;
	mr->usage = usage;
	*mr_ptr = mr;
	return 0;
}

int rpma_mr_dereg(struct rpma_mr_local **mr_ptr)
{
	if (mr_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_mr_local *mr = *mr_ptr;
	if (mr == NULL)
		return 0;

	int err = ibv_dereg_mr(mr->ibv_mr);
	if (err) {
		/* the registration still exists: keep it so the caller can retry */
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_dereg_mr()");
		return RPMA_E_PROVIDER;
	}

	free(mr);
	*mr_ptr = NULL;
	return 0;
}

int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr)
{
	if (mr == NULL || ptr == NULL)
		return RPMA_E_INVAL;

	*ptr = mr->ptr;
	return 0;
}

int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size)
{
	if (mr == NULL || size == NULL)
		return RPMA_E_INVAL;

	*size = mr->size;
	return 0;
}
