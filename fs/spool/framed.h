/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * framed.h -- the FUSE operations of a spool file opened with framing = file
 *
 * ops.c hands a file-framed handle's write, flush, ftruncate and release
 * here; the bytes are assembled by frame.c and sent by send.c as one
 * message per close(2) with new bytes (docs/design.md §4.6). Each function
 * ends in exactly one FUSE reply, sent now or when the message is posted
 * (async) or completed (sync).
 */
#ifndef RPMAFS_FRAMED_H
#define RPMAFS_FRAMED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "msg.h"

struct handle;
struct pool;
struct spool;

/* framed_write -- copy the write into the message at off (O_APPEND: at its end) */
void framed_write(fuse_req_t req, struct handle *fh, const char *buf, size_t size, off_t off);

/* framed_flush -- close(2): send what was written since the last close */
void framed_flush(fuse_req_t req, struct handle *fh, struct pool *pool);

/* framed_truncate -- ftruncate(fd, size): 0 or the errno to answer */
int framed_truncate(struct handle *fh, off_t size);

#endif /* RPMAFS_FRAMED_H */
