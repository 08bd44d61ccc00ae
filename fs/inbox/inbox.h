/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inbox.h -- the mount's receiving end: [rpmafs] listen (docs/design.md §13)
 *
 * Listens with rpma_ep_listen and accepts rpmafs senders (RPMF private
 * data), rpma-recv-compatible senders and plain librpma/verbs senders (no
 * private data); [rpmafs] allow is enforced at connect time. Every
 * connection receives into one shared receive queue of inbox_slots buffers
 * of inbox_max_message bytes, so memory does not grow with senders. A
 * message stays in its buffer until it has been read whole (inbox_queue.h);
 * only then is its receive posted again, so with every slot full senders
 * wait (RNR) and nothing is dropped. All RDMA work runs on the loop thread.
 *
 * Exactly once (docs/design.md §13.4): a receiver-confirmed sender with a
 * session (pdata.h, version 2) numbers its messages across connections and
 * sends again what was not acknowledged when a connection was lost. The
 * inbox marks (session, number) in its table (common/sessions.h, default
 * limits, the mount's monotonic clock) when it queues the message; a
 * connection's messages stay queued when it is lost, and a number seen
 * again, on any connection of the session, is dropped, counted in
 * duplicates and acknowledged in its place in that connection's order.
 */
#ifndef RPMAFS_INBOX_H
#define RPMAFS_INBOX_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "inbox_queue.h"

struct inbox;
struct loop;

/* the most connections open at once; each costs a queue pair and a descriptor */
#define INBOX_CONNS_MAX 1024

/*
 * inbox_new -- listen as cfg says, with the loop watching (not yet running);
 * no arrival callback until inbox_set_arrival. Returns 0, or -1 with the
 * reason in why.
 */
int inbox_new(const struct rpmafs_inbox_cfg *cfg, struct loop *loop, struct inbox **ib_ptr,
	char *why, size_t whylen);

/*
 * inbox_delete -- with the loop stopped: close every connection and the
 * listener, free everything (unread messages were never acknowledged)
 */
void inbox_delete(struct inbox **ib_ptr);

/*
 * inbox_set_arrival -- on_arrival(arg) is called on the loop thread after
 * each batch of arrivals (poll notification); set before the loop runs, or
 * from FUSE init
 */
void inbox_set_arrival(struct inbox *ib, void (*on_arrival)(void *), void *arg);

/* inbox_queue -- the messages waiting to be read */
struct inbox_queue *inbox_queue(struct inbox *ib);

struct inbox_stats {
	struct inbox_counts q;
	uint32_t connections; /* open now */
	uint64_t accepted;
	uint64_t rejected;    /* refused at connect time (allow, private data, limit) */
	uint64_t failed;      /* connections closed for a bad message (e.g. oversize) */
	uint64_t acks;	      /* acknowledgements sent (receiver-confirmed senders) */
	uint64_t duplicates;  /* dropped: a number taken (on its connection, its session) */
	char listen[300];     /* ADDR:PORT */
	char last_sender[64]; /* "" before the first message */
	const char *state;    /* "listening" or "failed" */
};

/* inbox_stats_get -- a snapshot; any thread */
void inbox_stats_get(struct inbox *ib, struct inbox_stats *st);

#endif /* RPMAFS_INBOX_H */
