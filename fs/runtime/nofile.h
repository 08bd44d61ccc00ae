/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nofile.h -- enough descriptors for every peer's connection
 *
 * A connection to a peer holds two descriptors for as long as it is up
 * (its connection manager event channel and its completion channel), and
 * an attempt holds them while it connects. The soft RLIMIT_NOFILE is 1024
 * on Debian, which stops a mount at about 480 peers; the hard limit is
 * much higher (524288 under systemd). So rpmafs raises the soft limit to
 * the hard one at start, as rpma-recv does, and says when even the hard
 * limit cannot hold every peer.
 */
#ifndef RPMAFS_NOFILE_H
#define RPMAFS_NOFILE_H

#include <stddef.h>

/* descriptors a connected peer holds */
#define NOFILE_PER_PEER 2u
/* the rest: /dev/fuse, the loop's epoll and eventfd, the devices, syslog, stdio, ... */
#define NOFILE_BASE 64u

struct nofile_plan {
	unsigned long long before; /* the soft limit found (RLIM_INFINITY: none) */
	unsigned long long now;	   /* the soft limit in force afterwards */
	unsigned long long need;   /* what rdma_peers connections need */
};

/*
 * nofile_raise -- raise the soft RLIMIT_NOFILE to the hard limit and
 * compare it with what rdma_peers connections need. Returns 0 when they
 * fit, 1 when they do not (why: the figures and the remedies), -1 when the
 * limit cannot be read. why describes the change made, if any ("" if none).
 */
int nofile_raise(unsigned rdma_peers, struct nofile_plan *plan, char *why, size_t whylen);

#endif /* RPMAFS_NOFILE_H */
