/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * workers.h -- the threads that read FUSE requests into pool buffers
 */
#ifndef RPMAFS_WORKERS_H
#define RPMAFS_WORKERS_H

#include <stdbool.h>

struct mount;

/* workers_start -- start m->nworkers readers; 0 or a negative errno */
int workers_start(struct mount *m, int done_fd);

/* workers_stop -- make every reader return and wait for them */
void workers_stop(struct mount *m);

/*
 * workers_take_buffer -- called by the WRITE handler on the worker thread
 * that read the request: the buffer holding payload now belongs to a
 * message. Returns its pool slot, or POOL_NO_SLOT when payload is not in the
 * calling worker's buffer. With nonblock, fails (-EAGAIN) instead of leaving
 * the worker without a buffer when the pool is empty.
 */
int workers_take_buffer(struct mount *m, const void *payload, bool nonblock, unsigned *slot);

#endif /* RPMAFS_WORKERS_H */
