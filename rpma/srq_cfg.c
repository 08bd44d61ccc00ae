// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq_cfg.c -- shared receive queue configuration
 *
 * Fields are atomics so that getters and setters may run in different threads without locks.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "srq_cfg.h"

/*
 * librpma 1.3's defaults as its manual gives them (rpma_srq_cfg_new(3)); its code has used 20
 * since 1.2 (Debian's 1.2.0 hands out 20/20). The manual's are never smaller.
 */
#define DEFAULT_SRQ_RQ_SIZE 100
#define DEFAULT_SRQ_RCQ_SIZE 100

struct rpma_srq_cfg {
	_Atomic uint32_t rq_size;
	_Atomic uint32_t rcq_size;
};

static struct rpma_srq_cfg Default_srq_cfg = {
	.rq_size = DEFAULT_SRQ_RQ_SIZE,
	.rcq_size = DEFAULT_SRQ_RCQ_SIZE,
};

/* internal API */

const struct rpma_srq_cfg *rpma_srq_cfg_default(void)
{
	return &Default_srq_cfg;
}

int rpma_srq_cfg_get_rcqe(const struct rpma_srq_cfg *cfg)
{
	uint32_t rcq_size = atomic_load(&cfg->rcq_size);
	return rcq_size > INT_MAX ? INT_MAX : (int)rcq_size;
}

/* public API */

int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_srq_cfg *cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return RPMA_E_NOMEM;

	atomic_init(&cfg->rq_size, atomic_load(&Default_srq_cfg.rq_size));
	atomic_init(&cfg->rcq_size, atomic_load(&Default_srq_cfg.rcq_size));

	*cfg_ptr = cfg;
	return 0;
}

int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;

	free(*cfg_ptr);
	*cfg_ptr = NULL;
	return 0;
}

int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->rq_size, rq_size);
	return 0;
}

int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size)
{
	if (cfg == NULL || rq_size == NULL)
		return RPMA_E_INVAL;

	*rq_size = atomic_load(&cfg->rq_size);
	return 0;
}

int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->rcq_size, rcq_size);
	return 0;
}

int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size)
{
	if (cfg == NULL || rcq_size == NULL)
		return RPMA_E_INVAL;

	*rcq_size = atomic_load(&cfg->rcq_size);
	return 0;
}
