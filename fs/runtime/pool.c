// SPDX-License-Identifier: BSD-3-Clause
/* pool.c -- the shared pool of request buffers (see pool.h) */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pool.h"

struct pool {
	char *base;
	size_t slot_size;
	unsigned nslots;

	pthread_mutex_t lock;
	pthread_cond_t freed;
	bool closed;
	unsigned nfree;
	unsigned *free; /* a stack: the buffer used last is reused first */
};

int pool_new(unsigned nslots, size_t slot_size, struct pool **pool_ptr)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct pool *pool;

	if (!pool_ptr || nslots == 0 || slot_size == 0)
		return -EINVAL;

	slot_size = (slot_size + page - 1) / page * page;
	if (slot_size > SIZE_MAX / nslots)
		return -EOVERFLOW;

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->free = calloc(nslots, sizeof(*pool->free));
	if (!pool->free) {
		free(pool);
		return -ENOMEM;
	}
	pool->base = mmap(NULL, slot_size * nslots, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool->base == MAP_FAILED) {
		int err = -errno;

		free(pool->free);
		free(pool);
		return err;
	}
	pool->slot_size = slot_size;
	pool->nslots = nslots;
	for (unsigned i = 0; i < nslots; i++)
		pool->free[i] = nslots - 1 - i;
	pool->nfree = nslots;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->freed, NULL);
	*pool_ptr = pool;
	return 0;
}

void pool_delete(struct pool **pool_ptr)
{
	struct pool *pool = *pool_ptr;

	if (!pool)
		return;
	munmap(pool->base, pool->slot_size * pool->nslots);
	pthread_cond_destroy(&pool->freed);
	pthread_mutex_destroy(&pool->lock);
	free(pool->free);
	free(pool);
	*pool_ptr = NULL;
}

int pool_get(struct pool *pool, bool wait, unsigned *slot)
{
	int ret = 0;

	pthread_mutex_lock(&pool->lock);
	while (!pool->closed && pool->nfree == 0 && wait)
		pthread_cond_wait(&pool->freed, &pool->lock);
	if (pool->closed)
		ret = -ESHUTDOWN;
	else if (pool->nfree == 0)
		ret = -EAGAIN;
	else
		*slot = pool->free[--pool->nfree];
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

void pool_put(struct pool *pool, unsigned slot)
{
	pthread_mutex_lock(&pool->lock);
	pool->free[pool->nfree++] = slot;
	pthread_cond_signal(&pool->freed);
	pthread_mutex_unlock(&pool->lock);
}

void pool_close(struct pool *pool)
{
	pthread_mutex_lock(&pool->lock);
	pool->closed = true;
	pthread_cond_broadcast(&pool->freed);
	pthread_mutex_unlock(&pool->lock);
}

unsigned pool_slot_of(const struct pool *pool, const void *ptr)
{
	const char *p = ptr;

	if (p < pool->base || p >= pool->base + pool->slot_size * pool->nslots)
		return POOL_NO_SLOT;
	return (unsigned)((size_t)(p - pool->base) / pool->slot_size);
}

void *pool_slot_ptr(const struct pool *pool, unsigned slot)
{
	return pool->base + (size_t)slot * pool->slot_size;
}

size_t pool_slot_size(const struct pool *pool)
{
	return pool->slot_size;
}

void *pool_base(const struct pool *pool)
{
	return pool->base;
}

size_t pool_bytes(const struct pool *pool)
{
	return pool->slot_size * pool->nslots;
}

unsigned pool_nslots(const struct pool *pool)
{
	return pool->nslots;
}

unsigned pool_free_count(struct pool *pool)
{
	unsigned n;

	pthread_mutex_lock(&pool->lock);
	n = pool->nfree;
	pthread_mutex_unlock(&pool->lock);
	return n;
}
