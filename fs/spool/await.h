/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * await.h -- a sync write awaited by the FUSE worker that holds it
 *
 * A sync write's reply is owed at its completion (or, with confirm =
 * receiver, its acknowledgement). Left to the loop thread, the completion
 * wakes it (epoll, the channel's read), it reaps and replies, and the
 * writer is woken after that: a hand-over between two threads per sync
 * message. Instead the worker that posted it polls the CQ itself for a
 * while (link_reap), so that the completion is reaped, and the reply sent,
 * by a thread that is already running. If the completion does not come
 * within the spin budget the worker returns and the loop replies, as
 * before: a slow peer costs the spin, never the reply.
 *
 * The budget follows the sync writes' own completion times: 1.5 x the
 * running mean of the last ones, between AWAIT_SPIN_MIN_NS and
 * AWAIT_SPIN_MAX_NS (docs/design.md §7).
 */
#ifndef RPMAFS_SPOOL_AWAIT_H
#define RPMAFS_SPOOL_AWAIT_H

#include <stdbool.h>
#include <stdint.h>

struct msg;
struct spool;

#define AWAIT_SPIN_MIN_NS 20000ULL   /* 20 µs: a hardware RC SEND is 1-2 µs */
#define AWAIT_SPIN_MAX_NS 2000000ULL /* 2 ms: never more CPU than this per write */

/* what a worker awaiting its sync message watches; msg->waiter points to it */
struct await {
	struct msg *msg; /* valid while !done */
	bool done;	 /* the message ended (spool_finish_locked), its reply collected */
	bool by_reap;	 /* it ended in a worker's reap (this one's or another's) */
	uint64_t until_ns; /* the end of the spin */
};

/* await_arm_locked -- before msg is posted: it will be awaited by w (sp->lock held) */
void await_arm_locked(struct spool *sp, struct msg *msg, struct await *w);

/*
 * await_ended_locked -- msg ends (spool_finish_locked): its time from arm
 * to end goes into the budget, its waiter (if still watching) is told
 * (sp->lock held)
 */
void await_ended_locked(struct spool *sp, struct msg *msg);

/*
 * await_sync -- after the post: reap the link's completions on this thread
 * until w's message has ended or the budget is spent, then let go of it
 * (its reply is then the loop thread's). No lock held.
 */
void await_sync(struct spool *sp, struct await *w);

#endif /* RPMAFS_SPOOL_AWAIT_H */
