// SPDX-License-Identifier: BSD-3-Clause
/* framed.c -- the FUSE operations of a file-framed spool handle (see framed.h) */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "framed.h"
#include "handle.h"
#include "spool_impl.h"
#include "runtime/log.h"
#include "runtime/pool.h"

void framed_write(fuse_req_t req, struct handle *fh, const char *buf, size_t size, off_t off)
{
	struct spool *sp = fh->sp;
	int err;

	/* marks fh written (no 0-byte message at release) */
	err = spool_write_check(sp, fh, 0, false);
	if (err)
		frame_abandon(fh->frame, err); /* nothing partial: not even without this write */
	else
		err = -frame_write(fh->frame, (uint64_t)off, (fh->flags & O_APPEND) != 0, buf, size,
			spool_max_message(sp));
	if (err == ENOBUFS)
		log_warn("%s: a file message cannot start: every pool slot file messages may "
			 "hold is taken by an open file (docs/design.md §4.6)",
			sp->cfg->name);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, size);
}

/*
 * close = wait (the default), mode = sync or O_SYNC: close(2) returns once
 * its message is confirmed (acknowledged by the receiver when receiver
 * confirmation is in force), with its error; close = return: once it is
 * queued, like an async write (docs/design.md §4.6). Waiting, it is
 * answered with its own outcome: each earlier message of the handle was
 * answered to its own close, and messages of a spool are confirmed in
 * order, so they are settled by then too.
 */
static bool close_waits(const struct handle *fh)
{
	return fh->sync || fh->sp->cfg->close == RPMAFS_CLOSE_WAIT;
}

void framed_flush(fuse_req_t req, struct handle *fh, struct pool *pool)
{
	struct spool *sp = fh->sp;
	struct msg *msg;
	unsigned slot;
	uint32_t len;
	int err, ret;

	ret = frame_take(fh->frame, &slot, &len);
	if (ret == 0) {
		/* nothing new (a dup'd descriptor, or no write): send nothing, answer as fsync */
		if (close_waits(fh))
			spool_fsync(sp, fh, req);
		else
			fuse_reply_err(req, spool_take_error(sp, fh, NULL));
		return;
	}
	/* an earlier message's async failure is this close's answer, once */
	err = spool_take_error(sp, fh, NULL);
	if (ret < 0) {
		if (ret == -EMSGSIZE)
			log_warn("%s: file message over the limit of %u bytes: nothing sent",
				sp->cfg->name, spool_max_message(sp));
		else
			log_warn("%s: file message not sent: a write to it failed (%s)",
				sp->cfg->name, strerror(-ret));
		spool_refuse(sp);
		fuse_reply_err(req, err ? err : -ret);
		return;
	}
	if (err || msg_new_file(fh, req, pool, slot, len, close_waits(fh), &msg)) {
		/* nothing partial, nothing after a failure the caller has not seen */
		pool_put(pool, slot);
		spool_refuse(sp);
		fuse_reply_err(req, err ? err : ENOMEM);
		return;
	}
	/* the bytes were copied once, write by write, into the slot */
	spool_count_copy(sp);
	spool_submit(sp, msg);
}

int framed_truncate(struct handle *fh, off_t size)
{
	if (size < 0)
		return EINVAL;
	return -frame_resize(fh->frame, (uint64_t)size, spool_max_message(fh->sp));
}
