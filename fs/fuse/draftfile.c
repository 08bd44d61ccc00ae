// SPDX-License-Identifier: BSD-3-Clause
/* draftfile.c -- the FUSE operations of drafts (see draftfile.h) */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "draft.h"
#include "draftfile.h"
#include "tree.h"
#include "runtime/log.h"
#include "runtime/pool.h"

#define DRAFT_TIMEOUT 0.0 /* drafts change under the kernel: never cached */

/*
 * A draft belongs to its creator (docs/design.md §4.8): under allow_other
 * another user may list and stat it, not open, change, rename or remove it,
 * with or without default_permissions. Root may.
 */
static bool owns(fuse_req_t req, const struct draft_attr *a)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return ctx->uid == 0 || ctx->uid == a->uid;
}

static void to_stat(const struct draft_attr *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = a->ino;
	st->st_mode = S_IFREG | a->mode;
	st->st_nlink = 1;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_size = (off_t)a->size;
	st->st_blocks = (blkcnt_t)((a->size + 511) / 512);
	st->st_blksize = DRAFT_MAX_BYTES;
	st->st_mtim = st->st_atim = a->mtime;
	st->st_ctim = a->ctime;
}

static void reply_entry(fuse_req_t req, const struct draft_attr *a)
{
	struct fuse_entry_param e = {
		.ino = a->ino, .attr_timeout = DRAFT_TIMEOUT, .entry_timeout = DRAFT_TIMEOUT};

	to_stat(a, &e.attr);
	fuse_reply_entry(req, &e);
}

static void say_full(struct tree *t, const char *which)
{
	unsigned count, max;
	size_t bytes, budget;

	drafts_usage(t->drafts, &count, &bytes, &max, &budget);
	log_warn("no room for a draft: %s is at its limit (%u of %u drafts, %zu of %zu bytes)",
		which, count, max, bytes, budget);
}

void draftfile_lookup(fuse_req_t req, struct tree *t, fuse_ino_t ino)
{
	struct draft_attr a;

	if (drafts_getattr(t->drafts, ino, &a))
		fuse_reply_err(req, ENOENT);
	else
		reply_entry(req, &a);
}

void draftfile_getattr(fuse_req_t req, struct tree *t, fuse_ino_t ino)
{
	struct draft_attr a;
	struct stat st;

	if (drafts_getattr(t->drafts, ino, &a)) {
		fuse_reply_err(req, ENOENT);
	} else {
		to_stat(&a, &st);
		fuse_reply_attr(req, &st, DRAFT_TIMEOUT);
	}
}

void draftfile_setattr(
	fuse_req_t req, struct tree *t, fuse_ino_t ino, struct stat *attr, int to_set)
{
	struct draft_attr a;
	struct timespec now, *mtime = NULL;
	const char *which = "";
	struct stat st;
	int ret;

	if (drafts_getattr(t->drafts, ino, &a)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!owns(req, &a)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	/* chown to oneself (rsync -a, cp -p); a draft is never given away */
	if (((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != a.uid) ||
		((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != a.gid)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
		clock_gettime(CLOCK_REALTIME, &now);
		mtime = &now;
	} else if (to_set & FUSE_SET_ATTR_MTIME) {
		mtime = &attr->st_mtim;
	}
	ret = drafts_setattr(t->drafts, ino, to_set & FUSE_SET_ATTR_MODE, attr->st_mode,
		to_set & FUSE_SET_ATTR_SIZE, (uint64_t)attr->st_size, mtime, &which);
	if (ret == -ENOSPC)
		say_full(t, which);
	if (ret || drafts_getattr(t->drafts, ino, &a)) {
		fuse_reply_err(req, ret ? -ret : ENOENT);
		return;
	}
	to_stat(&a, &st);
	fuse_reply_attr(req, &st, DRAFT_TIMEOUT);
}

static void draft_file_info(struct fuse_file_info *fi)
{
	fi->fh = 0;
	/* reads and writes come to us: no page cache to keep in step */
	fi->direct_io = 1;
	fi->keep_cache = 0;
}

void draftfile_create(
	fuse_req_t req, struct tree *t, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fuse_entry_param e = {.attr_timeout = DRAFT_TIMEOUT, .entry_timeout = DRAFT_TIMEOUT};
	const char *which = "";
	struct draft_attr a;
	int ret;

	/* not a regular file, or a name no file may have: the namespace's EPERM */
	if (!S_ISREG(mode) || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		fuse_reply_err(req, EPERM);
		return;
	}
	ret = drafts_create(t->drafts, name, ctx->uid, ctx->gid, mode & ~ctx->umask, &a, &which);
	if (ret == -ENOSPC)
		say_full(t, which);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	e.ino = a.ino;
	to_stat(&a, &e.attr);
	draft_file_info(fi);
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		drafts_unlink(t->drafts, name); /* the creator was interrupted */
}

void draftfile_open(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const char *which = "";
	struct draft_attr a;

	if (drafts_getattr(t->drafts, ino, &a)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!owns(req, &a)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	if (fi->flags & O_TRUNC)
		drafts_setattr(t->drafts, ino, false, 0, true, 0, NULL, &which);
	draft_file_info(fi);
	fuse_reply_open(req, fi);
}

void draftfile_read(fuse_req_t req, struct tree *t, fuse_ino_t ino, size_t size, off_t off)
{
	char *buf;
	ssize_t n;

	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = drafts_read(t->drafts, ino, (uint64_t)off, buf, size);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

void draftfile_write(fuse_req_t req, struct tree *t, fuse_ino_t ino, const char *buf, size_t size,
	off_t off, struct fuse_file_info *fi)
{
	const char *which = "";
	struct draft_attr a;
	int ret;

	if ((fi->flags & O_APPEND) && drafts_getattr(t->drafts, ino, &a) == 0)
		off = (off_t)a.size;
	ret = drafts_write(t->drafts, ino, (uint64_t)off, buf, size, &which);
	if (ret == -ENOSPC)
		say_full(t, which);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_write(req, size);
}

void draftfile_unlink(fuse_req_t req, struct tree *t, const char *name)
{
	struct draft_attr a;

	if (drafts_lookup(t->drafts, name, &a))
		fuse_reply_err(req, EPERM); /* gone since: no draft, the namespace's answer */
	else if (!owns(req, &a))
		fuse_reply_err(req, EPERM); /* as in a sticky directory such as /tmp */
	else
		fuse_reply_err(req, -drafts_unlink(t->drafts, name));
}

struct sent_draft {
	struct drafts *drafts;
	char name[NAME_MAX + 1];
};

/* the message's outcome, just before rename(2) returns it: success removes the draft */
static void draft_answered(void *ctx, uint64_t arg, int err)
{
	struct sent_draft *sd = ctx;

	(void)arg;
	if (!err)
		drafts_unlink(sd->drafts, sd->name);
	free(sd);
}

/* rename(draft, <peer>): the draft's bytes, copied once into a pool slot, as one message */
static void send_draft(fuse_req_t req, struct tree *t, struct spool *sp, const char *name)
{
	const struct rpmafs_peer_cfg *pc = spool_cfg(sp);
	struct sent_draft *sd;
	struct msg *msg = NULL;
	unsigned slot;
	ssize_t n;

	if (pool_get(t->pool, false, &slot)) {
		log_warn("%s: no pool slot free to send draft %s", pc->name, name);
		fuse_reply_err(req, ENOBUFS);
		return;
	}
	n = drafts_copy_out(t->drafts, name, pool_slot_ptr(t->pool, slot), spool_max_message(sp));
	sd = n >= 0 ? calloc(1, sizeof(*sd)) : NULL;
	/* the rename is the draft's close: with close = wait it returns once confirmed */
	if (!sd || msg_new_draft(req, t->pool, slot, (uint32_t)n,
			   pc->mode == RPMAFS_MODE_SYNC || pc->close == RPMAFS_CLOSE_WAIT,
			   draft_answered, sd, &msg)) {
		pool_put(t->pool, slot);
		free(sd);
		if (n == -EMSGSIZE)
			spool_refuse(sp);
		fuse_reply_err(req, n < 0 ? (int)-n : ENOMEM);
		return;
	}
	sd->drafts = t->drafts;
	snprintf(sd->name, sizeof(sd->name), "%s", name);
	if (n)
		spool_count_copy(sp);
	spool_submit(sp, msg);
}

void draftfile_rename(fuse_req_t req, struct tree *t, const char *name, fuse_ino_t newparent,
	const char *newname, unsigned int flags)
{
	struct draft_attr a, other;
	struct spool *sp;
	fuse_ino_t ino;
	enum node_kind to;
	int ret;

	if (drafts_lookup(t->drafts, name, &a)) {
		fuse_reply_err(req, EPERM); /* gone since: no draft, the namespace's answer */
		return;
	}
	if (!owns(req, &a)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (newparent != FUSE_ROOT_ID || (flags & RENAME_EXCHANGE)) {
		fuse_reply_err(req, newparent != FUSE_ROOT_ID ? EXDEV : EINVAL);
		return;
	}
	to = tree_lookup(t, newname, &ino, &sp);
	if (to == NODE_STATUS) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (to == NODE_SPOOL) {
		send_draft(req, t, sp, name);
		return;
	}
	if (strcmp(name, newname) != 0 && drafts_lookup(t->drafts, newname, &other) == 0) {
		/* replacing a draft is removing it: its owner's (or root's) to do */
		if ((flags & RENAME_NOREPLACE) || !owns(req, &other)) {
			fuse_reply_err(req, flags & RENAME_NOREPLACE ? EEXIST : EPERM);
			return;
		}
	}
	ret = drafts_rename(t->drafts, name, newname);
	fuse_reply_err(req, -ret);
}

void draftfile_access(fuse_req_t req, struct tree *t, fuse_ino_t ino, int mask)
{
	struct draft_attr a;

	if (drafts_getattr(t->drafts, ino, &a))
		fuse_reply_err(req, ENOENT);
	else if (mask == F_OK)
		fuse_reply_err(req, 0);
	else
		fuse_reply_err(req, (mask & X_OK) || !owns(req, &a) ? EACCES : 0);
}
