/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * setattr.h -- how a spool file answers chmod, chown, truncate and utimes
 *
 * Copy tools (cp -p, install, python shutil.copy, rsync) make these calls
 * around the data; a spool file must not turn a delivered message into a
 * failed command, nor pretend to store what it does not (docs/design.md
 * §4.7):
 *	mode		accepted from the owner and ignored: the mode is the mount's
 *	owner, group	accepted when they are the current owner and group
 *	size 0		the 0-byte intent (docs/design.md §4.1)
 *	size n		file framing, through the open file: the message is n
 *			bytes (framed.h); otherwise only the current length
 *	times		accepted and ignored (st_mtime is the last message)
 * Anything else is EPERM, and marks the open file's command as failed.
 */
#ifndef RPMAFS_SETATTR_H
#define RPMAFS_SETATTR_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

struct handle;

struct setattr_what {
	int to_set;		 /* FUSE_SET_ATTR_* */
	const struct stat *attr; /* the values asked for */
	uid_t caller;		 /* who asks (fuse_req_ctx) */
	uid_t owner;		 /* the spool file's owner and group */
	gid_t group;
	off_t length;	   /* its st_size now */
	struct handle *fh; /* the open file it goes through, or NULL */
};

/*
 * setattr_spool -- the answer for a spool file: 0 or an errno; *empty_intent
 * is set when the call is a truncation to 0
 */
int setattr_spool(const struct setattr_what *w, bool *empty_intent);

#endif /* RPMAFS_SETATTR_H */
