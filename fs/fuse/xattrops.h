/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xattrops.h -- the user.rpma.* xattrs as FUSE replies: a spool's figures
 * on both its files (status.h), read-only (docs/design.md §4.3), and the
 * reply every xattr handler of the mount ends in
 *
 * Each handler ends in exactly one reply; ops.c calls them.
 */
#ifndef RPMAFS_XATTROPS_H
#define RPMAFS_XATTROPS_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include <sys/types.h>

struct spool;

/*
 * xattrops_reply -- answer a getxattr or listxattr with value's n bytes
 * (n < 0: the error -n), as the caller's size asks: 0, the length needed;
 * too small, ERANGE. For every xattr handler of the mount (the root's, the
 * inbox's files too).
 */
void xattrops_reply(fuse_req_t req, const char *value, ssize_t n, size_t size);

/* xattrops_reply_none -- a listxattr with no names (an empty list) */
void xattrops_reply_none(fuse_req_t req, size_t size);

/* xattrops_get -- one figure of sp's (spool or status file) */
void xattrops_get(fuse_req_t req, struct spool *sp, const char *name, size_t size);

/* xattrops_list -- the names of sp's figures */
void xattrops_list(fuse_req_t req, size_t size);

/* xattrops_set -- EPERM for user.rpma.* (the daemon's), ENOTSUP for any other name; any inode */
void xattrops_set(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
	int flags);

/* xattrops_remove -- as xattrops_set */
void xattrops_remove(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif /* RPMAFS_XATTROPS_H */
