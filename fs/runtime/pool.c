// SPDX-License-Identifier: BSD-3-Clause
/* pool.c -- the shared pool of request buffers, and the small slots (see pool.h) */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pool.h"

struct pool {
	char *base;
	size_t slot_size;
	unsigned nslots;
	char *small_base;  /* right after the big buffers */
	size_t small_size; /* a small slot's stride: small_fit + POOL_SMALL_ROOM, rounded */
	size_t small_fit;  /* the payload a small slot takes */
	unsigned nsmall;
	size_t bytes; /* the mapping, rounded up to the page size */

	pthread_mutex_t lock;
	pthread_cond_t freed;
	bool closed;
	unsigned nfree;
	unsigned *free; /* a stack: the buffer used last is reused first */
	unsigned nsmall_free;
	unsigned *small_free; /* the small slots' stack, as slot numbers */
};

int pool_new(unsigned nslots, size_t slot_size, struct pool **pool_ptr)
{
	return pool_new_small(nslots, slot_size, 0, 0, pool_ptr);
}

int pool_new_small(unsigned nslots, size_t slot_size, unsigned nsmall, size_t small_size,
	struct pool **pool_ptr)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), big, smalls, bytes, small_fit;
	struct pool *pool;

	if (!pool_ptr || nslots == 0 || slot_size == 0 || (nsmall && small_size == 0))
		return -EINVAL;

	slot_size = (slot_size + page - 1) / page * page;
	small_size = (small_size + 63) / 64 * 64;
	if (small_size > SIZE_MAX - 64 - POOL_SMALL_ROOM)
		return -EOVERFLOW;
	small_fit = small_size;
	if (nsmall)
		small_size = (small_fit + POOL_SMALL_ROOM + 63) / 64 * 64;
	if (slot_size > SIZE_MAX / nslots || (nsmall && small_size > SIZE_MAX / nsmall) ||
		nslots > UINT32_MAX - 1 - nsmall)
		return -EOVERFLOW;
	big = slot_size * nslots;
	smalls = small_size * nsmall;
	if (big > SIZE_MAX - smalls - page)
		return -EOVERFLOW;
	bytes = (big + smalls + page - 1) / page * page;

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->free = calloc(nslots, sizeof(*pool->free));
	pool->small_free = calloc(nsmall ? nsmall : 1, sizeof(*pool->small_free));
	if (!pool->free || !pool->small_free)
		goto nomem;
	pool->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool->base == MAP_FAILED) {
		int err = -errno;

		free(pool->free);
		free(pool->small_free);
		free(pool);
		return err;
	}
	pool->slot_size = slot_size;
	pool->nslots = nslots;
	pool->small_base = pool->base + big;
	pool->small_size = small_size;
	pool->small_fit = small_fit;
	pool->nsmall = nsmall;
	pool->bytes = bytes;
	for (unsigned i = 0; i < nslots; i++)
		pool->free[i] = nslots - 1 - i;
	pool->nfree = nslots;
	for (unsigned i = 0; i < nsmall; i++)
		pool->small_free[i] = nslots + nsmall - 1 - i;
	pool->nsmall_free = nsmall;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->freed, NULL);
	*pool_ptr = pool;
	return 0;
nomem:
	free(pool->free);
	free(pool->small_free);
	free(pool);
	return -ENOMEM;
}

void pool_delete(struct pool **pool_ptr)
{
	struct pool *pool = *pool_ptr;

	if (!pool)
		return;
	munmap(pool->base, pool->bytes);
	pthread_cond_destroy(&pool->freed);
	pthread_mutex_destroy(&pool->lock);
	free(pool->free);
	free(pool->small_free);
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

int pool_copy_small(struct pool *pool, const void *src, size_t len, unsigned *slot)
{
	unsigned got = 0;
	int ret = 0;

	if (len > pool->small_fit || pool->nsmall == 0)
		return -EMSGSIZE;
	pthread_mutex_lock(&pool->lock);
	if (pool->closed)
		ret = -ESHUTDOWN;
	else if (pool->nsmall_free == 0)
		ret = -EAGAIN;
	else
		got = pool->small_free[--pool->nsmall_free];
	pthread_mutex_unlock(&pool->lock);
	if (ret)
		return ret;
	/* the slot is ours alone now: copy outside the lock */
	memcpy(pool_slot_ptr(pool, got), src, len);
	*slot = got;
	return 0;
}

bool pool_is_small(const struct pool *pool, unsigned slot)
{
	return slot >= pool->nslots && slot - pool->nslots < pool->nsmall;
}

void pool_put(struct pool *pool, unsigned slot)
{
	pthread_mutex_lock(&pool->lock);
	if (pool_is_small(pool, slot)) {
		pool->small_free[pool->nsmall_free++] = slot;
	} else {
		pool->free[pool->nfree++] = slot;
		pthread_cond_signal(&pool->freed);
	}
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

	if (p >= pool->base && p < pool->small_base)
		return (unsigned)((size_t)(p - pool->base) / pool->slot_size);
	if (p >= pool->small_base && p < pool->small_base + pool->small_size * pool->nsmall)
		return pool->nslots + (unsigned)((size_t)(p - pool->small_base) / pool->small_size);
	return POOL_NO_SLOT;
}

void *pool_slot_ptr(const struct pool *pool, unsigned slot)
{
	if (slot >= pool->nslots)
		return pool->small_base + (size_t)(slot - pool->nslots) * pool->small_size;
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
	return pool->bytes;
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

unsigned pool_nsmall(const struct pool *pool)
{
	return pool->nsmall;
}

size_t pool_small_size(const struct pool *pool)
{
	return pool->small_fit;
}

unsigned pool_small_free_count(struct pool *pool)
{
	unsigned n;

	pthread_mutex_lock(&pool->lock);
	n = pool->nsmall_free;
	pthread_mutex_unlock(&pool->lock);
	return n;
}
