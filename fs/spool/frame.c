// SPDX-License-Identifier: BSD-3-Clause
/* frame.c -- a file-framed message being assembled in a pool slot (see frame.h) */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "runtime/pool.h"

struct frame {
	struct pool *pool;
	struct frame_budget *budget;
	/* requests of one open file may be handled by different workers */
	pthread_mutex_t lock;
	unsigned slot;	 /* POOL_NO_SLOT until the first byte */
	uint64_t origin; /* file offset of the message's first byte */
	bool placed;	 /* origin is known: 0 at first, then the first write's offset */
	uint64_t len;	 /* the furthest end written, from origin */
	bool dirty;	 /* written since the last take */
	int failed;	 /* a write failed: the errno close returns; nothing of it is sent */
};

void frame_budget_init(struct frame_budget *b, unsigned slots)
{
	atomic_init(&b->held, 0);
	b->max = slots > 1 ? slots - 1 : 1;
}

int frame_new(struct pool *pool, struct frame_budget *budget, struct frame **frame_ptr)
{
	struct frame *fr = calloc(1, sizeof(*fr));

	if (!fr)
		return -ENOMEM;
	fr->pool = pool;
	fr->budget = budget;
	fr->slot = POOL_NO_SLOT;
	fr->placed = true; /* the first message starts at offset 0: holes before a seek */
	pthread_mutex_init(&fr->lock, NULL);
	*frame_ptr = fr;
	return 0;
}

static void put_slot(struct frame *fr)
{
	if (fr->slot == POOL_NO_SLOT)
		return;
	pool_put(fr->pool, fr->slot);
	fr->slot = POOL_NO_SLOT;
	atomic_fetch_sub(&fr->budget->held, 1);
}

void frame_delete(struct frame **frame_ptr)
{
	struct frame *fr = *frame_ptr;

	if (!fr)
		return;
	put_slot(fr);
	pthread_mutex_destroy(&fr->lock);
	free(fr);
	*frame_ptr = NULL;
}

/* a slot for the message's bytes, within the budget; never waits */
static int get_slot(struct frame *fr)
{
	unsigned held;

	if (fr->slot != POOL_NO_SLOT)
		return 0;
	held = atomic_fetch_add(&fr->budget->held, 1);
	if (held >= fr->budget->max || pool_get(fr->pool, false, &fr->slot)) {
		atomic_fetch_sub(&fr->budget->held, 1);
		fr->slot = POOL_NO_SLOT;
		return -ENOBUFS;
	}
	return 0;
}

static uint64_t cap(const struct frame *fr, uint32_t limit)
{
	size_t slot = pool_slot_size(fr->pool);

	return limit < slot ? limit : slot;
}

/*
 * the message is abandoned: err is what its writes fail with from now on,
 * and close gets the same (EMSGSIZE for EFBIG: the message was too large)
 */
static int abandon_locked(struct frame *fr, int err)
{
	fr->failed = err == EFBIG ? EMSGSIZE : err;
	put_slot(fr);
	return -err;
}

/* what a write to an abandoned message fails with */
static int failed_errno(const struct frame *fr)
{
	return fr->failed == EMSGSIZE ? EFBIG : fr->failed;
}

/* make the message end (from origin) at least at end: zeros in between */
static int extend_locked(struct frame *fr, uint64_t end, uint32_t limit)
{
	if (fr->failed)
		return -failed_errno(fr);
	if (end > cap(fr, limit))
		return abandon_locked(fr, EFBIG);
	if (get_slot(fr))
		return abandon_locked(fr, ENOBUFS);
	if (end > fr->len) {
		memset((char *)pool_slot_ptr(fr->pool, fr->slot) + fr->len, 0, end - fr->len);
		fr->len = end;
	}
	return 0;
}

int frame_write(
	struct frame *fr, uint64_t off, bool append, const void *buf, size_t size, uint32_t limit)
{
	uint64_t at;
	int ret;

	pthread_mutex_lock(&fr->lock);
	if (append)
		off = fr->origin + fr->len;
	if (!fr->placed) {
		fr->origin = off;
		fr->placed = true;
	}
	if (fr->failed) {
		ret = -failed_errno(fr);
		pthread_mutex_unlock(&fr->lock);
		return ret;
	}
	if (off < fr->origin) {
		ret = abandon_locked(fr, EINVAL);
		pthread_mutex_unlock(&fr->lock);
		return ret;
	}
	at = off - fr->origin;
	/* zeros only for the gap; the written bytes overwrite their part */
	ret = extend_locked(fr, at > fr->len ? at : fr->len, limit);
	if (!ret && at + size > cap(fr, limit))
		ret = abandon_locked(fr, EFBIG);
	if (!ret) {
		memcpy((char *)pool_slot_ptr(fr->pool, fr->slot) + at, buf, size);
		if (at + size > fr->len)
			fr->len = at + size;
		fr->dirty = true;
	}
	pthread_mutex_unlock(&fr->lock);
	return ret;
}

int frame_resize(struct frame *fr, uint64_t size, uint32_t limit)
{
	int ret = 0;

	pthread_mutex_lock(&fr->lock);
	fr->placed = true;
	if (fr->failed) {
		ret = -failed_errno(fr);
	} else if (size < fr->origin) {
		ret = abandon_locked(fr, EINVAL);
	} else if (size - fr->origin < fr->len) {
		fr->len = size - fr->origin;
		fr->dirty = true;
	} else if (size - fr->origin > fr->len) {
		ret = extend_locked(fr, size - fr->origin, limit);
		if (!ret)
			fr->dirty = true;
	}
	pthread_mutex_unlock(&fr->lock);
	return ret;
}

int frame_take(struct frame *fr, unsigned *slot, uint32_t *len)
{
	int ret = 0;

	pthread_mutex_lock(&fr->lock);
	if (fr->failed) {
		ret = -fr->failed;
		put_slot(fr);
	} else if (fr->dirty && fr->len) {
		ret = 1;
		*slot = fr->slot;
		*len = (uint32_t)fr->len;
		fr->slot = POOL_NO_SLOT;
		atomic_fetch_sub(&fr->budget->held, 1);
	}
	if (ret) {
		/* the next message starts at its first write (or where this one ended) */
		fr->origin += fr->len;
		fr->placed = false;
		fr->len = 0;
		fr->failed = 0;
	}
	fr->dirty = false;
	pthread_mutex_unlock(&fr->lock);
	return ret;
}

void frame_abandon(struct frame *fr, int err)
{
	pthread_mutex_lock(&fr->lock);
	if (!fr->failed)
		abandon_locked(fr, err);
	pthread_mutex_unlock(&fr->lock);
}

uint32_t frame_pending(struct frame *fr)
{
	uint32_t n;

	pthread_mutex_lock(&fr->lock);
	n = fr->failed || !fr->dirty ? 0 : (uint32_t)fr->len;
	pthread_mutex_unlock(&fr->lock);
	return n;
}
