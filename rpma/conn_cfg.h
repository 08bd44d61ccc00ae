/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_cfg.h -- connection configuration as the rest of the library reads it (private)
 */
#ifndef RPMA_CONN_CFG_H
#define RPMA_CONN_CFG_H

#include "librpma.h"

/* the configuration used when the caller passes NULL (never modified) */
const struct rpma_conn_cfg *rpma_conn_cfg_default(void);

/* the CQ sizes as the int ibv_create_cq() takes, clipped to INT_MAX */
int rpma_conn_cfg_get_cqe(const struct rpma_conn_cfg *cfg);
int rpma_conn_cfg_get_rcqe(const struct rpma_conn_cfg *cfg);

#endif /* RPMA_CONN_CFG_H */
