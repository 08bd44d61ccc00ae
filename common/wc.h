/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wc.h -- how many work completions a completion queue is polled for at a
 * time by the mount's loop thread (its links' and its inbox's queues)
 *
 * One poll call brings at most this many; the caller loops until the queue
 * is empty, so the figure bounds the stack array and the time between two
 * looks at the other descriptors, not what a batch of completions may hold.
 */
#ifndef RPMAFS_WC_H
#define RPMAFS_WC_H

#define RPMAFS_WC_BATCH 32

#endif /* RPMAFS_WC_H */
