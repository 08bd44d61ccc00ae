/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tree.h -- what the FUSE operations serve: the mount's files and their inodes
 *
 *	1		the mount root
 *	2 + 2i		spool file of peer i (spool/spool.h)
 *	3 + 2i		its <peer>.status file
 *	then		/inbox and /inbox.status, when the mount listens (inboxfile.h)
 *	from DRAFT_FIRST_INO	drafts (draftfile.h; draft.h their store)
 *
 * mount.c fills a struct tree in and hands it to FUSE as the session's
 * user data; the operations read it with tree_of() and never see the rest
 * of the mount (its loop, devices, workers), so calls go one way:
 * mount.c -> fuse/ -> spool/, inbox/.
 *
 * ops.c answers every request by the kind of its inode (tree_kind) or of
 * the name it looks up in the root (tree_lookup), each kind in its file:
 * root.c, spoolfile.c, statusfile.c, inboxfile.c, draftfile.c.
 */
#ifndef RPMAFS_TREE_H
#define RPMAFS_TREE_H

#include <stdatomic.h>
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
	_Atomic bool *hidden;		/* per spool: unlinked, until its next create (tree_hide) */
};

/* the root's two names of the inbox */
#define TREE_INBOX_NAME "inbox"
#define TREE_INBOX_STATUS_NAME "inbox.status"

/* what an inode is: which file answers for it */
enum node_kind {
	NODE_NONE,	   /* no such inode (or name) */
	NODE_ROOT,	   /* the mount root */
	NODE_SPOOL,	   /* <peer> */
	NODE_STATUS,	   /* <peer>.status */
	NODE_INBOX,	   /* inbox */
	NODE_INBOX_STATUS, /* inbox.status */
	NODE_DRAFT,	   /* a draft's inode (it may be gone since) */
};

/* tree_of -- the tree a request is on (the session's user data) */
static inline struct tree *tree_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

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

/* the inbox's inodes: those a spool after the last would have (used only with t->inbox) */
static inline fuse_ino_t tree_inbox_ino(const struct tree *t)
{
	return spool_ino(t->nspools);
}

static inline fuse_ino_t tree_inbox_status_ino(const struct tree *t)
{
	return status_ino(t->nspools);
}

/*
 * tree_kind -- the kind of inode ino; *sp: its spool for NODE_SPOOL and
 * NODE_STATUS, else NULL
 */
enum node_kind tree_kind(struct tree *t, fuse_ino_t ino, struct spool **sp);

/*
 * tree_lookup -- the kind of name in the root, with its inode (*ino) and,
 * for a spool or status file, its spool (*sp). A draft's name is found
 * first, then the inbox's, then the spools' in config order; NODE_NONE
 * when there is no such name.
 */
enum node_kind tree_lookup(struct tree *t, const char *name, fuse_ino_t *ino, struct spool **sp);

/*
 * tree_hidden_new -- room for each spool's hidden flag, none hidden; 0 or
 * -ENOMEM (then no spool can be hidden: tree_hide fails)
 */
int tree_hidden_new(struct tree *t);

/* tree_hidden_delete -- frees what tree_hidden_new took, NULLs t->hidden */
void tree_hidden_delete(struct tree *t);

/* tree_hide -- hides the name of the spool file ino (an unlink): 0, -ENOMEM, or -ENOENT if hidden */
int tree_hide(struct tree *t, fuse_ino_t ino);

/* tree_unhide -- shows it again (a create or a rename onto it); true if it was hidden */
bool tree_unhide(struct tree *t, fuse_ino_t ino);

/* tree_is_hidden -- whether the spool file ino's name is hidden */
bool tree_is_hidden(struct tree *t, fuse_ino_t ino);

#endif /* RPMAFS_TREE_H */
