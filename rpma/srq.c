// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq.c -- shared receive queues: one pool of receives for many connections
 *
 * The SRQ lives in its peer's protection domain; a connection whose configuration names it
 * (rpma_conn_cfg_set_srq()) gets a queue pair attached to it, with no receive queue of its own.
 */
#include <errno.h>
#include <stdlib.h>

#include "cq.h"
#include "librpma_ext.h"
#include "log.h"
#include "mr.h"
#include "peer.h"
#include "srq.h"
#include "srq_cfg.h"

struct rpma_srq {
	struct ibv_srq *ibv_srq;
	struct rpma_cq *rcq; /* NULL when made with rcq_size 0 */
};

/* internal API */

struct ibv_srq *rpma_srq_get_ibv_srq(const struct rpma_srq *srq)
{
	return srq->ibv_srq;
}

/* public API */

int rpma_srq_new(struct rpma_peer *peer, const struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr)
{
	if (peer == NULL || srq_ptr == NULL)
		return RPMA_E_INVAL;

	if (cfg == NULL)
		cfg = rpma_srq_cfg_default();

	uint32_t rq_size = 0;
	(void)rpma_srq_cfg_get_rq_size(cfg, &rq_size);
	int rcqe = rpma_srq_cfg_get_rcqe(cfg);

	struct rpma_srq *srq = malloc(sizeof(*srq));
	if (srq == NULL)
		return RPMA_E_NOMEM;

	int ret = rpma_peer_create_srq(peer, rq_size, &srq->ibv_srq);
	if (ret)
		goto err_free;

	srq->rcq = NULL;
	if (rcqe > 0) {
		/* every posted receive may complete before the first is reaped */
		if ((uint32_t)rcqe < rq_size)
			RPMA_LOG_WARNING(
				"the SRQ's receive CQ (%d) is smaller than the SRQ (%u): it "
				"overruns when more receives complete before rpma_cq_get_wc()",
				rcqe, (unsigned)rq_size);
		ret = rpma_cq_new(srq->ibv_srq->context, rcqe, NULL, &srq->rcq);
		if (ret)
			goto err_destroy_srq;
	}

	*srq_ptr = srq;
	return 0;

err_destroy_srq:
	(void)ibv_destroy_srq(srq->ibv_srq);
err_free:
	free(srq);
	return ret;
}

int rpma_srq_delete(struct rpma_srq **srq_ptr)
{
	if (srq_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_srq *srq = *srq_ptr;
	if (srq == NULL)
		return 0;

	/*
	 * The SRQ first: while a queue pair is attached it fails (EBUSY), and then the receive
	 * CQ is still in use by that queue pair too, so nothing is touched and the call can be
	 * repeated once the connections are gone.
	 */
	int err = ibv_destroy_srq(srq->ibv_srq);
	if (err) {
		RPMA_LOG_ERROR_WITH_ERRNO(err, "ibv_destroy_srq()");
		return RPMA_E_PROVIDER;
	}

	int ret = rpma_cq_delete(&srq->rcq);

	free(srq);
	*srq_ptr = NULL;
	return ret;
}

int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len,
	const void *op_context)
{
	if (srq == NULL || (dst == NULL && (offset != 0 || len != 0)))
		return RPMA_E_INVAL;

	return rpma_mr_post_srq_recv(srq->ibv_srq, dst, offset, len, op_context);
}

int rpma_srq_recv_batch(
	struct rpma_srq *srq, const struct rpma_recv_desc *descs, unsigned n, unsigned *posted)
{
	if (posted)
		*posted = 0;
	if (srq == NULL || descs == NULL || n == 0 || n > RPMA_RECV_BATCH_MAX)
		return RPMA_E_INVAL;

	return rpma_mr_post_recv_chain(NULL, srq->ibv_srq, descs, n, posted);
}

int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr)
{
	if (srq == NULL || rcq_ptr == NULL)
		return RPMA_E_INVAL;

	*rcq_ptr = srq->rcq;
	return 0;
}
