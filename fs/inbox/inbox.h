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

/* last_sender: NAME@ADDR:PORT, a key's name (auth.h) and an address */
#define INBOX_SENDER_MAX (64 + 1 + 64)

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

/*
 * inbox_slot_size -- the bytes of one receive buffer: inbox_max_message,
 * and with listen_keys the tag that follows every message (auth.h)
 */
uint32_t inbox_slot_size(const struct rpmafs_inbox_cfg *cfg);

/*
 * inbox_tick -- on the loop thread, from the mount's tick: send the
 * acknowledgements held back INBOX_ACK_DELAY_MS (inbox_ack.h), and drop
 * the connections whose proof of key (listen_keys) did not come within
 * RPMAFS_AUTH_PROOF_TIMEOUT_MS; returns the next such deadline (the
 * mount's monotonic ms), 0: none
 */
uint64_t inbox_tick(struct inbox *ib, uint64_t now);

/* inbox_queue -- the messages waiting to be read */
struct inbox_queue *inbox_queue(struct inbox *ib);

struct inbox_stats {
	struct inbox_counts q;
	uint32_t connections; /* open now */
	uint64_t accepted;
	uint64_t rejected;   /* refused at connect time (allow, private data, limit) */
	uint64_t failed;     /* connections closed for a bad message (e.g. oversize) */
	uint64_t acks;	     /* acknowledgements sent (receiver-confirmed senders) */
	uint64_t duplicates; /* dropped: a number taken (on its connection, its session) */
	/* listen_keys: refused at connect (no key, another key, a replay) or dropped later (a bad tag, no proof in time) */
	uint64_t auth_failures;
	char listen[300]; /* ADDR:PORT */
	char last_sender
		[INBOX_SENDER_MAX]; /* "" before the first message; NAME@ADDR:PORT with a key */
	const char *state;	    /* "listening" or "failed" */
};

/* inbox_stats_get -- a snapshot; any thread */
void inbox_stats_get(struct inbox *ib, struct inbox_stats *st);

#endif /* RPMAFS_INBOX_H */
