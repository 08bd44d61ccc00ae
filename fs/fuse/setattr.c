// SPDX-License-Identifier: BSD-3-Clause
/* setattr.c -- how a spool file answers chmod, chown, truncate and utimes (see setattr.h) */

#include <errno.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include "setattr.h"
#include "spool/framed.h"
#include "spool/handle.h"
#include "spool/spool.h"

int setattr_spool(const struct setattr_what *w, bool *empty_intent)
{
	const struct stat *a = w->attr;

	*empty_intent = false;
	/* cp -p, install -m, shutil.copy: the owner may "set" the mode */
	if ((w->to_set & FUSE_SET_ATTR_MODE) && w->caller != w->owner && w->caller != 0)
		return EPERM;
	/* chown to oneself succeeds, as on any file; nobody gives a spool away */
	if ((w->to_set & FUSE_SET_ATTR_UID) && a->st_uid != w->owner)
		return EPERM;
	if ((w->to_set & FUSE_SET_ATTR_GID) && a->st_gid != w->group)
		return EPERM;
	if (!(w->to_set & FUSE_SET_ATTR_SIZE))
		return 0;
	if (w->fh && w->fh->frame) {
		int err = framed_truncate(w->fh, a->st_size);

		if (err)
			return err;
	} else if (a->st_size != 0 && a->st_size != w->length) {
		return EPERM;
	}
	*empty_intent = a->st_size == 0;
	return 0;
}
