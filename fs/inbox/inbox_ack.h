/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inbox_ack.h -- receiver confirmation on the inbox's side (common/ack.h,
 * docs/design.md §13.4): a message from a sender that offered
 * RPMAFS_PDATA_F_ACK is acknowledged only once its last byte was read
 *
 * Each acknowledging connection holds a share of the shared receive queue
 * (its credits + 1, see inbox_ack_offer) and the numbers of its messages
 * still held in slots, oldest first. Readers may finish a connection's
 * messages out of order (competing readers); the acknowledgement covers the
 * longest prefix read, and the slots of that prefix are re-posted before it
 * is sent, so the credits it carries are receives that are there. Plain
 * senders (and rpmafs senders without the flag) get no acknowledgement
 * traffic: their slots are re-posted at read, as before.
 *
 * Acknowledgements are coalesced, as rpma-recv's (tools/rpma-recv/
 * confirm.h), which acknowledges once per batch of completions where the
 * inbox sees one read at a time. One is due at once when a REQUEST is
 * unanswered or what it waits for (everything sent before it) was read;
 * when everything the connection sent was read and some of it came with
 * RPMAFS_IMM_PROMPT (a sync write; a pool or credits running short); or
 * once half the connection's share (at most INBOX_ACK_EVERY) was read
 * since the last one, so that its credits never run out while a reader
 * reads. A PROMPT with more of its messages still unread is not taken at
 * its word: a sender held back by its credits marks every message it
 * sends, and acknowledging each read gave no more than one per half share
 * does. Otherwise an acknowledgement is held, at most INBOX_ACK_DELAY_MS
 * (the caller's timer, inbox_conn.c). Each one is a SEND and its
 * completion: under Soft-RoCE a system call that runs the protocol, on
 * hardware a doorbell and a CQE.
 *
 * Not thread-safe: the caller serializes every call (inbox.c: ib->ack_lock);
 * only the loop thread sends (inbox_ack_send, inbox_ack_sent).
 */
#ifndef RPMAFS_INBOX_ACK_H
#define RPMAFS_INBOX_ACK_H

#include <infiniband/verbs.h>
#include <librpma.h>
#include <stdbool.h>
#include <stdint.h>

#include "ackreq.h"
#include "ackring.h"

struct rpmafs_auth;

#define INBOX_ACK_BUFS RPMAFS_ACKRING_DEPTH /* acknowledgements in flight on one connection */
#define INBOX_ACK_NONE UINT32_MAX
#define INBOX_ACK_EVERY 16    /* messages read: at most this many per acknowledgement */
#define INBOX_ACK_DELAY_MS 2 /* an acknowledgement nobody waits for is held at most this long */

struct inbox_ack;

/* one connection's acknowledgement state; zeroed = off */
struct inbox_ack_conn {
	bool on;	/* the sender offered the flag and it was accepted */
	uint32_t share; /* receives held for it (0: none promised, credits 0) */
	uint32_t idx;	/* its lane of acknowledgement buffers (ackring.h) */
	/* what was taken in: the last number, the REQUESTs (ackreq.h) */
	struct rpmafs_ackreq req;
	uint32_t read_upto;   /* every message up to this one was read (in order) */
	uint32_t prompt_upto; /* a REQUEST waits for the messages up to this one */
	uint32_t prompted;    /* the last message sent with RPMAFS_IMM_PROMPT */
	uint32_t sent_acked;  /* what the last acknowledgement said (first: the first - 1) */
	uint16_t sent_requests;
	unsigned busy;	     /* bit i: its lane's buffer i is being sent */
	bool owed;	     /* an acknowledgement is due and no buffer was free */
	uint32_t head, tail; /* its slots held, oldest first (INBOX_ACK_NONE: none) */
	uint64_t acks, duplicates;
};

enum inbox_take {
	INBOX_TAKE_RECORD,    /* a message for the queue */
	INBOX_TAKE_DUPLICATE, /* a number already taken on this connection: dropped */
	INBOX_TAKE_REQUEST,   /* no message: the sender asks for an acknowledgement */
	INBOX_TAKE_BAD,	      /* not what the protocol allows: close the connection */
};

/* re-post a slot's receive (the caller's shared queue) */
typedef void (*inbox_post_fn)(void *arg, uint32_t slot);

/*
 * inbox_ack_new -- the state for slots receive buffers and up to conns
 * acknowledging connections, with their registered buffers. 0, or a
 * negative errno / rpma error.
 */
int inbox_ack_new(struct rpma_peer *peer, uint32_t slots, uint32_t conns, struct inbox_ack **a_ptr);

/* inbox_ack_delete -- after every connection was dropped; *a_ptr = NULL */
void inbox_ack_delete(struct inbox_ack **a_ptr);

/*
 * inbox_ack_offer -- a sender offered the flag: turn ac on with a share of
 * the queue. Returns the credits for the accept (0: none promised, the
 * sender keeps its own window and RNR holds it back), or -1: no
 * acknowledgement buffer left (ac stays off: accept without the flag).
 */
int inbox_ack_offer(struct inbox_ack *a, struct inbox_ack_conn *ac);

/*
 * inbox_ack_take -- classify a successful receive completion of ac's
 * connection in slot; a RECORD is now held for ac (*why for BAD)
 */
enum inbox_take inbox_ack_take(struct inbox_ack *a, struct inbox_ack_conn *ac, uint32_t slot,
	const struct ibv_wc *wc, const char **why);

/* inbox_ack_num -- the number of the message inbox_ack_take just held in slot for its connection */
uint32_t inbox_ack_num(const struct inbox_ack *a, uint32_t slot);

/* inbox_ack_plain -- slot holds a message of a connection that is not acknowledged */
void inbox_ack_plain(struct inbox_ack *a, uint32_t slot);

/*
 * inbox_ack_session -- slot holds message inbox_ack_num(slot) of session,
 * queued and marked delivered (docs/design.md §13.4): a re-send of it on
 * a later connection finds it here until it is read
 */
void inbox_ack_session(struct inbox_ack *a, uint32_t slot, uint64_t session);

/*
 * inbox_ack_hold_resend -- slot holds a re-send of a message its session
 * already had queued. true: that original is still unread, and the re-send
 * is held (its connection's acknowledgement does not pass it) until the
 * original is read, when inbox_ack_next_resend gives it back; false: the
 * original was read, so the re-send is taken as read now
 * (inbox_ack_released)
 */
bool inbox_ack_hold_resend(struct inbox_ack *a, uint32_t slot, uint64_t session);

/*
 * inbox_ack_next_resend -- after slot's message was read: a re-send that
 * was held for it, now to be taken as read (inbox_ack_released), or
 * INBOX_ACK_NONE
 */
uint32_t inbox_ack_next_resend(struct inbox_ack *a, uint32_t slot);

/*
 * inbox_ack_released -- slot's message was read to its last byte (or, a
 * re-send of its session's, needs no reading: inbox.c): the
 * slots that may go back to the queue are posted through post; returns the
 * connection whose acknowledgement moved on (send it), or NULL
 */
struct inbox_ack_conn *inbox_ack_released(
	struct inbox_ack *a, uint32_t slot, inbox_post_fn post, void *arg);

/*
 * inbox_ack_drop -- ac's connection is gone: its share is given back, its
 * slots read out of order are posted, and each of its messages not read
 * yet is offered to withdraw (true: it was taken off the queue unread, the
 * sender will send it again, post it; false: a reader is on it, it is
 * posted at its read, unacknowledged). ac is off afterwards.
 */
void inbox_ack_drop(struct inbox_ack *a, struct inbox_ack_conn *ac,
	bool (*withdraw)(void *arg, uint32_t slot), inbox_post_fn post, void *arg);

enum inbox_ack_due {
	INBOX_ACK_NOTHING, /* nothing to acknowledge */
	INBOX_ACK_HOLD,	   /* something, nobody waits for it: at most INBOX_ACK_DELAY_MS */
	INBOX_ACK_NOW,	   /* the sender waits, or its credits would run short */
};

/* inbox_ack_due -- whether ac's acknowledgement goes now, later or not at all */
enum inbox_ack_due inbox_ack_due(const struct inbox_ack_conn *ac);

/*
 * inbox_ack_send -- send ac's acknowledgement on conn now, whatever
 * inbox_ack_due says, unless there is nothing to acknowledge; sealed with
 * auth on an authenticated connection (NULL: without a key): 0 (sent, or
 * nothing to), 1 (no buffer free: owed, sent at the next completion), -1
 * (failed: *why)
 */
int inbox_ack_send(struct inbox_ack *a, struct inbox_ack_conn *ac, struct rpma_conn *conn,
	struct rpmafs_auth *auth, const char **why);

/* inbox_ack_sent -- the completion of an acknowledgement's send; 0 or -1 (failed: *why) */
int inbox_ack_sent(
	struct inbox_ack *a, struct inbox_ack_conn *ac, const struct ibv_wc *wc, const char **why);

#endif /* RPMAFS_INBOX_ACK_H */
