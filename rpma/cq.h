/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq.h -- completion queues as the connection code creates and uses them (private)
 */
#ifndef RPMA_CQ_H
#define RPMA_CQ_H

#include <infiniband/verbs.h>

#include "librpma.h"

/*
 * rpma_cq_new -- create a CQ of cqe entries with its own completion channel, or on
 * shared_channel when it is not NULL (the channel then stays the caller's), and arm it so the
 * first completion raises an event; 0, RPMA_E_NOMEM or RPMA_E_PROVIDER
 */
int rpma_cq_new(struct ibv_context *ibv_ctx, int cqe, struct ibv_comp_channel *shared_channel,
	struct rpma_cq **cq_ptr);

/*
 * rpma_cq_delete -- destroy the CQ and its own completion channel and free *cq_ptr (NULL is a
 * no-op); *cq_ptr is freed even on failure, but when the CQ cannot be destroyed its channel is
 * left too (it is still in use); 0 or RPMA_E_PROVIDER
 */
int rpma_cq_delete(struct rpma_cq **cq_ptr);

/* rpma_cq_get_ibv_cq -- the verbs CQ inside */
struct ibv_cq *rpma_cq_get_ibv_cq(const struct rpma_cq *cq);

#endif /* RPMA_CQ_H */
