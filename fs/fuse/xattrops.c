// SPDX-License-Identifier: BSD-3-Clause
/* xattrops.c -- the status figures as read-only xattrs (see xattrops.h) */

#include <errno.h>
#include <string.h>

#include "keys.h"
#include "status.h"
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

void xattrops_reply_none(fuse_req_t req, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, 0);
	else
		fuse_reply_buf(req, NULL, 0);
}

void xattrops_get(fuse_req_t req, struct spool *sp, const char *name, size_t size)
{
	char value[KEYS_VALUE_MAX];
	int n;

	n = status_xattr(sp, name, value, sizeof(value));
	xattrops_reply(req, value, n, size);
}

void xattrops_list(fuse_req_t req, size_t size)
{
	size_t len;
	const char *names = status_xattr_names(&len);

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
