/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xattrops.h -- the FUSE xattr operations of spool and status files: the
 * status figures as user.rpma.* attributes, read-only (docs/design.md §4.3)
 *
 * Each handler ends in exactly one reply; ops.c puts them in its table.
 */
#ifndef RPMAFS_XATTROPS_H
#define RPMAFS_XATTROPS_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <sys/types.h>

/*
 * xattrops_reply -- answer a getxattr or listxattr with value's n bytes
 * (n < 0: the error -n), as the caller's size asks: 0, the length needed;
 * too small, ERANGE. For every xattr handler of the mount (drafts' root,
 * the inbox's files too).
 */
void xattrops_reply(fuse_req_t req, const char *value, ssize_t n, size_t size);

/* xattrops_get -- one figure (ENODATA for the root, ENOENT off the map) */
void xattrops_get(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);

/* xattrops_list -- the figures' names (none for the root) */
void xattrops_list(fuse_req_t req, fuse_ino_t ino, size_t size);

/* xattrops_set -- EPERM for user.rpma.* (the daemon's), ENOTSUP for any other name */
void xattrops_set(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
	int flags);

/* xattrops_remove -- as xattrops_set */
void xattrops_remove(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif /* RPMAFS_XATTROPS_H */
