// SPDX-License-Identifier: BSD-3-Clause
/* tree.c -- what an inode or a root name is: the one place that tells (see tree.h) */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "draft.h"
#include "tree.h"

enum node_kind tree_kind(struct tree *t, fuse_ino_t ino, struct spool **sp)
{
	bool is_status;

	*sp = NULL;
	if (ino == FUSE_ROOT_ID)
		return NODE_ROOT;
	if (drafts_is_ino(t->drafts, ino))
		return NODE_DRAFT;
	if (t->inbox && ino == tree_inbox_ino(t))
		return NODE_INBOX;
	if (t->inbox && ino == tree_inbox_status_ino(t))
		return NODE_INBOX_STATUS;
	*sp = tree_spool_of(t, ino, &is_status);
	if (!*sp)
		return NODE_NONE;
	return is_status ? NODE_STATUS : NODE_SPOOL;
}

enum node_kind tree_lookup(struct tree *t, const char *name, fuse_ino_t *ino, struct spool **sp)
{
	struct draft_attr a;

	*sp = NULL;
	*ino = 0;
	if (t->drafts && drafts_lookup(t->drafts, name, &a) == 0) {
		*ino = a.ino;
		return NODE_DRAFT;
	}
	if (t->inbox && strcmp(name, TREE_INBOX_NAME) == 0) {
		*ino = tree_inbox_ino(t);
		return NODE_INBOX;
	}
	if (t->inbox && strcmp(name, TREE_INBOX_STATUS_NAME) == 0) {
		*ino = tree_inbox_status_ino(t);
		return NODE_INBOX_STATUS;
	}
	for (unsigned i = 0; i < t->nspools; i++) {
		const char *peer = spool_cfg(t->spools[i])->name;
		size_t n = strlen(peer);

		if (strncmp(name, peer, n) != 0)
			continue;
		if (name[n] == '\0') {
			*ino = spool_ino(i);
		} else if (strcmp(name + n, ".status") == 0) {
			*ino = status_ino(i);
		} else {
			continue;
		}
		*sp = t->spools[i];
		return name[n] == '\0' ? NODE_SPOOL : NODE_STATUS;
	}
	return NODE_NONE;
}

int tree_hidden_new(struct tree *t)
{
	t->hidden = calloc(t->nspools ? t->nspools : 1, sizeof(*t->hidden));
	if (!t->hidden)
		return -ENOMEM;
	for (unsigned i = 0; i < t->nspools; i++)
		atomic_init(&t->hidden[i], false);
	return 0;
}

void tree_hidden_delete(struct tree *t)
{
	free((void *)t->hidden);
	t->hidden = NULL;
}

/* the flag of the spool file ino, or NULL (no room, or ino is no spool file) */
static _Atomic bool *hidden_flag(struct tree *t, fuse_ino_t ino)
{
	bool is_status;

	if (!t->hidden || !tree_spool_of(t, ino, &is_status) || is_status)
		return NULL;
	return &t->hidden[(ino - 2) / 2];
}

int tree_hide(struct tree *t, fuse_ino_t ino)
{
	_Atomic bool *h = hidden_flag(t, ino);

	if (!h)
		return -ENOMEM;
	return atomic_exchange(h, true) ? -ENOENT : 0;
}

bool tree_unhide(struct tree *t, fuse_ino_t ino)
{
	_Atomic bool *h = hidden_flag(t, ino);

	return h && atomic_exchange(h, false);
}

bool tree_is_hidden(struct tree *t, fuse_ino_t ino)
{
	_Atomic bool *h = hidden_flag(t, ino);

	return h && atomic_load(h);
}
