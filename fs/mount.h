/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mount.h -- one mounted spool directory: set-up and teardown
 *
 * mount_setup() checks the config against the limits and turns it into the
 * pool, the devices (none open yet), the loop and one spool per peer,
 * making no RDMA resource: the kernel refuses RDMA descriptors to the
 * daemon when they were opened before it forked (runtime/daemon.h).
 * mount_rdma(), after the fork, makes the RDMA resources needed before
 * serving (the inbox's listener); the spools open devices, register the
 * pool and connect on the loop thread. mount_fuse() makes the FUSE session
 * and mounts it;
 * mount_start() starts the loop thread and the workers; mount_stop() stops
 * the workers, unmounts, drains what is in flight, stops the loop and
 * writes the metrics file a last time;
 * mount_close() and mount_teardown() free the rest. Each may be called
 * after the one before it failed.
 */
#ifndef RPMAFS_MOUNT_H
#define RPMAFS_MOUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sdnotify.h"
#include "fuse/tree.h"
#include "spool/spool.h"

struct loop;
struct mount_metrics;
struct workers;

struct mount {
	struct rpmafs_cfg *cfg;
	char *mountpoint;
	struct fuse_session *se;
	bool mounted;
	struct devices *devices;
	struct loop *loop;
	bool loop_running;
	struct spool_env env;	/* what every spool shares */
	struct tree tree;	/* what the FUSE operations serve (fuse/tree.h) */
	unsigned nworkers;
	struct workers *workers;
	struct sdnotify_watchdog watchdog; /* its pings, from the loop's tick */
	/* [rpmafs] metrics: NULL without; written from the loop's tick */
	struct mount_metrics *metrics;
};

/*
 * mount_setup -- m->cfg loaded: the limits checked, pool, devices, loop,
 * spools, no RDMA resource; 0, or 1 (said on stderr)
 */
int mount_setup(struct mount *m, unsigned nworkers, bool allow_other);

/*
 * mount_rdma -- in the process that will serve (after daemon_fork()): the
 * inbox, listening, when [rpmafs] listen is set; 0, or 1 (said on stderr)
 */
int mount_rdma(struct mount *m);

/* mount_fuse -- the FUSE session over ops, mounted on m->mountpoint; 0 or -1 */
int mount_fuse(struct mount *m, struct fuse_args *args, const struct fuse_lowlevel_ops *ops);

/* mount_start -- the loop thread, the first connection attempts, the workers; 0 or -1 */
int mount_start(struct mount *m, int done_fd);

/* mount_stop -- stop the workers, unmount, drain (bounded), stop the loop, close spools */
void mount_stop(struct mount *m);

/* mount_close -- unmount if still mounted and free the FUSE session */
void mount_close(struct mount *m);

/* mount_teardown -- free what mount_setup made, and the config */
void mount_teardown(struct mount *m);

#endif /* RPMAFS_MOUNT_H */
