/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * keys.h -- a table of figures rendered as `key: value` text and as xattrs
 *
 * A status file (<peer>.status, inbox.status) and the user.rpma.* xattrs of
 * its files come from one key table: the text lists every key in table
 * order as "key: value\n", the xattr user.rpma.<key> is the same value, and
 * listxattr lists every key. A table's value() renders key k of a snapshot
 * its caller took (one snapshot per text, so the lines agree).
 */
#ifndef RPMAFS_KEYS_H
#define RPMAFS_KEYS_H

#include <stddef.h>

#define KEYS_XATTR_PREFIX "user.rpma."
/* the longest value, with its NUL */
#define KEYS_VALUE_MAX 320

struct keys {
	const char *const *names; /* count key names, in text order */
	unsigned count;
	/* value -- key k of snapshot snap into buf (len bytes, NUL-terminated) */
	void (*value)(const void *snap, unsigned k, char *buf, size_t len);
};

/* keys_text -- every "key: value\n" of snap (malloc'd, *len set), or NULL */
char *keys_text(const struct keys *t, const void *snap, size_t *len);

/*
 * keys_xattr -- the value of xattr name (user.rpma.<key>) of snap into buf
 * when it fits size (not NUL-terminated); returns its length, or -ENODATA
 * when the table has no such key
 */
int keys_xattr(const struct keys *t, const void *snap, const char *name, char *buf, size_t size);

/*
 * keys_xattr_names -- "user.rpma.<key>\0" for every key into buf (cap
 * bytes): the length, or -ERANGE when cap is too small
 */
int keys_xattr_names(const struct keys *t, char *buf, size_t cap);

#endif /* RPMAFS_KEYS_H */
