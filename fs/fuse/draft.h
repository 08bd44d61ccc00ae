/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * draft.h -- drafts: files made in the mount root for write-then-rename
 *
 * rsync, Python's tempfile + os.replace and config-management tools write
 * a temporary file beside the target and rename it onto the target. A
 * regular file created in the mount root under a name that is no spool or
 * status file is a draft: it is kept in memory (plain memory, not the
 * registered pool), can be written, read, stat'ed, listed, renamed onto
 * another draft and unlinked, and rename(draft, <peer>) sends its bytes as
 * one message of that peer (draftfile.c, docs/design.md §4.8). Drafts vanish
 * at unmount.
 *
 * Bounded: at most max drafts at once, each at most DRAFT_MAX_BYTES (the
 * largest message), all of them within budget bytes. Inode numbers are
 * never reused while mounted. All functions lock the table.
 */
#ifndef RPMAFS_DRAFT_H
#define RPMAFS_DRAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* the largest draft: the largest message (RPMAFS_CFG_MAX_MESSAGE_LIMIT) */
#define DRAFT_MAX_BYTES (1u << 20)
/* the bytes all drafts of a mount together may hold (plain memory) */
#define DRAFT_BUDGET (16u << 20)
/* the first draft inode: far above the spools' 2 + 2 * peers */
#define DRAFT_FIRST_INO (1ull << 32)

struct drafts;

struct draft_attr {
	uint64_t ino;
	uid_t uid;
	gid_t gid;
	mode_t mode; /* permission bits */
	size_t size;
	struct timespec mtime, ctime;
};

/*
 * drafts_new -- a table of at most max drafts within budget bytes; inode
 * numbers from first_ino up. 0 or -ENOMEM.
 */
int drafts_new(unsigned max, size_t budget, uint64_t first_ino, struct drafts **d_ptr);

/* drafts_delete -- free every draft and the table */
void drafts_delete(struct drafts **d_ptr);

/* drafts_is_ino -- whether ino is in the draft range (it may be gone) */
bool drafts_is_ino(const struct drafts *d, uint64_t ino);

/*
 * drafts_create -- a new empty draft name: 0 with *attr, -EEXIST,
 * -ENAMETOOLONG, -ENOSPC (the count is at max: *which says "drafts").
 */
int drafts_create(struct drafts *d, const char *name, uid_t uid, gid_t gid, mode_t mode,
	struct draft_attr *attr, const char **which);

/* drafts_lookup, drafts_getattr -- 0 with *attr, or -ENOENT */
int drafts_lookup(struct drafts *d, const char *name, struct draft_attr *attr);
int drafts_getattr(struct drafts *d, uint64_t ino, struct draft_attr *attr);

/*
 * drafts_write -- size bytes at off (holes are zeros): 0, -ENOENT, -EFBIG
 * (past DRAFT_MAX_BYTES), -ENOSPC (the byte budget: *which says
 * "draft_bytes")
 */
int drafts_write(struct drafts *d, uint64_t ino, uint64_t off, const void *buf, size_t size,
	const char **which);

/* drafts_read -- up to size bytes at off into buf: the count, or -ENOENT */
ssize_t drafts_read(struct drafts *d, uint64_t ino, uint64_t off, void *buf, size_t size);

/*
 * drafts_setattr -- mode (mode_set), size (size_set: as drafts_write),
 * times (mtime: NULL to leave it)
 */
int drafts_setattr(struct drafts *d, uint64_t ino, bool mode_set, mode_t mode, bool size_set,
	uint64_t size, const struct timespec *mtime, const char **which);

/* drafts_unlink -- remove name: 0 or -ENOENT */
int drafts_unlink(struct drafts *d, const char *name);

/* drafts_rename -- draft from becomes to (an existing draft to is replaced) */
int drafts_rename(struct drafts *d, const char *from, const char *to);

/*
 * drafts_copy_out -- copy draft name's bytes to dst (cap bytes at most):
 * the size, -ENOENT, or -EMSGSIZE (larger than cap, nothing copied)
 */
ssize_t drafts_copy_out(struct drafts *d, const char *name, void *dst, size_t cap);

/*
 * drafts_entry -- the i-th draft, in creation order: 0 with name (at least
 * NAME_MAX + 1 bytes) and *ino, -ENOENT past the last
 */
int drafts_entry(struct drafts *d, unsigned i, char *name, uint64_t *ino);

/* drafts_usage -- the drafts now, their bytes, and the limits */
void drafts_usage(struct drafts *d, unsigned *count, size_t *bytes, unsigned *max, size_t *budget);

#endif /* RPMAFS_DRAFT_H */
