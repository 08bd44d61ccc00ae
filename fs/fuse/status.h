/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status.h -- a spool's figures as `key: value` text and as xattrs
 *
 * <peer>.status and the user.rpma.* extended attributes of both files carry
 * the same keys, rendered from one spool_stats snapshot by one key table
 * (keys.h; inboxfile.c has the inbox's).
 */
#ifndef RPMAFS_STATUS_H
#define RPMAFS_STATUS_H

#include <stddef.h>
#include <time.h>

struct spool;

#include "keys.h"

#define STATUS_XATTR_PREFIX KEYS_XATTR_PREFIX

/*
 * status_render -- the whole status text (malloc'd, *len set), or NULL.
 * When changed is not NULL it gets the time the text last changed, as
 * far as renders have seen: the first render that differs from the one
 * before sets it to now.
 */
char *status_render(struct spool *sp, size_t *len, struct timespec *changed);

/*
 * status_xattr -- the value of xattr name into buf (not NUL-terminated);
 * returns its length, or -ENODATA when there is no such attribute.
 */
int status_xattr(struct spool *sp, const char *name, char *buf, size_t size);

/* status_xattr_names -- "user.rpma.state\0user.rpma.address\0..." and length */
const char *status_xattr_names(size_t *len);

#endif /* RPMAFS_STATUS_H */
