/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * owners.h -- which processes wrote through a descriptor (FUSE lock owners)
 *
 * Every close(2) of a spool descriptor reaches the daemon as a FLUSH that
 * carries the closing process's lock owner, the kernel's hash of its file
 * table; a direct-I/O WRITE carries the writer's. A child that inherited
 * the descriptor (fork, then exec with O_CLOEXEC, or exit) closes it too,
 * having written nothing: with close = wait its FLUSH must not wait for the
 * parent's messages (a parent that spawns the receiver would wait for the
 * receiver it is starting: docs/design.md §8.6). A small set: past
 * OWNERS_MAX writers, or a write without an owner, every FLUSH counts as a
 * writer's (it waits, as before).
 */
#ifndef RPMAFS_OWNERS_H
#define RPMAFS_OWNERS_H

#include <stdbool.h>
#include <stdint.h>

#define OWNERS_MAX 4

struct owners {
	uint64_t id[OWNERS_MAX];
	unsigned n;
	bool all; /* cannot tell writers apart any more: everyone counts as one */
};

/* owners_add -- owner wrote (0: unknown, the kernel sent none) */
void owners_add(struct owners *o, uint64_t owner);

/* owners_has -- owner wrote, or writers cannot be told apart */
bool owners_has(const struct owners *o, uint64_t owner);

#endif /* RPMAFS_OWNERS_H */
