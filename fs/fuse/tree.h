/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tree.h -- what the FUSE operations serve: the mount's files and their inodes
 *
 *	1		the mount root
 *	2 + 2i		spool file of peer i (spool/spool.h)
 *	3 + 2i		its <peer>.status file
 *	then		/inbox and /inbox.status, when the mount listens (inbox_ops.h)
 *	from DRAFT_FIRST_INO	drafts (draft.h)
 *
 * mount.c fills a struct tree in and hands it to FUSE as the session's
 * user data; the operations read it with fuse_req_userdata() and never see
 * the rest of the mount (its loop, devices, workers), so calls go one way:
 * mount.c -> fuse/ -> spool/, inbox/.
 */
#ifndef RPMAFS_TREE_H
#define RPMAFS_TREE_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include "spool/frame.h"
#include "spool/spool.h"

struct drafts;
struct inbox;
struct pool;

struct tree {
	struct pool *pool;		/* the registered request buffers */
	struct frame_budget frames;	/* pool slots file messages may hold (frame.h) */
	struct drafts *drafts;		/* files for write-then-rename (draft.h) */
	unsigned nspools;
	struct spool **spools;		/* one per peer, in config order */
	struct inbox *inbox;		/* [rpmafs] listen: inbox.h; else NULL */
	uid_t uid;			/* the mount's owner: every file's */
	gid_t gid;
	bool allow_other;
	struct timespec mounted_at;
};

static inline fuse_ino_t spool_ino(unsigned index)
{
	return 2 + 2 * (fuse_ino_t)index;
}

static inline fuse_ino_t status_ino(unsigned index)
{
	return 3 + 2 * (fuse_ino_t)index;
}

/* tree_spool_of -- the spool an inode belongs to (its spool or status file), or NULL */
static inline struct spool *tree_spool_of(struct tree *t, fuse_ino_t ino, bool *is_status)
{
	unsigned index;

	*is_status = false;
	if (ino < 2)
		return NULL;
	index = (unsigned)((ino - 2) / 2);
	if (index >= t->nspools)
		return NULL;
	*is_status = (ino - 2) % 2 == 1;
	return t->spools[index];
}

#endif /* RPMAFS_TREE_H */
