/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * confirm.h -- receiver confirmation as a spool keeps it (docs/design.md
 * §8.6, common/ack.h): message numbers, the credits the receiver gave,
 * and the messages completed but not acknowledged yet
 *
 * With it on (the connection is receiver-confirmed, link_acks), a message
 * is posted with its number in the immediate data; its completion only
 * parks it here (it keeps its pool slot, its handle and the reply it owes),
 * and the acknowledgement of its number finishes it as confirmed. The
 * spool's lock protects all of it.
 */
#ifndef RPMAFS_CONFIRM_H
#define RPMAFS_CONFIRM_H

#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "msg.h"
#include "link/link.h"

struct rpmafs_ack;

struct confirm {
	bool on;	     /* the connection up now is receiver-confirmed */
	uint32_t next;	     /* the number the next message gets: 1, 2, ... (mod 2^30) */
	uint32_t acked;	     /* the last number acknowledged */
	bool limited;	     /* the receiver gave credits: at most up to limit */
	uint32_t limit;
	unsigned unanswered; /* acknowledgement requests not answered yet */
	uint64_t heard_ms;   /* the last acknowledgement, or the connection's start */
	uint64_t asked_ms;   /* when the unanswered request was posted (0: none) */
	struct msgq parked;  /* completed, waiting for their acknowledgement, in order */
};

/* confirm_init -- numbering from 1, off */
void confirm_init(struct confirm *cf);

/*
 * confirm_up -- a connection is up: receiver-confirmed (on) or not; credits:
 * what the receiver's accept granted (0: none given), counted from the
 * first number this connection will carry: the oldest re-send in pending,
 * else the next new number
 */
void confirm_up(struct confirm *cf, bool on, unsigned credits, const struct msgq *pending);

/*
 * confirm_awaits -- an acknowledgement is still to come: a number posted
 * beyond the last acknowledged, or a request unanswered (false when off)
 */
bool confirm_awaits(const struct confirm *cf);

/* confirm_may_post -- the receiver has room for msg, the next to post (always, when off) */
bool confirm_may_post(const struct confirm *cf, const struct msg *msg);

/*
 * confirm_imm -- the immediate data of msg when posted now, in a chain of
 * sends being built: its own number when it was numbered before (a message
 * posted again keeps its number), else *next, which then advances (start
 * *next at cf->next for a chain); with RPMAFS_IMM_PROMPT when someone waits
 * for it (prompt) or the credits run out. False when the receiver has no
 * room for that number: the chain ends before msg. Always 0 and true when
 * off.
 */
bool confirm_imm(const struct confirm *cf, const struct msg *msg, bool prompt, uint32_t *next,
	uint32_t *imm);

/* confirm_posted -- msg went with imm (confirm_imm): it keeps that number from now on */
void confirm_posted(struct confirm *cf, struct msg *msg, uint32_t imm);

/*
 * confirm_park -- msg's send completed: true when it now waits here for
 * its acknowledgement (counted completed and unacked in st), false when the
 * caller finishes it (off -- also for a message numbered on an earlier,
 * receiver-confirmed connection -- a fence, or already acknowledged)
 */
bool confirm_park(struct confirm *cf, struct msg *msg, struct spool_stats *st);

/*
 * confirm_acked -- the receiver has acknowledged msg on this connection:
 * it wrote it out, whatever its send's completion says (an ack can come
 * before the completion of the send it covers, which may then fail with
 * the connection)
 */
bool confirm_acked(const struct confirm *cf, const struct msg *msg);

/*
 * confirm_retry -- msg's send failed with status: true when it waits here
 * to be sent again after the next connection (numbered, and a failure of
 * the connection or the responder, not of the message: flushed, retries
 * exceeded, remote operation error), as confirm_park; false when the
 * caller fails it
 */
bool confirm_retry(struct confirm *cf, struct msg *msg, int status, struct spool_stats *st);

/*
 * confirm_requeue -- the connection is gone: every numbered message not
 * acknowledged (parked here, then what is still in_flight) goes back to
 * the front of pending, oldest first, marked resend, with the deadline;
 * counted back from posted to pending in st. Fences in in_flight are
 * dropped; what else is there stays for the caller to fail.
 */
void confirm_requeue(struct confirm *cf, struct msgq *in_flight, struct msgq *pending,
	uint64_t deadline_ms, struct spool_stats *st);

/* confirm_ack -- a valid acknowledgement arrived (link_ops.on_ack) */
void confirm_ack(struct confirm *cf, const struct rpmafs_ack *ack, unsigned unanswered);

/* confirm_take -- the next parked message the acknowledgements cover, or NULL */
struct msg *confirm_take(struct confirm *cf);

/* confirm_take_any -- the next parked message whatever its state (the connection is gone) */
struct msg *confirm_take_any(struct confirm *cf);

/*
 * confirm_request -- ask for an acknowledgement at once (fsync, close):
 * a 0-byte REQUEST through link, unless one is unanswered or nothing
 * waits for one. Returns link_post's result (0 when nothing was posted).
 */
int confirm_request(struct confirm *cf, struct link *link);

enum confirm_watch {
	CONFIRM_HEARD,	     /* the peer answers, or nothing waits for it */
	CONFIRM_SILENT,	     /* it left a request unanswered too long: it is gone */
	CONFIRM_POST_FAILED, /* the request could not be posted */
};

/*
 * confirm_watch -- is the peer still there while messages wait for their
 * acknowledgement? The NIC has them, so no completion can tell (the
 * in-flight timeout cannot see them, docs/design.md §8.5): when the oldest
 * parked message has heard nothing for silence_ms / 4, a REQUEST asks the
 * receiver to speak; when that is unanswered for silence_ms / 2 and nothing
 * came for silence_ms since the oldest was posted, the peer is SILENT. A
 * receiver that acknowledges only what was read (the inbox) answers a
 * REQUEST at once with what it has, so a slow reader is never taken for a
 * dead peer. *due: when to look again (0: no need).
 */
enum confirm_watch confirm_watch(
	struct confirm *cf, struct link *link, uint64_t now, uint64_t silence_ms, uint64_t *due);

/* confirm_down -- the connection is gone: off, and no request is pending any more */
void confirm_down(struct confirm *cf);

#endif /* RPMAFS_CONFIRM_H */
