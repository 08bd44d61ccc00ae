/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * workers.h -- the threads that read FUSE requests into pool buffers
 */
#ifndef RPMAFS_WORKERS_H
#define RPMAFS_WORKERS_H

#include <stdbool.h>

struct pool;
struct fuse_session;
struct workers;

/*
 * workers_start -- start n readers of se, each reading into a buffer of
 * pool; each writes to done_fd when it ends. 0 or a negative errno; on
 * failure *ws_ptr is still set, for workers_stop.
 */
int workers_start(struct pool *pool, struct fuse_session *se, unsigned n, int done_fd,
	struct workers **ws_ptr);

/* workers_stop -- make every reader return, wait for them, free; NULLs the pointer */
void workers_stop(struct workers **ws_ptr);

/*
 * workers_take_buffer -- called by the WRITE handler on the worker thread
 * that read the request: the buffer holding payload now belongs to a
 * message. Returns 0 and its pool slot in *slot; -EINVAL when payload is
 * not in the calling worker's buffer. With nonblock, fails (-EAGAIN)
 * instead of leaving the worker without a buffer when the pool is empty.
 */
int workers_take_buffer(const void *payload, bool nonblock, unsigned *slot);

#endif /* RPMAFS_WORKERS_H */
