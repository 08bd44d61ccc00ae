// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_cfg.c -- connection configuration
 *
 * Fields are atomics so that getters and setters may run in different threads without locks.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "conn_cfg.h"

/* librpma's defaults */
#define DEFAULT_Q_SIZE 10
#define DEFAULT_RCQ_SIZE 0 /* no separate receive CQ */
#define DEFAULT_SHARED_CHANNEL false

struct rpma_conn_cfg {
	_Atomic int timeout_ms;
	_Atomic uint32_t cq_size;
	_Atomic uint32_t rcq_size;
	_Atomic uint32_t sq_size;
	_Atomic uint32_t rq_size;
	_Atomic bool shared_channel;
	struct rpma_srq *_Atomic srq;
};

static struct rpma_conn_cfg Default_cfg = {
	.timeout_ms = RPMA_DEFAULT_TIMEOUT_MS,
	.cq_size = DEFAULT_Q_SIZE,
	.rcq_size = DEFAULT_RCQ_SIZE,
	.sq_size = DEFAULT_Q_SIZE,
	.rq_size = DEFAULT_Q_SIZE,
	.shared_channel = DEFAULT_SHARED_CHANNEL,
	.srq = NULL,
};

static int clip_to_int(uint32_t value)
{
	return value > INT_MAX ? INT_MAX : (int)value;
}

/* internal API */

const struct rpma_conn_cfg *rpma_conn_cfg_default(void)
{
	return &Default_cfg;
}

int rpma_conn_cfg_get_cqe(const struct rpma_conn_cfg *cfg)
{
	return clip_to_int(atomic_load(&cfg->cq_size));
}

int rpma_conn_cfg_get_rcqe(const struct rpma_conn_cfg *cfg)
{
	return clip_to_int(atomic_load(&cfg->rcq_size));
}

/* public API */

int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_conn_cfg *cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return RPMA_E_NOMEM;

	atomic_init(&cfg->timeout_ms, atomic_load(&Default_cfg.timeout_ms));
	atomic_init(&cfg->cq_size, atomic_load(&Default_cfg.cq_size));
	atomic_init(&cfg->rcq_size, atomic_load(&Default_cfg.rcq_size));
	atomic_init(&cfg->sq_size, atomic_load(&Default_cfg.sq_size));
	atomic_init(&cfg->rq_size, atomic_load(&Default_cfg.rq_size));
	atomic_init(&cfg->shared_channel, atomic_load(&Default_cfg.shared_channel));
	atomic_init(&cfg->srq, atomic_load(&Default_cfg.srq));

	*cfg_ptr = cfg;
	return 0;
}

int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;

	free(*cfg_ptr);
	*cfg_ptr = NULL;
	return 0;
}

int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms)
{
	if (cfg == NULL || timeout_ms < 0)
		return RPMA_E_INVAL;

	atomic_store(&cfg->timeout_ms, timeout_ms);
	return 0;
}

int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms)
{
	if (cfg == NULL || timeout_ms == NULL)
		return RPMA_E_INVAL;

	*timeout_ms = atomic_load(&cfg->timeout_ms);
	return 0;
}

int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->cq_size, cq_size);
	return 0;
}

int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size)
{
	if (cfg == NULL || cq_size == NULL)
		return RPMA_E_INVAL;

	*cq_size = atomic_load(&cfg->cq_size);
	return 0;
}

int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->rcq_size, rcq_size);
	return 0;
}

int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size)
{
	if (cfg == NULL || rcq_size == NULL)
		return RPMA_E_INVAL;

	*rcq_size = atomic_load(&cfg->rcq_size);
	return 0;
}

int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->sq_size, sq_size);
	return 0;
}

int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size)
{
	if (cfg == NULL || sq_size == NULL)
		return RPMA_E_INVAL;

	*sq_size = atomic_load(&cfg->sq_size);
	return 0;
}

int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->rq_size, rq_size);
	return 0;
}

int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size)
{
	if (cfg == NULL || rq_size == NULL)
		return RPMA_E_INVAL;

	*rq_size = atomic_load(&cfg->rq_size);
	return 0;
}

int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->shared_channel, shared);
	return 0;
}

int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared)
{
	if (cfg == NULL || shared == NULL)
		return RPMA_E_INVAL;

	*shared = atomic_load(&cfg->shared_channel);
	return 0;
}

int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;

	atomic_store(&cfg->srq, srq);
	return 0;
}

int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr)
{
	if (cfg == NULL || srq_ptr == NULL)
		return RPMA_E_INVAL;

	*srq_ptr = atomic_load(&cfg->srq);
	return 0;
}
