/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spool_locked.h -- spool.c's steps under sp->lock that spooltick.c takes
 * too (private to the spool: nothing outside spool*.c includes it)
 *
 * Each is called with sp->lock held; replies it owes are collected in rs
 * and sent by the caller after the unlock (docs/design.md §10).
 */
#ifndef RPMAFS_SPOOL_LOCKED_H
#define RPMAFS_SPOOL_LOCKED_H

#include <stdbool.h>

#include "msg.h"
#include "spool.h"

/* spool_pending_pop -- take the oldest queued message (NULL: none) */
struct msg *spool_pending_pop(struct spool *sp);

/*
 * spool_refuse_locked -- end msg unsent with err (a message sent before
 * that waits to go again is counted posted and failed: EIO)
 */
void spool_refuse_locked(
	struct spool *sp, struct msg *msg, int err, const char *why, struct replies *rs);

/* spool_refuse_unsent_locked -- end msg for want of a connection; the link picks the errno */
void spool_refuse_unsent_locked(
	struct spool *sp, struct msg *msg, bool waited, const char *what, struct replies *rs);

/* spool_drop_locked -- the spool saw the link fail: tell the link, which drains it */
void spool_drop_locked(struct spool *sp, const char *reason);

/* spool_fence_locked -- confirm unsignaled sends now: a 0-byte RDMA WRITE, signaled */
void spool_fence_locked(struct spool *sp, struct replies *rs);

#endif /* RPMAFS_SPOOL_LOCKED_H */
