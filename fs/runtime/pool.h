/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.h -- the shared pool of request buffers
 *
 * FUSE requests are read straight into these buffers, and a WRITE's payload
 * is sent from where the kernel put it: the buffer then belongs to the
 * message until its completion arrives, and the FUSE worker takes a fresh
 * one. Every buffer is as large as libfuse's read size, so that any request
 * fits. The pool is one mapping, registered once per RDMA device (see
 * devices.c), and shared by all peers.
 */
#ifndef RPMAFS_POOL_H
#define RPMAFS_POOL_H

#include <stdbool.h>
#include <stddef.h>

#define POOL_NO_SLOT ((unsigned)-1)

struct pool;

/*
 * pool_new -- map nslots buffers of slot_size bytes (rounded up to the page
 * size). Returns 0 or a negative errno.
 */
int pool_new(unsigned nslots, size_t slot_size, struct pool **pool_ptr);

/* pool_delete -- unmap the pool; every slot must have been put back. */
void pool_delete(struct pool **pool_ptr);

/*
 * pool_get -- take a free slot. With wait, sleep until one is put back;
 * otherwise -EAGAIN when none is free. -ESHUTDOWN once pool_close() ran.
 */
int pool_get(struct pool *pool, bool wait, unsigned *slot);

/* pool_put -- give a slot back and wake one waiter. */
void pool_put(struct pool *pool, unsigned slot);

/* pool_close -- make pool_get() fail with -ESHUTDOWN and wake every waiter. */
void pool_close(struct pool *pool);

/* pool_slot_of -- the slot holding ptr, or POOL_NO_SLOT if it is not ours. */
unsigned pool_slot_of(const struct pool *pool, const void *ptr);

void *pool_slot_ptr(const struct pool *pool, unsigned slot);
size_t pool_slot_size(const struct pool *pool);
void *pool_base(const struct pool *pool);
size_t pool_bytes(const struct pool *pool);
unsigned pool_nslots(const struct pool *pool);
unsigned pool_free_count(struct pool *pool);

#endif /* RPMAFS_POOL_H */
