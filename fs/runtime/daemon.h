/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon.h -- becoming a daemon, with the terminal kept until it is ready
 *
 * The kernel refuses an RDMA CM or verbs descriptor to a process whose
 * credentials are not the ones it was opened with, and a forked child has
 * credentials of its own: every RDMA resource must be made after the
 * fork. libfuse's fuse_daemonize() lets the parent exit 0 as soon as the
 * child has forked, so a failure of that set-up would reach neither the
 * terminal nor the exit status. Here the parent waits: it exits 0 once the
 * child says it is ready, and with the child's exit status when the child
 * ends first. Until then the child's stderr is still the caller's.
 */
#ifndef RPMAFS_DAEMON_H
#define RPMAFS_DAEMON_H

#include <stdbool.h>

/*
 * daemon_fork -- unless foreground, fork; the parent never returns (see
 * above), the child returns in a session of its own. *ready_fd is what
 * daemon_ready() takes (-1 in the foreground). Returns 0, or -1 with
 * errno set (nothing forked).
 */
int daemon_fork(bool foreground, int *ready_fd);

/*
 * daemon_ready -- the set-up is done: change to /, point stdin, stdout and
 * stderr at /dev/null (unless in the foreground), and let the parent exit 0
 */
void daemon_ready(int *ready_fd);

#endif /* RPMAFS_DAEMON_H */
