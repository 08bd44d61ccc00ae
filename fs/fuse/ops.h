/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ops.h -- the FUSE low-level operations table of the mount: each request
 * goes to the file of its inode's kind (tree.h)
 */
#ifndef RPMAFS_OPS_H
#define RPMAFS_OPS_H

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

extern const struct fuse_lowlevel_ops rpmafs_ops;

#endif /* RPMAFS_OPS_H */
