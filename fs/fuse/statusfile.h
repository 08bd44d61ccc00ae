/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * statusfile.h -- the FUSE operations of a status file, /<peer>.status
 *
 * 0400: the spool's figures as `key: value` text (status.h), a snapshot
 * taken at open so that reads at any offset agree; never cached. ops.c
 * calls these for a NODE_STATUS inode (tree.h) with its spool; each ends
 * in exactly one reply.
 */
#ifndef RPMAFS_STATUSFILE_H
#define RPMAFS_STATUSFILE_H

#include <sys/stat.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

struct spool;
struct tree;

/* statusfile_lookup -- the entry of status file ino, as lookup's reply */
void statusfile_lookup(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino);

/* statusfile_getattr -- st_size the text's length, st_mtime when it last changed */
void statusfile_getattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino);

/* statusfile_setattr -- times only (ignored); size, mode, owner: EPERM */
void statusfile_setattr(
	fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino, int to_set);

/* statusfile_open -- read-only (EACCES otherwise): the text's snapshot in fi->fh */
void statusfile_open(fuse_req_t req, struct spool *sp, struct fuse_file_info *fi);

/* statusfile_read -- from the snapshot */
void statusfile_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi);

/* statusfile_release -- the snapshot freed */
void statusfile_release(fuse_req_t req, struct fuse_file_info *fi);

/* statusfile_access -- R_OK and F_OK only */
void statusfile_access(fuse_req_t req, int mask);

#endif /* RPMAFS_STATUSFILE_H */
