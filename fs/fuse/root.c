// SPDX-License-Identifier: BSD-3-Clause
/* root.c -- the FUSE operations of the mount root (see root.h) */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "draft.h"
#include "root.h"
#include "tree.h"
#include "xattrops.h"

/* the root's entries change only by drafts, which readdir reads anew */
#define ROOT_ATTR_TIMEOUT 86400.0

static void fill_attr(struct tree *t, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = FUSE_ROOT_ID;
	st->st_uid = t->uid;
	st->st_gid = t->gid;
	st->st_blksize = 4096;
	st->st_mode = S_IFDIR | (t->allow_other ? 0755 : 0700);
	st->st_nlink = 2;
	st->st_mtim = st->st_ctim = st->st_atim = t->mounted_at;
}

void root_getattr(fuse_req_t req, struct tree *t)
{
	struct stat st;

	fill_attr(t, &st);
	fuse_reply_attr(req, &st, ROOT_ATTR_TIMEOUT);
}

void root_setattr(fuse_req_t req, struct tree *t, int to_set)
{
	struct stat st;

	/* only times: touch works, and they are ignored */
	if (to_set & FUSE_SET_ATTR_SIZE) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fill_attr(t, &st);
	fuse_reply_attr(req, &st, ROOT_ATTR_TIMEOUT);
}

/* the drafts from index i (0: the first) into buf; each entry's offset is base_off + i + 1 */
static size_t add_drafts(
	fuse_req_t req, struct tree *t, char *buf, size_t size, unsigned i, off_t base_off)
{
	char name[NAME_MAX + 1];
	size_t used = 0;
	uint64_t ino;

	for (; t->drafts && drafts_entry(t->drafts, i, name, &ino) == 0; i++) {
		struct stat st = {.st_ino = ino, .st_mode = S_IFREG};
		size_t len = fuse_add_direntry(
			req, buf + used, size - used, name, &st, base_off + (off_t)i + 1);

		if (len > size - used)
			break;
		used += len;
	}
	return used;
}

/* entry n of the fixed ones (n < 2 + 2 * nspools + the inbox's 2): its name and inode */
static void fixed_entry(struct tree *t, off_t n, char *name, size_t len, fuse_ino_t *ino)
{
	off_t spools_end = 2 + 2 * (off_t)t->nspools;

	if (n < 2) {
		*ino = FUSE_ROOT_ID;
		snprintf(name, len, "%s", n == 0 ? "." : "..");
	} else if (n >= spools_end) {
		bool status = n > spools_end;

		*ino = status ? tree_inbox_status_ino(t) : tree_inbox_ino(t);
		snprintf(name, len, "%s", status ? TREE_INBOX_STATUS_NAME : TREE_INBOX_NAME);
	} else {
		unsigned i = (unsigned)(n - 2) / 2;
		bool status = (n - 2) % 2 == 1;

		*ino = status ? status_ino(i) : spool_ino(i);
		snprintf(name, len, "%s%s", spool_cfg(t->spools[i])->name, status ? ".status" : "");
	}
}

void root_readdir(fuse_req_t req, struct tree *t, size_t size, off_t off)
{
	off_t n, total = 2 + 2 * (off_t)t->nspools + (t->inbox ? 2 : 0);
	size_t used = 0;
	char *buf;

	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (n = off; n < total; n++) {
		struct stat st = {0};
		char name[RPMAFS_PEER_NAME_MAX + 16];
		fuse_ino_t ino;
		size_t len;

		fixed_entry(t, n, name, sizeof(name), &ino);
		if (tree_is_hidden(t, ino))
			continue; /* an unlinked spool, until its next create */
		st.st_ino = ino;
		st.st_mode = n < 2 ? S_IFDIR : S_IFREG;
		len = fuse_add_direntry(req, buf + used, size - used, name, &st, n + 1);
		if (len > size - used)
			break;
		used += len;
	}
	/* then the drafts, offsets after the fixed entries' */
	if (n >= total)
		used += add_drafts(req, t, buf + used, size - used, (unsigned)(n - total), total);
	fuse_reply_buf(req, buf, used);
	free(buf);
}

void root_access(fuse_req_t req)
{
	fuse_reply_err(req, 0);
}

void root_getxattr(fuse_req_t req, struct tree *t, const char *name, size_t size)
{
	unsigned count, max;
	size_t bytes, budget;
	char value[32];
	int n = -ENODATA;

	drafts_usage(t->drafts, &count, &bytes, &max, &budget);
	if (strcmp(name, "user.rpma.drafts") == 0)
		n = snprintf(value, sizeof(value), "%u", count);
	else if (strcmp(name, "user.rpma.draft_bytes") == 0)
		n = snprintf(value, sizeof(value), "%zu", bytes);
	xattrops_reply(req, value, n, size);
}

void root_listxattr(fuse_req_t req, size_t size)
{
	static const char names[] = "user.rpma.drafts\0user.rpma.draft_bytes";

	xattrops_reply(req, names, (ssize_t)sizeof(names), size);
}

void root_statfs(fuse_req_t req, struct tree *t)
{
	struct statvfs sv = {0};
	unsigned count, max;
	size_t bytes, budget;

	drafts_usage(t->drafts, &count, &bytes, &max, &budget);
	/*
	 * No blocks, as procfs reports (`df` leaves the mount out); inodes:
	 * room for drafts, so `df -i` shows those in use, never the 100 %
	 * disk monitors alert on.
	 */
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_files = max;
	sv.f_ffree = sv.f_favail = max - count;
	sv.f_namemax = NAME_MAX;
	fuse_reply_statfs(req, &sv);
}
