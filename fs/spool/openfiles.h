/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * openfiles.h -- the open files of a spool (struct handle), for unmount
 *
 * A handle lives while the kernel holds its file open or a message sent
 * through it is unfinished (handle->refs). After a lazy unmount
 * (`fusermount3 -u -z`) the kernel may close the FUSE connection before
 * the RELEASE of a file that was still open reaches the daemon, so nothing
 * would ever drop the open file's reference: each spool keeps its open
 * handles in a list and frees the leftovers at teardown.
 */
#ifndef RPMAFS_OPENFILES_H
#define RPMAFS_OPENFILES_H

struct handle;
struct spool;

/* openfiles_add -- fh is open (counted in open_handles unless a status snapshot) */
void openfiles_add(struct spool *sp, struct handle *fh);

/* openfiles_remove -- fh was released (or its open was interrupted) */
void openfiles_remove(struct spool *sp, struct handle *fh);

/*
 * openfiles_free -- unmount, after spool_close finished every message: free
 * the handles whose RELEASE never came (their unsent frames are dropped)
 */
void openfiles_free(struct spool *sp);

#endif /* RPMAFS_OPENFILES_H */
