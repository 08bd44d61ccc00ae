/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link.h -- the RDMA connection to one peer, and everything about its life
 *
 * A link is one state machine (link.c's table lists every transition,
 * and the link refuses any other):
 *
 *	LINK_BACKOFF -> LINK_CONNECTING -> LINK_UP -> LINK_DRAINING -> LINK_BACKOFF
 *	    ^                  |                                          ^
 *	    |                  +--- the attempt failed -------------------+
 *	    |                  +--- retrying alone will not mend it ---> LINK_RETRY_SLOW
 *	    +------------------------------------- after the cap ---------------+
 *	any of them -> LINK_CLOSED (link_close, at unmount; nothing leaves it)
 *
 * BACKOFF waits out the reconnection delay (100 ms, doubled after each
 * failed attempt up to 5 s, back to 100 ms once connected). CONNECTING is
 * one attempt, in a short-lived thread of its own (address and route
 * resolution and the CM handshake block). UP posts. DRAINING has lost the
 * connection (a CM event, a failed completion, or the user said so with
 * link_drop) and waits for the flush completions of what is still
 * outstanding, at most the teardown grace. RETRY_SLOW follows an attempt
 * that retrying alone will not mend (the receiver's private data is
 * malformed, the pool cannot be registered): it waits the cap before the
 * next attempt, and the status says "failed". CLOSED is the end: no
 * connection, no attempt.
 *
 * The link reports upward only through struct link_ops, always from the
 * loop thread and with no lock of its own held; it never sees messages.
 */
#ifndef RPMAFS_LINK_H
#define RPMAFS_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "config.h"

struct loop;
struct devices;
struct link;
struct linkauth;
struct rpmafs_ack;

/* reconnection back-off: doubled after each failed attempt, up to the cap */
#define LINK_BACKOFF_FIRST_MS 100
#define LINK_BACKOFF_CAP_MS 5000
/* how long flush completions may take after a connection is lost */
#define LINK_TEARDOWN_GRACE_MS 2000
/* connection attempts in flight at once in the process (link.c says why) */
#define LINK_MAX_ATTEMPTS 16

/*
 * The send window and the send queue, one constraint: a spool keeps at
 * most LINK_WINDOW(nslots) sends in flight -- every pool slot holding a
 * message (nslots counts the big buffers and the small slots, pool.h),
 * plus two 0-byte messages (they hold no slot) -- and the send queue has
 * room for the window, a fence and one spare.
 */
#define LINK_WINDOW(nslots) ((nslots) + 2)
#define LINK_SQ_DEPTH(window) ((window) + 2)

/*
 * A send that has not completed after send_timeout_ms (at least 1 s) means
 * the peer is gone without a word: Soft-RoCE, for one, retries forever with
 * librpma's retry count of 7 when the link dies. The user then drops the
 * connection (link_drop), which flushes what is in flight.
 */
#define LINK_SILENCE_MS(send_timeout_ms) ((send_timeout_ms) > 1000 ? (send_timeout_ms) : 1000)

enum link_state {
	LINK_BACKOFF,	 /* waits out the back-off, then an attempt starts */
	LINK_CONNECTING, /* one attempt runs, in its own thread */
	LINK_UP,	 /* connected: posts go */
	LINK_DRAINING,	 /* lost: waits for the flushes of what was outstanding */
	LINK_RETRY_SLOW, /* an attempt failed that retrying alone will not mend: waits the cap */
	LINK_CLOSED,	 /* link_close: no connection, no attempt, for good */
	LINK_STATES
};

/* why on_down is called */
enum link_down {
	LINK_LOST,	     /* UP -> DRAINING: post nothing more */
	LINK_DRAINED,	     /* DRAINING -> BACKOFF: what is still outstanding never completes */
	LINK_ATTEMPT_FAILED, /* CONNECTING -> BACKOFF or RETRY_SLOW */
};

struct link_ops {
	/* the connection is up: the receiver's limit (0: none), its receives (0: unknown) */
	void (*on_up)(void *ctx, uint32_t peer_max_message, unsigned credits);
	/* completions reaped, oldest first; returns the posts still outstanding */
	unsigned (*on_completions)(void *ctx, const struct ibv_wc *wc, int n);
	/* the link is not up (reason: for the status and the log); returns as above */
	unsigned (*on_down)(void *ctx, enum link_down why, const char *reason);
	/*
	 * receiver confirmation (link_acks): ack is a valid acknowledgement
	 * (common/ack.h: every message up to ack->acked written out, credits
	 * more may be sent past it), unanswered acknowledgement requests
	 * remain; ack NULL: one was refused, the connection is dropped next
	 */
	void (*on_ack)(void *ctx, const struct rpmafs_ack *ack, unsigned unanswered);
	/*
	 * a completion is still awaited (a post outstanding, an
	 * acknowledgement expected): the CQ stays armed (link_settle); NULL:
	 * always. Called under the link's reap lock, none of the user's held.
	 */
	bool (*awaits)(void *ctx);
};

struct link_cfg {
	const struct rpmafs_peer_cfg *peer;
	struct devices *devices;
	struct loop *loop;
	unsigned window;  /* the most sends ever in flight (the SQ is sized from it) */
	uint64_t session; /* the spool's session id, offered in each request (0: none) */
	const struct link_ops *ops;
	void *ctx;
};

/* link_new -- a link in LINK_BACKOFF, first attempt due at once; 0 or -ENOMEM */
int link_new(const struct link_cfg *cfg, struct link **link_ptr);

/* link_delete -- free a closed link (see link_close); NULLs the pointer */
void link_delete(struct link **link_ptr);

/* link_tick -- loop thread: start a due attempt, end an overdue drain; next deadline */
uint64_t link_tick(struct link *link, uint64_t now);

enum link_op {
	LINK_SEND,	 /* rpma_send of len bytes at offset in the registered pool */
	LINK_SEND_EMPTY, /* a 0-byte message: rpma_send(conn, NULL, 0, 0, ...) */
	LINK_FENCE,	 /* a 0-byte RDMA WRITE, always signaled */
};

/*
 * link_post -- post one work request whose completion carries wr_id; only
 * while UP (between on_up and on_down(LINK_LOST) or link_drop). On an
 * encrypting connection a LINK_SEND's payload is encrypted in place and no
 * record of it is kept (a message that may be sent again goes through
 * link_post_batch with its struct link_sealed). Returns 0 or an RPMA_E_*
 * value.
 */
int link_post(struct link *link, enum link_op op, size_t offset, uint32_t len, uint64_t wr_id,
	bool signaled);

/*
 * struct link_sealed -- what encrypted a message's payload in place in the
 * pool (key = with protect = encrypt, docs/design.md §11.2): the sealing
 * connection's keys (held by the record, alive after the connection is
 * gone), the SEND's seq and imm. The link fills it when it seals a send
 * that names it (link_send.sealed) and, at the next post of the same
 * payload (a re-send on a new connection), gives the payload its plaintext
 * back before it seals it again. Zero: plaintext (always, with mac or
 * without a key). Under the lock that orders the posts, as link_post_batch.
 */
struct link_sealed {
	struct linkauth *by; /* NULL: the payload is plaintext */
	uint64_t seq;
	uint32_t imm;
};

/*
 * link_sealed_forget -- the message is done with (its slot goes back to the
 * pool): drop the record's keys without touching the payload; a zero
 * record is left as it is. Any thread, under the lock of the record.
 */
void link_sealed_forget(struct link_sealed *rec);

/* one send of a batch: LINK_SEND of len bytes at offset, or LINK_SEND_EMPTY (len 0) */
struct link_send {
	enum link_op op;
	size_t offset;
	uint32_t len;
	uint64_t wr_id;
	bool signaled;
	uint32_t imm; /* the immediate data, on a receiver-confirmed connection (link_acks) */
	/*
	 * a LINK_SEND's payload's record (NULL: none kept): plaintext back
	 * first if it holds one, the new seal recorded if the payload is
	 * encrypted (struct link_sealed)
	 */
	struct link_sealed *sealed;
};

/* the most sends link_post_batch takes at once (rpma_send_batch's limit) */
#define LINK_BATCH_MAX 64u

/*
 * link_post_batch -- post n (1..LINK_BATCH_MAX) sends, in order, as one
 * chain of work requests: one ibv_post_send, one doorbell. As link_post,
 * only while UP. On a receiver-confirmed connection every send carries its
 * imm (IBV_WR_SEND_WITH_IMM, as link_post_imm), else none. A send whose
 * record (sealed) holds an earlier seal gets its plaintext back first; on
 * an encrypting connection every LINK_SEND with a record is recorded, all
 * n, also those past a failure (they stay encrypted in the pool). Returns
 * 0 with all posted, or an RPMA_E_* value with *posted set to how many of
 * the first sends reached the send queue.
 */
int link_post_batch(struct link *link, const struct link_send *sends, unsigned n, unsigned *posted);

/*
 * link_post_imm -- link_post with the immediate data imm (common/ack.h)
 * when the connection is receiver-confirmed (link_acks), else link_post.
 * Fences carry none.
 */
int link_post_imm(struct link *link, enum link_op op, size_t offset, uint32_t len, uint64_t wr_id,
	bool signaled, uint32_t imm);

/*
 * link_session -- the session id the next connect request offers: the
 * spool's (link_cfg.session), or 0 when it offers none (it has none, or a
 * listening receiver rejected the last request with one: that next one
 * only, docs/design.md §11)
 */
uint64_t link_session(struct link *link);

/* link_acks -- the connection up now is receiver-confirmed: both ends offered RPMAFS_PDATA_F_ACK */
bool link_acks(struct link *link);

/*
 * link_reap -- reap one batch of the completions already in the CQ on the
 * calling thread and give them to on_completions and on_ack as the loop
 * thread would (a FUSE worker awaiting its sync write: its reply goes out
 * without a hand-over to the loop thread); never waits. Batches of the loop
 * and of workers are one at a time, in the CQ's order. Returns how many
 * completions it reaped (0: none yet), or -1 when the link is not up. Any
 * thread but the loop's, holding none of the user's locks; never
 * concurrently with link_close (which runs under the user's lock: the
 * mount stops its workers before it closes the links).
 */
int link_reap(struct link *link);

/*
 * link_settle -- after posting (link_post, link_post_imm, link_post_batch)
 * from any thread, once the poster's own locks are released: reap what the
 * CQ holds, as link_reap, and arm it if awaits says a completion is still
 * awaited. A completion that came inside the post (Soft-RoCE runs the
 * exchange in ibv_post_send) is then reaped by the poster and wakes no
 * other thread; one still to come raises an event for the loop, which
 * settles again. Nothing to do (no post since the last settle): an atomic
 * load. The loop's own posts are settled by the link (on_up, completions,
 * link_tick after the user's tick). As link_reap: holding none of the
 * user's locks, never concurrently with link_close.
 */
void link_settle(struct link *link);

/*
 * link_look -- loop thread: link_settle whether or not anything was posted
 * since the last settle (the user's tick reaping what it let wait: a
 * completion awaits did not want an event for)
 */
void link_look(struct link *link);

/*
 * link_drop -- the user saw the connection fail (a failed completion or
 * post, a send overdue): UP -> DRAINING, no callback. outstanding is what
 * is still posted; any thread, the caller's lock may be held.
 */
void link_drop(struct link *link, const char *reason, unsigned outstanding);

/* link_stop -- unmounting: start no more attempts; any thread */
void link_stop(struct link *link);

/*
 * link_close -- unmount, after the loop stopped: disconnect and free the
 * connection; any state -> CLOSED, for good (an attempt still running is
 * discarded when it ends). Closing a closed link does nothing.
 */
void link_close(struct link *link);

/* link_state -- the state now */
enum link_state link_state(struct link *link);

/* link_state_name -- the state's name, for the log ("BACKOFF", ...) */
const char *link_state_name(enum link_state s);

/*
 * link_may_move -- whether link.c's table has the transition from -> to
 * (the link refuses, and logs, any other)
 */
bool link_may_move(enum link_state from, enum link_state to);

/*
 * link_unsent -- what a write that could not be sent reports (docs/design.md
 * §4.2): an errno whose text says what became of the connection --
 * ECONNREFUSED when the last attempt was rejected by the receiver,
 * EHOSTUNREACH when no device or route reaches it (or the CM found it
 * unreachable), else ETIMEDOUT once a write has waited send_timeout_ms
 * (waited) or for a handshake that timed out, ENOTCONN when nothing more is
 * known -- and in why, what (the spool's words) with the last attempt's
 * failure, for the status' last_error.
 */
int link_unsent(struct link *link, bool waited, const char *what, char *why, size_t len);

/* link_status -- the state for the status file: connecting | connected | reconnecting | failed */
const char *link_status(struct link *link);

#endif /* RPMAFS_LINK_H */
