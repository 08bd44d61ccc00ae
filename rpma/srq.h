/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq.h -- what connection requests need from a shared receive queue (private)
 */
#ifndef RPMA_SRQ_H
#define RPMA_SRQ_H

#include <infiniband/verbs.h>

#include "librpma.h"

/* rpma_srq_get_ibv_srq -- the verbs SRQ inside */
struct ibv_srq *rpma_srq_get_ibv_srq(const struct rpma_srq *srq);

#endif /* RPMA_SRQ_H */
