// SPDX-License-Identifier: BSD-3-Clause
/* xattrops.c -- the status figures as read-only xattrs (see xattrops.h) */

#include <errno.h>
#include <string.h>

#include "status.h"
#include "tree.h"
#include "xattrops.h"

void xattrops_reply(fuse_req_t req, const char *value, ssize_t n, size_t size)
{
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n); /* the caller asks how much room it needs */
	else if ((size_t)n > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, value, (size_t)n);
}

void xattrops_get(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct tree *m = fuse_req_userdata(req);
	char value[256];
	struct spool *sp;
	bool is_status;
	int n;

	sp = tree_spool_of(m, ino, &is_status);
	if (!sp) {
		fuse_reply_err(req, ino == FUSE_ROOT_ID ? ENODATA : ENOENT);
		return;
	}
	n = status_xattr(sp, name, value, sizeof(value));
	xattrops_reply(req, value, n, size);
}

void xattrops_list(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct tree *m = fuse_req_userdata(req);
	bool is_status;
	size_t len;
	const char *names;

	if (!tree_spool_of(m, ino, &is_status)) {
		if (size == 0)
			fuse_reply_xattr(req, 0);
		else
			fuse_reply_buf(req, NULL, 0);
		return;
	}
	names = status_xattr_names(&len);
	xattrops_reply(req, names, (ssize_t)len, size);
}

void xattrops_set(
	fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags)
{
	(void)ino;
	(void)value;
	(void)size;
	(void)flags;
	fuse_reply_err(req, strncmp(name, STATUS_XATTR_PREFIX, strlen(STATUS_XATTR_PREFIX)) == 0
				    ? EPERM
				    : ENOTSUP);
}

void xattrops_remove(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	xattrops_set(req, ino, name, NULL, 0, 0);
}
