// SPDX-License-Identifier: BSD-3-Clause
/*
 * ops.c -- the FUSE low-level operations: each request to the file of its
 * inode's kind, found once (tree_kind, tree_lookup)
 *
 *	/		root.c
 *	/<peer>		spoolfile.c
 *	/<peer>.status	statusfile.c (xattrs of both: xattrops.c)
 *	/inbox, /inbox.status	inboxfile.c
 *	drafts		draftfile.c
 *
 * What no kind has is answered here: ENOENT for an inode that is none of
 * them (ENOTDIR for a name looked up under one), EPERM for what would
 * change the namespace (it is the config's) but for drafts and a spool's
 * unlink (it hides the name until the next create of it). Requests on an
 * open file go by the inode too: only a file of that kind was opened there.
 * See docs/design.md §4 and rpmafs(8).
 */

#include <errno.h>
#include <poll.h>

#include "draftfile.h"
#include "inboxfile.h"
#include "ops.h"
#include "root.h"
#include "spoolfile.h"
#include "statusfile.h"
#include "tree.h"
#include "xattrops.h"

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	inboxfile_init(userdata);
	/* without the room, an unlink of a spool is EPERM as it was (op_unlink) */
	(void)tree_hidden_new(userdata);
	/* O_TRUNC travels in OPEN instead of costing a SETATTR */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* requests must land in our registered buffers, one write whole */
	conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE |
			FUSE_CAP_ASYNC_DIO | FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_AUTO_INVAL_DATA |
			FUSE_CAP_READDIRPLUS | FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
	conn->max_write = FUSE_ATOMIC_WRITE_MAX + 1;
	conn->max_background = 64;
	conn->time_gran = 1;
}

static void op_destroy(void *userdata)
{
	tree_hidden_delete(userdata);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tree *t = tree_of(req);
	struct spool *sp;
	fuse_ino_t ino;

	if (parent != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	switch (tree_lookup(t, name, &ino, &sp)) {
	case NODE_DRAFT:
		draftfile_lookup(req, t, ino);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_lookup(req, t, ino);
		break;
	case NODE_SPOOL:
		/* unlinked: no such name until the next create of it (op_create) */
		if (tree_is_hidden(t, ino))
			fuse_reply_err(req, ENOENT);
		else
			spoolfile_lookup(req, t, sp, ino);
		break;
	case NODE_STATUS:
		statusfile_lookup(req, t, sp, ino);
		break;
	default:
		fuse_reply_err(req, ENOENT);
		break;
	}
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	(void)fi;
	switch (tree_kind(t, ino, &sp)) {
	case NODE_ROOT:
		root_getattr(req, t);
		break;
	case NODE_SPOOL:
		spoolfile_getattr(req, t, sp, ino);
		break;
	case NODE_STATUS:
		statusfile_getattr(req, t, sp, ino);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_getattr(req, t, ino);
		break;
	case NODE_DRAFT:
		draftfile_getattr(req, t, ino);
		break;
	default:
		fuse_reply_err(req, ENOENT);
		break;
	}
}

static void op_setattr(
	fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_ROOT:
		root_setattr(req, t, to_set);
		break;
	case NODE_SPOOL:
		spoolfile_setattr(req, t, sp, ino, attr, to_set, fi);
		break;
	case NODE_STATUS:
		statusfile_setattr(req, t, sp, ino, to_set);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_setattr(req);
		break;
	case NODE_DRAFT:
		draftfile_setattr(req, t, ino, attr, to_set);
		break;
	default:
		fuse_reply_err(req, ENOENT);
		break;
	}
}

static void op_readdir(
	fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	(void)fi;
	if (tree_kind(t, ino, &sp) == NODE_ROOT)
		root_readdir(req, t, size, off);
	else
		fuse_reply_err(req, ENOTDIR);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_ROOT:
		fuse_reply_err(req, EISDIR);
		break;
	case NODE_SPOOL:
		spoolfile_open(req, t, sp, fi);
		break;
	case NODE_STATUS:
		statusfile_open(req, sp, fi);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_open(req, t, ino, fi);
		break;
	case NODE_DRAFT:
		draftfile_open(req, t, ino, fi);
		break;
	default:
		fuse_reply_err(req, ENOENT);
		break;
	}
}

/*
 * The requests on an open file below come only for an inode that open
 * answered with a handle; EBADF for any other (the root is never opened).
 */
static void op_read(
	fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_SPOOL:
		spoolfile_read(req);
		break;
	case NODE_STATUS:
		statusfile_read(req, size, off, fi);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_read(req, t, ino, size, off, fi);
		break;
	case NODE_DRAFT:
		draftfile_read(req, t, ino, size, off);
		break;
	default:
		fuse_reply_err(req, EBADF);
		break;
	}
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_SPOOL:
		spoolfile_write(req, t, buf, size, off, fi);
		break;
	case NODE_DRAFT:
		draftfile_write(req, t, ino, buf, size, off, fi);
		break;
	default:
		/* the other files open read-only: the kernel sends no write */
		fuse_reply_err(req, EBADF);
		break;
	}
}

/* FLUSH (close) and FSYNC: only a spool file has anything to wait for */
static void flush_or_fsync(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, bool fsync)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_SPOOL:
		if (fsync)
			spoolfile_fsync(req, fi);
		else
			spoolfile_flush(req, t, fi);
		break;
	case NODE_STATUS:
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
	case NODE_DRAFT:
		fuse_reply_err(req, 0); /* read-only or in memory: nothing to wait for */
		break;
	default:
		fuse_reply_err(req, EBADF);
		break;
	}
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	flush_or_fsync(req, ino, fi, false);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	flush_or_fsync(req, ino, fi, true);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_SPOOL:
		spoolfile_release(req, fi);
		break;
	case NODE_STATUS:
		statusfile_release(req, fi);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_release(req, t, ino, fi);
		break;
	case NODE_DRAFT:
		fuse_reply_err(req, 0); /* no handle: a draft's open gives none */
		break;
	default:
		fuse_reply_err(req, EBADF);
		break;
	}
}

static void op_poll(
	fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	struct tree *t = tree_of(req);
	struct spool *sp;
	enum node_kind kind = tree_kind(t, ino, &sp);

	if (kind == NODE_INBOX || kind == NODE_INBOX_STATUS) {
		inboxfile_poll(req, t, ino, fi, ph);
		return;
	}
	/* every other file: always ready, as a regular file is */
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_poll(req, POLLIN | POLLOUT);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_ROOT:
		root_getxattr(req, t, name, size);
		break;
	case NODE_SPOOL:
	case NODE_STATUS:
		xattrops_get(req, sp, name, size);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_getxattr(req, t, name, size);
		break;
	case NODE_DRAFT:
		fuse_reply_err(req, ENODATA); /* a draft has no figures */
		break;
	default:
		fuse_reply_err(req, ENOENT);
		break;
	}
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_ROOT:
		root_listxattr(req, size);
		break;
	case NODE_SPOOL:
	case NODE_STATUS:
		xattrops_list(req, size);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_listxattr(req, size);
		break;
	default:
		xattrops_reply_none(req, size); /* a draft, or no such inode: no names */
		break;
	}
}

static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct tree *t = tree_of(req);
	struct spool *sp;

	switch (tree_kind(t, ino, &sp)) {
	case NODE_ROOT:
		root_access(req);
		break;
	case NODE_SPOOL:
		spoolfile_access(req, mask);
		break;
	case NODE_STATUS:
		statusfile_access(req, mask);
		break;
	case NODE_INBOX:
	case NODE_INBOX_STATUS:
		inboxfile_access(req, mask);
		break;
	case NODE_DRAFT:
		draftfile_access(req, t, ino, mask);
		break;
	default:
		fuse_reply_err(req, ENOENT);
		break;
	}
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	root_statfs(req, tree_of(req)); /* the mount's, whatever inode asks */
}

/* the namespace is the config: nothing is made, renamed or removed but drafts */
static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	fuse_reply_err(req, EPERM);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	op_mknod(req, parent, name, mode, 0);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	op_mknod(req, parent, name, 0, 0);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link;
	op_mknod(req, parent, name, 0, 0);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino;
	op_mknod(req, newparent, newname, 0, 0);
}

/*
 * the kind of name in the root, NODE_NONE under any other parent; *ino,
 * *sp as tree_lookup gives them
 */
static enum node_kind kind_of_name(
	struct tree *t, fuse_ino_t parent, const char *name, fuse_ino_t *ino, struct spool **sp)
{
	*ino = 0;
	*sp = NULL;
	return parent == FUSE_ROOT_ID ? tree_lookup(t, name, ino, sp) : NODE_NONE;
}

/* the mount's owner and root may unlink a spool, as they are the ones who may write it */
static bool may_unlink_spool(fuse_req_t req, struct tree *t)
{
	uid_t uid = fuse_req_ctx(req)->uid;

	return uid == 0 || uid == t->uid;
}

/*
 * A spool's name is hidden by an unlink and shown again by the next
 * create of it, which opens the spool: `install` and an inter-device `mv`
 * remove the destination, then create it O_EXCL, and so deliver one
 * message (docs/design.md §4.7). Hidden is per mount: every process sees
 * ENOENT at lookup; the kernel's dentry of the name is dropped by the
 * unlink itself and an ENOENT lookup is not cached, so nothing needs
 * invalidating.
 */
static void op_create(
	fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct tree *t = tree_of(req);
	struct spool *sp;
	fuse_ino_t ino;
	enum node_kind kind = kind_of_name(t, parent, name, &ino, &sp);

	if (kind == NODE_SPOOL && tree_unhide(t, ino)) {
		spoolfile_create(req, t, sp, ino, fi);
		return;
	}
	/* a new name, a draft's (EEXIST), or the inbox's: a draft to be */
	if (parent == FUSE_ROOT_ID && kind != NODE_SPOOL && kind != NODE_STATUS)
		draftfile_create(req, t, name, mode, fi);
	else
		fuse_reply_err(req, EPERM);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tree *t = tree_of(req);
	struct spool *sp;
	fuse_ino_t ino;
	int err;

	switch (kind_of_name(t, parent, name, &ino, &sp)) {
	case NODE_DRAFT:
		draftfile_unlink(req, t, name);
		break;
	case NODE_SPOOL:
		if (!may_unlink_spool(req, t)) {
			fuse_reply_err(req, EPERM);
			break;
		}
		err = tree_hide(t, ino);
		fuse_reply_err(req, err == -ENOMEM ? EPERM : -err);
		break;
	default:
		/* status files, the inbox, and names that are none */
		fuse_reply_err(req, EPERM);
		break;
	}
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	const char *newname, unsigned int flags)
{
	struct tree *t = tree_of(req);
	struct spool *sp;
	fuse_ino_t ino;

	if (kind_of_name(t, parent, name, &ino, &sp) != NODE_DRAFT) {
		fuse_reply_err(req, EPERM);
		return;
	}
	/* a rename onto a hidden spool names it again, whatever the send's outcome */
	if (kind_of_name(t, newparent, newname, &ino, &sp) == NODE_SPOOL)
		(void)tree_unhide(t, ino);
	draftfile_rename(req, t, name, newparent, newname, flags);
}

const struct fuse_lowlevel_ops rpmafs_ops = {
	.init = op_init,
	.destroy = op_destroy,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.fsync = op_fsync,
	.release = op_release,
	.poll = op_poll,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.setxattr = xattrops_set,
	.removexattr = xattrops_remove,
	.access = op_access,
	.statfs = op_statfs,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.create = op_create,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
};
