// SPDX-License-Identifier: BSD-3-Clause
/*
 * spoolfile.c -- the FUSE operations of a spool file (see spoolfile.h);
 * docs/design.md §4 and rpmafs(8)
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "setattr.h"
#include "spoolfile.h"
#include "tree.h"
#include "runtime/pool.h"
#include "runtime/workers.h"
#include "spool/framed.h"
#include "spool/handle.h"
#include "spool/spool.h"

/* names never change, and spool attributes are invalidated on change */
#define ENTRY_TIMEOUT 86400.0
#define SPOOL_ATTR_TIMEOUT 86400.0

static void fill_attr(struct tree *t, struct spool *sp, fuse_ino_t ino, struct stat *st)
{
	struct spool_stats ss;

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = t->uid;
	st->st_gid = t->gid;
	/* unlinked (tree_hide): no name until its next create, as any unlinked file */
	st->st_nlink = tree_is_hidden(t, ino) ? 0 : 1;
	/*
	 * Mark the attributes as cached before reading the figures: a
	 * completion that lands in between then invalidates them (spool.h).
	 */
	spool_attr_cached(sp);
	spool_stats_get(sp, &ss);
	st->st_mode = S_IFREG | (t->allow_other ? 0222 : 0200);
	st->st_size = (off_t)ss.bytes_confirmed;
	/* stdio buffers st_blksize bytes: whole messages where it can */
	st->st_blksize = ss.max_message;
	/* before the first message and completion: the time of the mount */
	st->st_mtim = ss.mtime.tv_sec ? ss.mtime : t->mounted_at;
	st->st_ctim = ss.ctime.tv_sec ? ss.ctime : t->mounted_at;
	st->st_atim = t->mounted_at;
}

void spoolfile_lookup(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	e.ino = ino;
	fill_attr(t, sp, ino, &e.attr);
	e.attr_timeout = SPOOL_ATTR_TIMEOUT;
	e.entry_timeout = ENTRY_TIMEOUT;
	fuse_reply_entry(req, &e);
}

void spoolfile_getattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino)
{
	struct stat st;

	fill_attr(t, sp, ino, &st);
	fuse_reply_attr(req, &st, SPOOL_ATTR_TIMEOUT);
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

void spoolfile_setattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino,
	struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	struct spool_stats ss;
	struct setattr_what w = {.to_set = to_set,
		.attr = attr,
		.caller = fuse_req_ctx(req)->uid,
		.owner = t->uid,
		.group = t->gid,
		.fh = fi ? handle_of(fi) : NULL};
	bool empty_intent = false;
	struct stat st;
	int err;

	spool_stats_get(sp, &ss);
	w.length = (off_t)ss.bytes_confirmed;
	err = setattr_spool(&w, &empty_intent);
	if (err) {
		handle_note(fi, false, true);
		fuse_reply_err(req, err);
		return;
	}
	/* ftruncate(fd, 0) through an open spool file: "send nothing" */
	if (empty_intent)
		handle_note(fi, true, false);
	fill_attr(t, sp, ino, &st);
	fuse_reply_attr(req, &st, SPOOL_ATTR_TIMEOUT);
}

/*
 * open_handle -- the handle of an open of the spool (write-only, else
 * EACCES) into fi, as a negative errno; the caller replies
 */
static int open_handle(struct tree *t, struct spool *sp, struct fuse_file_info *fi, int flags)
{
	struct handle *fh;
	int err;

	if ((fi->flags & O_ACCMODE) != O_WRONLY)
		return -EACCES;
	err = handle_new(sp, flags, t->pool, &t->frames, &fh);
	if (err)
		return err;
	fi->fh = (uint64_t)(uintptr_t)fh;
	/* one write, one message: never through the page cache */
	fi->direct_io = 1;
	fi->keep_cache = 0;
	/* a file message is placed by offset: pwrite, dd seek=, sparse copies */
	fi->nonseekable = !fh->frame;
	/*
	 * a sync write-framed handle reports every outcome in write(): close
	 * has nothing to add; a file-framed one sends at close
	 */
	fi->noflush = fh->sync && !fh->frame;
	return 0;
}

void spoolfile_open(fuse_req_t req, struct tree *t, struct spool *sp, struct fuse_file_info *fi)
{
	int err = open_handle(t, sp, fi, fi->flags);
	struct handle *fh;

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fh = handle_of(fi);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* the opener was interrupted: nobody will release this handle */
		handle_delete(&fh);
	}
}

void spoolfile_create(
	fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct handle *fh;
	/* a file made anew: closed with nothing written, it is the 0-byte message */
	int err = open_handle(t, sp, fi, fi->flags | O_TRUNC);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fh = handle_of(fi);
	memset(&e, 0, sizeof(e));
	e.ino = ino;
	fill_attr(t, sp, ino, &e.attr);
	e.attr_timeout = SPOOL_ATTR_TIMEOUT;
	e.entry_timeout = ENTRY_TIMEOUT;
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		handle_delete(&fh);
}

void spoolfile_read(fuse_req_t req)
{
	fuse_reply_err(req, EBADF);
}

/* a write that fails before it becomes a message: counted refused (spool_refuse) */
static void refuse_write(struct spool *sp, fuse_req_t req, int err)
{
	spool_refuse(sp);
	fuse_reply_err(req, err);
}

/*
 * The data path's entry: the payload sits in the pool buffer the kernel
 * wrote the request into. A small payload is copied into a small slot
 * (counted in payload_copies) and the buffer stays the worker's, to read
 * the next request into; a larger one, or a small one when every small
 * slot is taken, keeps its buffer, which becomes the message's (zero-copy).
 */
void spoolfile_write(fuse_req_t req, struct tree *t, const char *buf, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);
	struct spool *sp = fh->sp;
	bool nonblock = (fi->flags & O_NONBLOCK) != 0;
	struct msg *msg;
	unsigned slot;
	int err;

	spool_note_writer(sp, fh, fi->lock_owner); /* its close waits (spoolfile_flush) */
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

	err = pool_copy_small(t->pool, buf, size, &slot);
	if (!err) {
		buf = pool_slot_ptr(t->pool, slot);
		spool_count_small_copy(sp);
	} else {
		err = workers_take_buffer(buf, nonblock, &slot);
	}
	if (err == -EINVAL) {
		/* not in our pool (cannot happen with our reader): copy, and count it */
		err = pool_get(t->pool, !nonblock, &slot);
		if (!err) {
			memcpy(pool_slot_ptr(t->pool, slot), buf, size);
			buf = pool_slot_ptr(t->pool, slot);
			spool_count_copy(sp);
		}
	}
	if (err) {
		refuse_write(sp, req, -err); /* ESHUTDOWN: unmounting */
		return;
	}
	if (msg_new_write(fh, req, t->pool, slot, buf, (uint32_t)size, fh->sync, &msg)) {
		pool_put(t->pool, slot);
		refuse_write(sp, req, ENOMEM);
		return;
	}
	spool_submit(sp, msg);
}

void spoolfile_flush(fuse_req_t req, struct tree *t, struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);

	/*
	 * close = wait: close(2) returns once what went through fh is
	 * confirmed, as fsync; close = return: an earlier async failure is
	 * reported, once. Only to a process that wrote through fh: a child
	 * closing what it inherited (exec, exit) neither waits nor takes it,
	 * and with file framing sends nothing (the writer's close does).
	 */
	if (fh->frame) {
		if (spool_wrote(fh->sp, fh, fi->lock_owner))
			framed_flush(req, fh, t->pool);
		else
			fuse_reply_err(req, 0);
		return;
	}
	spool_flush(fh->sp, fh, req, fi->lock_owner);
}

void spoolfile_fsync(fuse_req_t req, struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);

	spool_fsync(fh->sp, fh, req);
}

void spoolfile_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);
	struct spool *sp = fh->sp;

	/*
	 * The kernel never passes a 0-byte write(2) on, so the 0-byte message,
	 * rpma_send(conn, NULL, 0, 0, ...), is read from what the handle saw
	 * (docs/design.md §4.1): opened with O_TRUNC or truncated to 0 through
	 * it (`: > f`, `printf '' > f`, `truncate -s 0 f`), nothing written,
	 * and no operation on it failed. A look-only open, `>>` with nothing
	 * written, `touch` and failed commands send nothing.
	 */
	if (handle_sends_empty(fh))
		spool_submit_empty(sp, fh);
	handle_delete(&fh);
	fuse_reply_err(req, 0);
}

void spoolfile_access(fuse_req_t req, int mask)
{
	fuse_reply_err(req, mask & (X_OK | R_OK) ? EACCES : 0);
}
