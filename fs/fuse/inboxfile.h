/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inboxfile.h -- the FUSE operations of the inbox's two files
 *
 *	/inbox		0400: read the received messages (inbox/inbox_queue.h)
 *	/inbox.status	0400: the inbox's figures; also as user.rpma.* xattrs
 *			of both files, from one key table (keys.h)
 *
 * Their inodes follow the last spool's (tree.h). ops.c calls these for a
 * NODE_INBOX or NODE_INBOX_STATUS inode (ino tells which); each ends in
 * exactly one reply (a blocked read's reply comes later, from the arrival
 * or the interrupt). One mount per process (the poll handles are this
 * file's).
 */
#ifndef RPMAFS_INBOXFILE_H
#define RPMAFS_INBOXFILE_H

#include <stdbool.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

struct tree;

/* inboxfile_init -- FUSE init: poll notification on arrival (a mount with an inbox) */
void inboxfile_init(struct tree *t);

/* inboxfile_lookup -- the entry of ino, as lookup's reply */
void inboxfile_lookup(fuse_req_t req, struct tree *t, fuse_ino_t ino);

/* inboxfile_getattr -- the attributes of ino, never cached */
void inboxfile_getattr(fuse_req_t req, struct tree *t, fuse_ino_t ino);

/* inboxfile_setattr -- EPERM: nothing of them changes */
void inboxfile_setattr(fuse_req_t req);

/* inboxfile_open -- read-only (EACCES otherwise); inbox.status: a snapshot of the text */
void inboxfile_open(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi);

/*
 * inboxfile_read -- inbox: the next bytes of the reader's message, up to a
 * line's end, waiting for one unless O_NONBLOCK (EAGAIN), ended by an
 * interrupt (EINTR); one read at a time per open file (EBUSY). The inbox
 * is seekable: a read at an offset inside the open file's last read gives
 * those bytes again (inbox_window). inbox.status: the snapshot.
 */
void inboxfile_read(fuse_req_t req, struct tree *t, fuse_ino_t ino, size_t size, off_t off,
	struct fuse_file_info *fi);

/* inboxfile_release -- the reader's unread messages go back to the queue */
void inboxfile_release(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi);

/* inboxfile_poll -- inbox: POLLIN when a message is there, notified on arrival */
void inboxfile_poll(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi,
	struct fuse_pollhandle *ph);

/* inboxfile_getxattr, inboxfile_listxattr -- the figures: user.rpma.<key> of every key */
void inboxfile_getxattr(fuse_req_t req, struct tree *t, const char *name, size_t size);
void inboxfile_listxattr(fuse_req_t req, size_t size);

/* inboxfile_access -- R_OK and F_OK only */
void inboxfile_access(fuse_req_t req, int mask);

#endif /* RPMAFS_INBOXFILE_H */
