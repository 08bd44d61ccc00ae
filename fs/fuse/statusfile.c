// SPDX-License-Identifier: BSD-3-Clause
/* statusfile.c -- the FUSE operations of a status file (see statusfile.h) */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status.h"
#include "statusfile.h"
#include "tree.h"
#include "spool/handle.h"
#include "spool/spool.h"

/* the name never changes; the text does, so its attributes are never cached */
#define ENTRY_TIMEOUT 86400.0
#define STATUS_ATTR_TIMEOUT 0.0

static void fill_attr(struct tree *t, struct spool *sp, fuse_ino_t ino, struct stat *st)
{
	size_t len = 0;
	char *text;

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = t->uid;
	st->st_gid = t->gid;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	text = status_render(sp, &len, &st->st_mtim);
	free(text);
	st->st_mode = S_IFREG | (t->allow_other ? 0444 : 0400);
	st->st_size = (off_t)len;
	/*
	 * The time the text last changed, not now: `tar` compares
	 * stat before and after reading, and a quiet spool's status
	 * file must not look "changed as we read it".
	 */
	st->st_ctim = st->st_atim = st->st_mtim;
}

void statusfile_lookup(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	e.ino = ino;
	fill_attr(t, sp, ino, &e.attr);
	e.attr_timeout = STATUS_ATTR_TIMEOUT;
	e.entry_timeout = ENTRY_TIMEOUT;
	fuse_reply_entry(req, &e);
}

void statusfile_getattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino)
{
	struct stat st;

	fill_attr(t, sp, ino, &st);
	fuse_reply_attr(req, &st, STATUS_ATTR_TIMEOUT);
}

void statusfile_setattr(
	fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino, int to_set)
{
	struct stat st;

	/* only times: touch works, and they are ignored */
	if (to_set &
		(FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fill_attr(t, sp, ino, &st);
	fuse_reply_attr(req, &st, STATUS_ATTR_TIMEOUT);
}

static struct handle *handle_of(struct fuse_file_info *fi)
{
	return (struct handle *)(uintptr_t)fi->fh;
}

void statusfile_open(fuse_req_t req, struct spool *sp, struct fuse_file_info *fi)
{
	struct handle *fh;
	size_t len = 0;
	char *text;
	int err;

	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	/* a snapshot, so that reads at any offset agree with each other */
	text = status_render(sp, &len, NULL);
	err = handle_new_status(sp, text, len, &fh);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)fh;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fi->nonseekable = 0;
	fi->noflush = 1;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* the opener was interrupted: nobody will release this handle */
		handle_delete(&fh);
	}
}

void statusfile_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);

	if (off < 0 || (size_t)off >= fh->text_len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > fh->text_len - (size_t)off)
		size = fh->text_len - (size_t)off;
	fuse_reply_buf(req, fh->text + off, size);
}

void statusfile_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct handle *fh = handle_of(fi);

	handle_delete(&fh);
	fuse_reply_err(req, 0);
}

void statusfile_access(fuse_req_t req, int mask)
{
	fuse_reply_err(req, mask & (X_OK | W_OK) ? EACCES : 0);
}
