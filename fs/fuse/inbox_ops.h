/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inbox_ops.h -- the inbox's two files in the FUSE operations
 *
 *	/inbox		0400: read the received messages (inbox_queue.h)
 *	/inbox.status	0400: the inbox's figures; also as user.rpma.* xattrs
 *
 * Their inodes follow the last spool's (mount.h). inbox_ops_table() wraps
 * ops.c's table (as draftops.h does): requests on these inodes are answered
 * here, the rest go on; each handler ends in exactly one reply (a blocked
 * read's reply comes later, from the arrival or the interrupt). One mount
 * per process (the poll handles are this file's).
 */
#ifndef RPMAFS_INBOX_OPS_H
#define RPMAFS_INBOX_OPS_H

#include <stdbool.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

struct tree;

/* inbox_ops_table -- ops wrapped for the inbox's two files: the table to mount with */
const struct fuse_lowlevel_ops *inbox_ops_table(const struct fuse_lowlevel_ops *ops);

/* inbox_ops_ino -- ino is the inbox's or its status file's (the mount has an inbox) */
bool inbox_ops_ino(struct tree *m, fuse_ino_t ino);

/* inbox_ops_init -- FUSE init: poll notification on arrival */
void inbox_ops_init(struct tree *m, struct fuse_session *se);

/* inbox_ops_lookup -- reply for "inbox" / "inbox.status"; false: not one of them */
bool inbox_ops_lookup(fuse_req_t req, struct tree *m, const char *name);

/* inbox_ops_dirents -- how many entries readdir adds after the spools (0 or 2) */
unsigned inbox_ops_dirents(struct tree *m);

/* inbox_ops_dirent -- entry i (0 or 1): its name and inode */
const char *inbox_ops_dirent(struct tree *m, unsigned i, fuse_ino_t *ino);

void inbox_ops_getattr(fuse_req_t req, struct tree *m, fuse_ino_t ino);
void inbox_ops_open(fuse_req_t req, struct tree *m, fuse_ino_t ino, struct fuse_file_info *fi);
void inbox_ops_read(fuse_req_t req, struct tree *m, fuse_ino_t ino, size_t size, off_t off,
	struct fuse_file_info *fi);
void inbox_ops_release(fuse_req_t req, struct tree *m, fuse_ino_t ino, struct fuse_file_info *fi);
void inbox_ops_poll(fuse_req_t req, struct tree *m, fuse_ino_t ino, struct fuse_file_info *fi,
	struct fuse_pollhandle *ph);
void inbox_ops_getxattr(
	fuse_req_t req, struct tree *m, fuse_ino_t ino, const char *name, size_t size);
void inbox_ops_listxattr(fuse_req_t req, struct tree *m, fuse_ino_t ino, size_t size);

#endif /* RPMAFS_INBOX_OPS_H */
