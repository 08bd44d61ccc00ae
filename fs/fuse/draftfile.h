/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * draftfile.h -- the FUSE operations of drafts (draft.h is their store)
 *
 * A regular file created in the root under a name no spool or status file
 * has is a draft; rename(draft, <peer>) sends it as one message of that
 * peer (docs/design.md §4.8). A draft is its creator's: another user may
 * list and stat it, not open, change, rename or remove it; root may. ops.c
 * calls these for a NODE_DRAFT inode or name (tree.h); each ends in exactly
 * one reply (a sent draft's rename is answered at the message's outcome).
 */
#ifndef RPMAFS_DRAFTFILE_H
#define RPMAFS_DRAFTFILE_H

#include <sys/stat.h>
#include <sys/types.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

struct tree;

/* draftfile_lookup -- the entry of draft ino (ENOENT: gone) */
void draftfile_lookup(fuse_req_t req, struct tree *t, fuse_ino_t ino);

/* draftfile_getattr -- its attributes, never cached (ENOENT: gone) */
void draftfile_getattr(fuse_req_t req, struct tree *t, fuse_ino_t ino);

/* draftfile_setattr -- mode, size, mtime by its owner; chown only to itself */
void draftfile_setattr(
	fuse_req_t req, struct tree *t, fuse_ino_t ino, struct stat *attr, int to_set);

/*
 * draftfile_create -- a new draft name in the root (the caller has made
 * sure name is no spool's or status file's); EPERM for what is not a
 * regular file, "." and ".."
 */
void draftfile_create(
	fuse_req_t req, struct tree *t, const char *name, mode_t mode, struct fuse_file_info *fi);

/* draftfile_open -- its owner's (EACCES); O_TRUNC empties it */
void draftfile_open(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi);

/* draftfile_read, draftfile_write -- its bytes (O_APPEND writes at its end) */
void draftfile_read(fuse_req_t req, struct tree *t, fuse_ino_t ino, size_t size, off_t off);
void draftfile_write(fuse_req_t req, struct tree *t, fuse_ino_t ino, const char *buf, size_t size,
	off_t off, struct fuse_file_info *fi);

/* draftfile_unlink -- draft name in the root removed, by its owner (EPERM otherwise) */
void draftfile_unlink(fuse_req_t req, struct tree *t, const char *name);

/*
 * draftfile_rename -- draft name in the root becomes newname: onto a
 * spool's name, sent as one message of it (removed once it succeeds); onto
 * a status file, EPERM; elsewhere, renamed as a draft (another draft
 * replaced: its owner's to do)
 */
void draftfile_rename(fuse_req_t req, struct tree *t, const char *name, fuse_ino_t newparent,
	const char *newname, unsigned int flags);

/* draftfile_access -- F_OK for anyone; R_OK, W_OK for its owner; never X_OK */
void draftfile_access(fuse_req_t req, struct tree *t, fuse_ino_t ino, int mask);

#endif /* RPMAFS_DRAFTFILE_H */
