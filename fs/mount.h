/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mount.h -- the state of one mounted spool directory
 */
#ifndef RPMAFS_MOUNT_H
#define RPMAFS_MOUNT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include "spool.h"

/*
 * The largest write FUSE hands over in one request whatever the alignment
 * of the writer's buffer: the kernel passes at most 256 pages per request,
 * and a buffer that does not start on a page boundary needs one of them for
 * its first partial page. max_write is set one byte above this, so a write
 * larger than the limit still arrives whole (and fails with EMSGSIZE)
 * instead of being split into two messages.
 */
#define FUSE_ATOMIC_WRITE_MAX (256u * 4096u - 4096u)

/* reconnection back-off: doubled after each failure, up to the cap */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_CAP_MS 5000

struct pool;
struct devices;
struct engine;
struct worker;

struct mount {
	struct rpmafs_cfg *cfg;
	char *mountpoint;
	struct fuse_session *se;
	struct pool *pool;
	struct devices *devices;
	struct engine *engine;

	unsigned nspools;
	struct spool *spools;

	/*
	 * Workers take turns reading /dev/fuse and handle each request before
	 * passing the turn on, so messages enter their spool in the order the
	 * kernel queued the writes; only waiting for a buffer happens outside.
	 */
	pthread_mutex_t turn;
	unsigned nworkers;
	struct worker *workers;

	uid_t uid;
	gid_t gid;
	bool allow_other;
	struct timespec mounted_at;
	atomic_bool stopping;
};

/* ino helpers: 1 is the root, then two inodes per spool */
static inline fuse_ino_t spool_ino(unsigned index)
{
	return 2 + 2 * (fuse_ino_t)index;
}

static inline fuse_ino_t status_ino(unsigned index)
{
	return 3 + 2 * (fuse_ino_t)index;
}

/* mount_spool_of -- the spool an inode belongs to, or NULL */
struct spool *mount_spool_of(struct mount *m, fuse_ino_t ino, bool *is_status);

#endif /* RPMAFS_MOUNT_H */
