/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.h -- the shared pool of request buffers, and the small slots
 *
 * FUSE requests are read straight into the big buffers, and a WRITE's
 * payload is sent from where the kernel put it: the buffer then belongs to
 * the message until its completion arrives, and the FUSE worker takes a
 * fresh one. Every big buffer is as large as libfuse's read size, so that
 * any request fits.
 *
 * The small slots (a few KiB each, after the big buffers in the same
 * mapping) hold the payload of a small write, copied out of the request
 * buffer (pool_copy_small), so that the big buffer goes back to FUSE at
 * once and a 64-byte message does not hold a megabyte (docs/design.md
 * §4.5). Slot numbers are one space: 0 .. nslots-1 are the big buffers,
 * nslots .. nslots+nsmall-1 the small slots; pool_put() takes either.
 *
 * The pool is one mapping, registered once per RDMA device (see
 * devices.c), and shared by all peers.
 */
#ifndef RPMAFS_POOL_H
#define RPMAFS_POOL_H

#include <stdbool.h>
#include <stddef.h>

#define POOL_NO_SLOT ((unsigned)-1)

/* a small slot: a payload of up to this many bytes is copied into one */
#define POOL_SMALL_SIZE 4096u
/*
 * bytes every small slot has beyond its payload: an authenticated SEND's
 * tag goes right after the payload, in the same registered buffer
 * (RPMAFS_AUTH_TAG_BYTES, fs/link/linkauth.h). Big buffers need none of
 * their own: they are larger than the largest message by 4 KiB.
 */
#define POOL_SMALL_ROOM 16u

struct pool;

/*
 * pool_new -- map nslots buffers of slot_size bytes (rounded up to the page
 * size), and no small slots. Returns 0 or a negative errno.
 */
int pool_new(unsigned nslots, size_t slot_size, struct pool **pool_ptr);

/*
 * pool_new_small -- as pool_new, with nsmall small slots that take a
 * payload of small_size bytes (rounded up to 64, a cache line) and have
 * POOL_SMALL_ROOM bytes more (the slot rounded up to 64 again) after the
 * big buffers, in the same mapping. nsmall may be 0.
 */
int pool_new_small(unsigned nslots, size_t slot_size, unsigned nsmall, size_t small_size,
	struct pool **pool_ptr);

/* pool_delete -- unmap the pool; every slot must have been put back. */
void pool_delete(struct pool **pool_ptr);

/*
 * pool_get -- take a free big buffer. With wait, sleep until one is put
 * back; otherwise -EAGAIN when none is free. -ESHUTDOWN once pool_close() ran.
 */
int pool_get(struct pool *pool, bool wait, unsigned *slot);

/*
 * pool_copy_small -- copy the len bytes at src into a free small slot, which
 * the caller then owns (pool_put gives it back). Never waits. -EMSGSIZE when
 * len does not fit a small slot (or there are none), -EAGAIN when every one
 * is taken, -ESHUTDOWN once pool_close() ran.
 */
int pool_copy_small(struct pool *pool, const void *src, size_t len, unsigned *slot);

/* pool_put -- give a slot (big or small) back; a big one wakes one waiter. */
void pool_put(struct pool *pool, unsigned slot);

/* pool_close -- make pool_get() fail with -ESHUTDOWN and wake every waiter. */
void pool_close(struct pool *pool);

/* pool_slot_of -- the slot (big or small) holding ptr, or POOL_NO_SLOT if it is not ours. */
unsigned pool_slot_of(const struct pool *pool, const void *ptr);

/* pool_is_small -- whether slot is a small slot */
bool pool_is_small(const struct pool *pool, unsigned slot);

void *pool_slot_ptr(const struct pool *pool, unsigned slot);
/* the big buffers' size */
size_t pool_slot_size(const struct pool *pool);
void *pool_base(const struct pool *pool);
/* the whole mapping: big buffers and small slots */
size_t pool_bytes(const struct pool *pool);
/* big buffers, and how many are free */
unsigned pool_nslots(const struct pool *pool);
unsigned pool_free_count(struct pool *pool);
/* small slots, their size, and how many are free */
unsigned pool_nsmall(const struct pool *pool);
size_t pool_small_size(const struct pool *pool);
unsigned pool_small_free_count(struct pool *pool);

#endif /* RPMAFS_POOL_H */
