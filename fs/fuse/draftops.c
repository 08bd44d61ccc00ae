// SPDX-License-Identifier: BSD-3-Clause
/* draftops.c -- the FUSE operations of drafts, over ops.c's table (see draftops.h) */

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
#include "draftops.h"
#include "tree.h"
#include "xattrops.h"
#include "runtime/log.h"
#include "runtime/pool.h"

#define DRAFT_TIMEOUT 0.0 /* drafts change under the kernel: never cached */

/* ops.c's table: what is not a draft goes there */
static const struct fuse_lowlevel_ops *base;

static struct tree *tree_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct drafts *drafts_of(fuse_req_t req)
{
	return tree_of(req)->drafts;
}

static bool is_draft(fuse_req_t req, fuse_ino_t ino)
{
	return drafts_is_ino(drafts_of(req), ino);
}

/* the spool called name, or NULL; *is_status: name is its status file */
static struct spool *spool_named(struct tree *m, const char *name, bool *is_status)
{
	for (unsigned i = 0; i < m->nspools; i++) {
		const char *peer = spool_cfg(m->spools[i])->name;
		size_t n = strlen(peer);

		if (strncmp(name, peer, n) != 0)
			continue;
		*is_status = name[n] != '\0';
		if (name[n] == '\0' || strcmp(name + n, ".status") == 0)
			return m->spools[i];
	}
	return NULL;
}

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

static void say_full(struct tree *m, const char *which)
{
	unsigned count, max;
	size_t bytes, budget;

	drafts_usage(m->drafts, &count, &bytes, &max, &budget);
	log_warn("no room for a draft: %s is at its limit (%u of %u drafts, %zu of %zu bytes)",
		which, count, max, bytes, budget);
}

static void d_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct draft_attr a;

	if (parent == FUSE_ROOT_ID && drafts_lookup(drafts_of(req), name, &a) == 0)
		reply_entry(req, &a);
	else
		base->lookup(req, parent, name);
}

static void d_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct draft_attr a;
	struct stat st;

	if (!is_draft(req, ino)) {
		base->getattr(req, ino, fi);
	} else if (drafts_getattr(drafts_of(req), ino, &a)) {
		fuse_reply_err(req, ENOENT);
	} else {
		to_stat(&a, &st);
		fuse_reply_attr(req, &st, DRAFT_TIMEOUT);
	}
}

static void d_setattr(
	fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	struct draft_attr a;
	struct timespec now, *mtime = NULL;
	const char *which = "";
	struct stat st;
	int ret;

	if (!is_draft(req, ino)) {
		base->setattr(req, ino, attr, to_set, fi);
		return;
	}
	if (drafts_getattr(drafts_of(req), ino, &a)) {
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
	ret = drafts_setattr(drafts_of(req), ino, to_set & FUSE_SET_ATTR_MODE, attr->st_mode,
		to_set & FUSE_SET_ATTR_SIZE, (uint64_t)attr->st_size, mtime, &which);
	if (ret == -ENOSPC)
		say_full(tree_of(req), which);
	if (ret || drafts_getattr(drafts_of(req), ino, &a)) {
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

static void d_create(
	fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct tree *m = tree_of(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fuse_entry_param e = {.attr_timeout = DRAFT_TIMEOUT, .entry_timeout = DRAFT_TIMEOUT};
	const char *which = "";
	struct draft_attr a;
	bool is_status;
	int ret;

	/* a spool or status name, another directory, or not a regular file: ops.c says no */
	if (parent != FUSE_ROOT_ID || spool_named(m, name, &is_status) || !S_ISREG(mode) ||
		strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		base->create(req, parent, name, mode, fi);
		return;
	}
	ret = drafts_create(m->drafts, name, ctx->uid, ctx->gid, mode & ~ctx->umask, &a, &which);
	if (ret == -ENOSPC)
		say_full(m, which);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	e.ino = a.ino;
	to_stat(&a, &e.attr);
	draft_file_info(fi);
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		drafts_unlink(m->drafts, name); /* the creator was interrupted */
}

static void d_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const char *which = "";
	struct draft_attr a;

	if (!is_draft(req, ino)) {
		base->open(req, ino, fi);
		return;
	}
	if (drafts_getattr(drafts_of(req), ino, &a)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!owns(req, &a)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	if (fi->flags & O_TRUNC)
		drafts_setattr(drafts_of(req), ino, false, 0, true, 0, NULL, &which);
	draft_file_info(fi);
	fuse_reply_open(req, fi);
}

static void d_read(
	fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	char *buf;
	ssize_t n;

	if (!is_draft(req, ino)) {
		base->read(req, ino, size, off, fi);
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = drafts_read(drafts_of(req), ino, (uint64_t)off, buf, size);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void d_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	const char *which = "";
	struct draft_attr a;
	int ret;

	if (!is_draft(req, ino)) {
		base->write(req, ino, buf, size, off, fi);
		return;
	}
	if ((fi->flags & O_APPEND) && drafts_getattr(drafts_of(req), ino, &a) == 0)
		off = (off_t)a.size;
	ret = drafts_write(drafts_of(req), ino, (uint64_t)off, buf, size, &which);
	if (ret == -ENOSPC)
		say_full(tree_of(req), which);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_write(req, size);
}

static void d_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (is_draft(req, ino))
		fuse_reply_err(req, 0);
	else
		base->flush(req, ino, fi);
}

static void d_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	if (is_draft(req, ino))
		fuse_reply_err(req, 0); /* in memory: nothing to wait for */
	else
		base->fsync(req, ino, datasync, fi);
}

static void d_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (is_draft(req, ino))
		fuse_reply_err(req, 0);
	else
		base->release(req, ino, fi);
}

static void d_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct draft_attr a;

	if (parent != FUSE_ROOT_ID || drafts_lookup(drafts_of(req), name, &a))
		base->unlink(req, parent, name);
	else if (!owns(req, &a))
		fuse_reply_err(req, EPERM); /* as in a sticky directory such as /tmp */
	else
		fuse_reply_err(req, -drafts_unlink(drafts_of(req), name));
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
static void send_draft(fuse_req_t req, struct tree *m, struct spool *sp, const char *name)
{
	const struct rpmafs_peer_cfg *pc = spool_cfg(sp);
	struct sent_draft *sd;
	struct msg *msg = NULL;
	unsigned slot;
	ssize_t n;

	if (pool_get(m->pool, false, &slot)) {
		log_warn("%s: no pool slot free to send draft %s", pc->name, name);
		fuse_reply_err(req, ENOBUFS);
		return;
	}
	n = drafts_copy_out(m->drafts, name, pool_slot_ptr(m->pool, slot), spool_max_message(sp));
	sd = n >= 0 ? calloc(1, sizeof(*sd)) : NULL;
	/* the rename is the draft's close: with close = wait it returns once confirmed */
	if (!sd || msg_new_draft(req, m->pool, slot, (uint32_t)n,
			   pc->mode == RPMAFS_MODE_SYNC || pc->close == RPMAFS_CLOSE_WAIT,
			   draft_answered, sd, &msg)) {
		pool_put(m->pool, slot);
		free(sd);
		if (n == -EMSGSIZE)
			spool_refuse(sp);
		fuse_reply_err(req, n < 0 ? (int)-n : ENOMEM);
		return;
	}
	sd->drafts = m->drafts;
	snprintf(sd->name, sizeof(sd->name), "%s", name);
	if (n)
		spool_count_copy(sp);
	spool_submit(sp, msg);
}

static void d_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	const char *newname, unsigned int flags)
{
	struct tree *m = tree_of(req);
	struct draft_attr a, other;
	struct spool *sp;
	bool is_status;
	int ret;

	if (parent != FUSE_ROOT_ID || drafts_lookup(m->drafts, name, &a)) {
		base->rename(req, parent, name, newparent, newname, flags);
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
	sp = spool_named(m, newname, &is_status);
	if (sp && is_status) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (sp) {
		send_draft(req, m, sp, name);
		return;
	}
	if (strcmp(name, newname) != 0 && drafts_lookup(m->drafts, newname, &other) == 0) {
		/* replacing a draft is removing it: its owner's (or root's) to do */
		if ((flags & RENAME_NOREPLACE) || !owns(req, &other)) {
			fuse_reply_err(req, flags & RENAME_NOREPLACE ? EEXIST : EPERM);
			return;
		}
	}
	ret = drafts_rename(m->drafts, name, newname);
	fuse_reply_err(req, -ret);
}

size_t draftops_readdir(
	fuse_req_t req, struct tree *m, char *buf, size_t size, unsigned i, off_t base_off)
{
	char name[NAME_MAX + 1];
	size_t used = 0;
	uint64_t ino;

	for (; m->drafts && drafts_entry(m->drafts, i, name, &ino) == 0; i++) {
		struct stat st = {.st_ino = ino, .st_mode = S_IFREG};
		size_t len = fuse_add_direntry(
			req, buf + used, size - used, name, &st, base_off + (off_t)i + 1);

		if (len > size - used)
			break;
		used += len;
	}
	return used;
}

static void d_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct draft_attr a;

	if (!is_draft(req, ino))
		base->access(req, ino, mask);
	else if (drafts_getattr(drafts_of(req), ino, &a))
		fuse_reply_err(req, ENOENT);
	else if (mask == F_OK)
		fuse_reply_err(req, 0);
	else
		fuse_reply_err(req, (mask & X_OK) || !owns(req, &a) ? EACCES : 0);
}

/* the mount-wide figures, as xattrs of the root */
static int root_xattr(struct tree *m, const char *name, char *value, size_t len)
{
	unsigned count, max;
	size_t bytes, budget;

	drafts_usage(m->drafts, &count, &bytes, &max, &budget);
	if (strcmp(name, "user.rpma.drafts") == 0)
		return snprintf(value, len, "%u", count);
	if (strcmp(name, "user.rpma.draft_bytes") == 0)
		return snprintf(value, len, "%zu", bytes);
	return -ENODATA;
}

static void d_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char value[32];
	int n;

	if (is_draft(req, ino)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	if (ino != FUSE_ROOT_ID) {
		base->getxattr(req, ino, name, size);
		return;
	}
	n = root_xattr(tree_of(req), name, value, sizeof(value));
	xattrops_reply(req, value, n, size);
}

static void d_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	static const char names[] = "user.rpma.drafts\0user.rpma.draft_bytes";

	if (ino != FUSE_ROOT_ID)
		base->listxattr(req, ino, size);
	else
		xattrops_reply(req, names, (ssize_t)sizeof(names), size);
}

static void d_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = {0};
	unsigned count, max;
	size_t bytes, budget;

	(void)ino;
	drafts_usage(drafts_of(req), &count, &bytes, &max, &budget);
	/*
	 * The mount's statfs (ops.c has none). No blocks, as procfs reports
	 * (`df` leaves the mount out); inodes: room for drafts, so `df -i`
	 * shows those in use, never the 100 % disk monitors alert on.
	 */
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_files = max;
	sv.f_ffree = sv.f_favail = max - count;
	sv.f_namemax = NAME_MAX;
	fuse_reply_statfs(req, &sv);
}

const struct fuse_lowlevel_ops *draftops_table(const struct fuse_lowlevel_ops *ops)
{
	static struct fuse_lowlevel_ops t;

	base = ops;
	t = *ops;
	t.lookup = d_lookup;
	t.getattr = d_getattr;
	t.setattr = d_setattr;
	t.create = d_create;
	t.open = d_open;
	t.read = d_read;
	t.write = d_write;
	t.flush = d_flush;
	t.fsync = d_fsync;
	t.release = d_release;
	t.unlink = d_unlink;
	t.rename = d_rename;
	t.access = d_access;
	t.getxattr = d_getxattr;
	t.listxattr = d_listxattr;
	t.statfs = d_statfs;
	return &t;
}
