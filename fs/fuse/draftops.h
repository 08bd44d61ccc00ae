/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * draftops.h -- the FUSE operations of drafts (draft.h), over ops.c's table
 *
 * draftops_table() returns ops.c's table with the namespace and file
 * operations wrapped: a draft's inode or name is answered here, anything
 * else goes on to ops.c. rename(draft, <peer>) sends the draft as one
 * message of that peer (docs/design.md §4.8). The mount-wide figures are
 * xattrs of the mount root: user.rpma.drafts, user.rpma.draft_bytes.
 */
#ifndef RPMAFS_DRAFTOPS_H
#define RPMAFS_DRAFTOPS_H

#include <stddef.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

struct tree;

/* draftops_table -- ops wrapped for drafts: the table to mount with */
const struct fuse_lowlevel_ops *draftops_table(const struct fuse_lowlevel_ops *ops);

/*
 * draftops_readdir -- ops.c's readdir, past the spool entries: add drafts
 * from index i (0: the first draft) to buf; returns the bytes used. Each
 * entry's offset is base_off + its index + 1.
 */
size_t draftops_readdir(
	fuse_req_t req, struct tree *m, char *buf, size_t size, unsigned i, off_t base_off);

#endif /* RPMAFS_DRAFTOPS_H */
