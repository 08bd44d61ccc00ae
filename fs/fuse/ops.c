// SPDX-License-Identifier: BSD-3-Clause
/*
 * ops.c -- the FUSE low-level operations: what a spool directory looks like
 *
 *	/		0700 directory (0755 with allow_other)
 *	/<peer>		0200 spool file: each write(2) is one message, or with
 *			framing = file each close(2) of what was written (framed.c)
 *	/<peer>.status	0400 key: value text of the peer's figures
 *
 * Nothing can be created, renamed or removed (EPERM); a spool file cannot be
 * opened for reading (EACCES). See docs/design.md §4 and rpmafs(8).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "draftops.h"
#include "inbox_ops.h"
#include "ops.h"
#include "setattr.h"
#include "status.h"
#include "tree.h"
#include "xattrops.h"
#include "runtime/log.h"
#include "runtime/pool.h"
#include "runtime/workers.h"
#include "spool/framed.h"
#include "spool/handle.h"
#include "spool/spool.h"

/* names never change, and spool attributes are invalidated on change */
#define ENTRY_TIMEOUT 86400.0
#define SPOOL_ATTR_TIMEOUT 86400.0

static struct tree *tree_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void fill_attr(struct tree *m, fuse_ino_t ino, struct stat *st)
{
	struct spool_stats ss;
	struct spool *sp;
	bool is_status;

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | (m->allow_other ? 0755 : 0700);
		st->st_nlink = 2;
		st->st_mtim = st->st_ctim = st->st_atim = m->mounted_at;
		return;
	}
	sp = tree_spool_of(m, ino, &is_status);
	if (is_status) {
		size_t len = 0;
		char *text = status_render(sp, &len, &st->st_mtim);

		free(text);
		st->st_mode = S_IFREG | (m->allow_other ? 0444 : 0400);
		st->st_size = (off_t)len;
		/*
		 * The time the text last changed, not now: `tar` compares
		 * stat before and after reading, and a quiet spool's status
		 * file must not look "changed as we read it".
		 */
		st->st_ctim = st->st_atim = st->st_mtim;
		return;
	}
	/*
	 * Mark the attributes as cached before reading the figures: a
	 * completion that lands in between then invalidates them (spool.h).
	 */
	spool_attr_cached(sp);
	spool_stats_get(sp, &ss);
	st->st_mode = S_IFREG | (m->allow_other ? 0222 : 0200);
	st->st_size = (off_t)ss.bytes_confirmed;
	/* stdio buffers st_blksize bytes: whole messages where it can */
	st->st_blksize = ss.max_message;
	/* before the first message and completion: the time of the mount */
	st->st_mtim = ss.mtime.tv_sec ? ss.mtime : m->mounted_at;
	st->st_ctim = ss.ctime.tv_sec ? ss.ctime : m->mounted_at;
	st->st_atim = m->mounted_at;
}

static double attr_timeout(struct tree *m, fuse_ino_t ino)
{
	bool is_status = false;

	if (ino != FUSE_ROOT_ID)
		tree_spool_of(m, ino, &is_status);
	return is_status ? 0.0 : SPOOL_ATTR_TIMEOUT;
}

static void op_poll(
	fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	(void)ino;
	(void)fi;
	/* spool and status files: always ready, as for a regular file */
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_poll(req, POLLIN | POLLOUT);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
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

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tree *m = tree_of(req);
	struct fuse_entry_param e;

	if (parent != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	for (unsigned i = 0; i < m->nspools; i++) {
		const char *peer = spool_cfg(m->spools[i])->name;
		size_t n = strlen(peer);

		if (strncmp(name, peer, n) != 0)
			continue;
		memset(&e, 0, sizeof(e));
		if (name[n] == '\0')
			e.ino = spool_ino(i);
		else if (strcmp(name + n, ".status") == 0)
			e.ino = status_ino(i);
		else
			continue;
		fill_attr(m, e.ino, &e.attr);
		e.attr_timeout = attr_timeout(m, e.ino);
		e.entry_timeout = ENTRY_TIMEOUT;
		fuse_reply_entry(req, &e);
		return;
	}
	fuse_reply_err(req, ENOENT);
}

static bool valid_ino(struct tree *m, fuse_ino_t ino)
{
	bool is_status;

	return ino == FUSE_ROOT_ID || tree_spool_of(m, ino, &is_status);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tree *m = tree_of(req);
	struct stat st;

	(void)fi;
	if (!valid_ino(m, ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(m, ino, &st);
	fuse_reply_attr(req, &st, attr_timeout(m, ino));
}

static struct handle *handle_of(struct fuse_file_info *fi)
{
	return (struct handle *)(uintptr_t)fi->fh;
}

/*
 * handle_note -- what an operation through an open spool file says about
 * its 0-byte message (docs/design.md §4.1): a truncation to 0 is an intent
 * to send nothing; a failed operation makes the command a failed one, whose
 * close must not send anything. fi is NULL for path-based calls.
 */
static void handle_note(struct fuse_file_info *fi, bool empty_intent, bool failed)
{
	handle_mark(fi ? handle_of(fi) : NULL, empty_intent, failed);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
	struct fuse_file_info *fi)
{
	struct tree *m = tree_of(req);
	struct stat st;
	bool is_status = false, empty_intent = false;
	int err;

	if (!valid_ino(m, ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (ino != FUSE_ROOT_ID)
		tree_spool_of(m, ino, &is_status);
	if (ino == FUSE_ROOT_ID || is_status) {
		/* only times: touch works, and they are ignored */
		err = to_set & FUSE_SET_ATTR_SIZE ? (is_status ? EPERM : EISDIR) :
			to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID) ?
			EPERM : 0;
	} else {
		struct spool_stats ss;
		struct setattr_what w = {.to_set = to_set, .attr = attr,
			.caller = fuse_req_ctx(req)->uid, .owner = m->uid, .group = m->gid,
			.fh = fi ? handle_of(fi) : NULL};

		spool_stats_get(tree_spool_of(m, ino, &is_status), &ss);
		w.length = (off_t)ss.bytes_confirmed;
		err = setattr_spool(&w, &empty_intent);
	}
	if (err) {
		handle_note(fi, false, true);
		fuse_reply_err(req, err);
		return;
	}
	/* ftruncate(fd, 0) through an open spool file: "send nothing" */
	if (empty_intent)
		handle_note(fi, true, false);
	fill_attr(m, ino, &st);
	fuse_reply_attr(req, &st, attr_timeout(m, ino));
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	struct tree *m = tree_of(req);
	char *buf;
	size_t used = 0;
	off_t n = 0, spools_end = 2 + 2 * (off_t)m->nspools;
	off_t total = spools_end + inbox_ops_dirents(m);

	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (n = off; n < total; n++) {
		struct stat st = {0};
		char name[RPMAFS_PEER_NAME_MAX + 16];
		size_t len;

		if (n == 0) {
			st.st_ino = FUSE_ROOT_ID;
			strcpy(name, ".");
		} else if (n == 1) {
			st.st_ino = FUSE_ROOT_ID;
			strcpy(name, "..");
		} else if (n >= spools_end) {
			fuse_ino_t ino_i;

			snprintf(name, sizeof(name), "%s",
				inbox_ops_dirent(m, (unsigned)(n - spools_end), &ino_i));
			st.st_ino = ino_i;
		} else {
			unsigned i = (unsigned)(n - 2) / 2;
			bool status = (n - 2) % 2 == 1;

			st.st_ino = status ? status_ino(i) : spool_ino(i);
			snprintf(name, sizeof(name), "%s%s", spool_cfg(m->spools[i])->name,
				status ? ".status" : "");
		}
		st.st_mode = n < 2 ? S_IFDIR : S_IFREG;
		len = fuse_add_direntry(req, buf + used, size - used, name, &st, n + 1);
		if (len > size - used)
			break;
		used += len;
	}
	/* then the drafts (draftops.c), offsets after the spools' */
	if (n >= total)
		used += draftops_readdir(req, m, buf + used, size - used, (unsigned)(n - total),
			total);
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tree *m = tree_of(req);
	int acc = fi->flags & O_ACCMODE;
	struct handle *fh;
	struct spool *sp;
	bool is_status;
	int err;

	sp = tree_spool_of(m, ino, &is_status);
	if (!sp) {
		fuse_reply_err(req, ino == FUSE_ROOT_ID ? EISDIR : ENOENT);
		return;
	}
	if (is_status ? acc != O_RDONLY : acc != O_WRONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	if (is_status) {
		size_t len = 0;
		/* a snapshot, so that reads at any offset agree with each other */
		char *text = status_render(sp, &len, NULL);

		err = handle_new_status(sp, text, len, &fh);
	} else {
		err = handle_new(sp, fi->flags, m->pool, &m->frames, &fh);
	}
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)fh;
	/* one write, one message: never through the page cache */
	fi->direct_io = 1;
	fi->keep_cache = 0;
	/* a file message is placed by offset: pwrite, dd seek=, sparse copies */
	fi->nonseekable = !is_status && !fh->frame;
	/*
	 * a sync write-framed handle reports every outcome in write(): close
	 * has nothing to add; a file-framed one sends at close
	 */
	fi->noflush = is_status || (fh->sync && !fh->frame);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* the opener was interrupted: nobody will release this handle */
		handle_delete(&fh);
	}
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);

	(void)ino;
	if (!fh->text) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (off < 0 || (size_t)off >= fh->text_len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > fh->text_len - (size_t)off)
		size = fh->text_len - (size_t)off;
	fuse_reply_buf(req, fh->text + off, size);
}

/* a write that fails before it becomes a message: counted refused (spool_refuse) */
static void refuse_write(struct spool *sp, fuse_req_t req, int err)
{
	spool_refuse(sp);
	fuse_reply_err(req, err);
}

/*
 * The data path's entry: the payload sits in the pool buffer the kernel
 * wrote the request into; that buffer becomes the message's.
 */
static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	struct tree *m = tree_of(req);
	struct handle *fh = handle_of(fi);
	struct spool *sp = fh->sp;
	bool nonblock = (fi->flags & O_NONBLOCK) != 0;
	struct msg *msg;
	unsigned slot;
	int err;

	(void)ino;
	spool_note_writer(sp, fh, fi->lock_owner); /* its close waits (op_flush) */
	if (fh->frame) {
		framed_write(req, fh, buf, size, off);
		return;
	}
	err = spool_write_check(sp, fh, size, nonblock);
	if (err) {
		/* EIO here reports an earlier message; this one is not sent either */
		refuse_write(sp, req, err);
		return;
	}

	err = workers_take_buffer(buf, nonblock, &slot);
	if (err == -EINVAL) {
		/* not in our pool (cannot happen with our reader): copy, and count it */
		err = pool_get(m->pool, !nonblock, &slot);
		if (!err) {
			memcpy(pool_slot_ptr(m->pool, slot), buf, size);
			buf = pool_slot_ptr(m->pool, slot);
			spool_count_copy(sp);
		}
	}
	if (err) {
		refuse_write(sp, req, -err); /* ESHUTDOWN: unmounting */
		return;
	}
	if (msg_new_write(fh, req, m->pool, slot, buf, (uint32_t)size, fh->sync, &msg)) {
		pool_put(m->pool, slot);
		refuse_write(sp, req, ENOMEM);
		return;
	}
	spool_submit(sp, msg);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);

	(void)ino;
	if (fh->text) {
		fuse_reply_err(req, 0);
		return;
	}
	/*
	 * close = wait: close(2) returns once what went through fh is
	 * confirmed, as fsync; close = return: an earlier async failure is
	 * reported, once. Only to a process that wrote through fh: a child
	 * closing what it inherited (exec, exit) neither waits nor takes it,
	 * and with file framing sends nothing (the writer's close does).
	 */
	if (fh->frame) {
		if (spool_wrote(fh->sp, fh, fi->lock_owner))
			framed_flush(req, fh, tree_of(req)->pool);
		else
			fuse_reply_err(req, 0);
		return;
	}
	spool_flush(fh->sp, fh, req, fi->lock_owner);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);

	(void)ino;
	(void)datasync;
	if (fh->text)
		fuse_reply_err(req, 0);
	else
		spool_fsync(fh->sp, fh, req);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);
	struct spool *sp = fh->sp;
	struct msg *msg;

	(void)ino;
	/*
	 * The kernel never passes a 0-byte write(2) on, so the 0-byte message,
	 * rpma_send(conn, NULL, 0, 0, ...), is read from what the handle saw
	 * (docs/design.md §4.1): opened with O_TRUNC or truncated to 0 through
	 * it (`: > f`, `printf '' > f`, `truncate -s 0 f`), nothing written,
	 * and no operation on it failed. A look-only open, `>>` with nothing
	 * written, `touch` and failed commands send nothing.
	 */
	if (handle_sends_empty(fh)) {
		if (msg_new_empty(fh, &msg) == 0)
			spool_submit(sp, msg);
		else
			log_err("%s: out of memory: 0-byte message not sent", spool_cfg(sp)->name);
	}
	handle_delete(&fh);
	fuse_reply_err(req, 0);
}

static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct tree *m = tree_of(req);
	bool is_status;

	if (ino == FUSE_ROOT_ID) {
		fuse_reply_err(req, 0);
		return;
	}
	if (!tree_spool_of(m, ino, &is_status)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (mask & X_OK)
		fuse_reply_err(req, EACCES);
	else if (is_status ? (mask & W_OK) : (mask & R_OK))
		fuse_reply_err(req, EACCES);
	else
		fuse_reply_err(req, 0);
}

/* the namespace is the config: nothing is made, renamed or removed */
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

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	struct fuse_file_info *fi)
{
	(void)fi;
	op_mknod(req, parent, name, mode, 0);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	op_mknod(req, parent, name, 0, 0);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link;
	op_mknod(req, parent, name, 0, 0);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	const char *newname, unsigned int flags)
{
	(void)newparent;
	(void)newname;
	(void)flags;
	op_mknod(req, parent, name, 0, 0);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino;
	op_mknod(req, newparent, newname, 0, 0);
}

const struct fuse_lowlevel_ops rpmafs_ops = {
	.init = op_init,
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
	.getxattr = xattrops_get,
	.listxattr = xattrops_list,
	.setxattr = xattrops_set,
	.removexattr = xattrops_remove,
	.access = op_access,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.create = op_create,
	.unlink = op_unlink,
	.rmdir = op_unlink,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
};
