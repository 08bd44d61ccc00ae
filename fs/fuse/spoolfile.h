/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spoolfile.h -- the FUSE operations of a spool file, /<peer>
 *
 * 0200: each write(2) is one message, or with framing = file each close(2)
 * of what was written (spool/framed.h). It cannot be opened for reading
 * (EACCES). ops.c calls these for a NODE_SPOOL inode (tree.h) with its
 * spool; each ends in exactly one reply (a message's comes at its
 * completion, from spool/).
 */
#ifndef RPMAFS_SPOOLFILE_H
#define RPMAFS_SPOOLFILE_H

#include <sys/stat.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

struct spool;
struct tree;

/* spoolfile_lookup -- the entry of the spool file ino, as lookup's reply */
void spoolfile_lookup(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino);

/* spoolfile_getattr -- its attributes: st_size the bytes confirmed, the times of messages */
void spoolfile_getattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino);

/* spoolfile_setattr -- chmod, chown, truncate, utimes as setattr.h answers them */
void spoolfile_setattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino,
	struct stat *attr, int to_set, struct fuse_file_info *fi);

/* spoolfile_open -- write-only (EACCES otherwise); a handle in fi->fh */
void spoolfile_open(fuse_req_t req, struct tree *t, struct spool *sp, struct fuse_file_info *fi);

/*
 * spoolfile_create -- a create (O_CREAT) of the spool's name while it is
 * hidden by an unlink (ops.c): opened as spoolfile_open does, as if with
 * O_TRUNC (closed with nothing written, it sends the 0-byte message), and
 * the entry of ino with it
 */
void spoolfile_create(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino,
	struct fuse_file_info *fi);

/* spoolfile_read -- EBADF: a spool file is never open for reading */
void spoolfile_read(fuse_req_t req);

/* spoolfile_write -- the data path: the pool buffer of the request becomes a message */
void spoolfile_write(fuse_req_t req, struct tree *t, const char *buf, size_t size, off_t off,
	struct fuse_file_info *fi);

/* spoolfile_flush -- close(2): waits or reports as the peer's close = says */
void spoolfile_flush(fuse_req_t req, struct tree *t, struct fuse_file_info *fi);

/* spoolfile_fsync -- answered once what went through the handle is confirmed */
void spoolfile_fsync(fuse_req_t req, struct fuse_file_info *fi);

/* spoolfile_release -- the last close: the 0-byte message if the handle asked for one */
void spoolfile_release(fuse_req_t req, struct fuse_file_info *fi);

/* spoolfile_access -- W_OK and F_OK only */
void spoolfile_access(fuse_req_t req, int mask);

#endif /* RPMAFS_SPOOLFILE_H */
