/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * root.h -- the FUSE operations of the mount root
 *
 * A 0700 directory (0755 with allow_other) listing ".", "..", each peer's
 * spool and status file in config order, the inbox's two files when the
 * mount listens, then the drafts in creation order. Nothing can be made in
 * it but drafts, nor renamed or removed (ops.c). The mount-wide figures
 * are xattrs of the root: user.rpma.drafts, user.rpma.draft_bytes; statfs
 * counts the drafts. ops.c calls these for NODE_ROOT (tree.h); each ends
 * in exactly one reply.
 */
#ifndef RPMAFS_ROOT_H
#define RPMAFS_ROOT_H

#include <sys/types.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

struct tree;

/* root_getattr -- the directory's attributes */
void root_getattr(fuse_req_t req, struct tree *t);

/* root_setattr -- times only (ignored); size: EISDIR; mode, owner: EPERM */
void root_setattr(fuse_req_t req, struct tree *t, int to_set);

/* root_readdir -- the entries from offset off; each entry's offset is its index + 1 */
void root_readdir(fuse_req_t req, struct tree *t, size_t size, off_t off);

/* root_access -- anything goes: the kernel checks the mode */
void root_access(fuse_req_t req);

/* root_getxattr, root_listxattr -- the drafts' figures */
void root_getxattr(fuse_req_t req, struct tree *t, const char *name, size_t size);
void root_listxattr(fuse_req_t req, size_t size);

/* root_statfs -- the mount's: no blocks; inodes, room for drafts */
void root_statfs(fuse_req_t req, struct tree *t);

#endif /* RPMAFS_ROOT_H */
