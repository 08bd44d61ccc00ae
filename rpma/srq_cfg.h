/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq_cfg.h -- shared receive queue configuration as rpma_srq_new() reads it (private)
 */
#ifndef RPMA_SRQ_CFG_H
#define RPMA_SRQ_CFG_H

#include "librpma.h"

/* the configuration used when the caller passes NULL (never modified) */
const struct rpma_srq_cfg *rpma_srq_cfg_default(void);

/* the receive CQ size as the int ibv_create_cq() takes, clipped to INT_MAX */
int rpma_srq_cfg_get_rcqe(const struct rpma_srq_cfg *cfg);

#endif /* RPMA_SRQ_CFG_H */
