/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * msg.h -- a spool's messages: one constructor per kind, their queues, and
 * the FUSE replies owed
 *
 * Every message is made by one of the msg_new_* constructors below (the
 * spool's fence by msg_new_fence), handed to spool_submit(), which takes
 * it, or freed with msg_delete() if it never was.
 *
 * Replies are collected in a struct replies while sp->lock is held and
 * sent by replies_send() after it is released. A message's memory is freed
 * when both the spool is done with it and its reply (if queued) was sent:
 * msg->holds counts the two.
 */
#ifndef RPMAFS_MSG_H
#define RPMAFS_MSG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include "link/link.h"

struct await;
struct handle;
struct msg;
struct pool;

enum msg_kind {
	MSG_DATA,  /* a write's payload, in a pool slot */
	MSG_EMPTY, /* a 0-byte message: rpma_send(conn, NULL, 0, 0, ...) */
	MSG_FENCE, /* a 0-byte RDMA WRITE posted signaled after unsignaled sends */
};

/* a FUSE reply owed, sent after sp->lock is released */
struct reply {
	struct reply *next;
	fuse_req_t req;
	bool write;	/* fuse_reply_write(req, size), else fuse_reply_err(req, err) */
	size_t size;
	int err;
	struct msg *msg; /* the message it is part of; NULL: allocated alone */
};

struct msg {
	struct msg *next;
	enum msg_kind kind;
	struct handle *fh;	/* the handle it was written through (NULL: fence) */
	fuse_req_t req;		/* owed a reply: at post (async) or at the end (sync) */
	size_t write_size;	/* what the reply to req says was written */
	bool sync;		/* reply at completion, signaled */
	bool flush;		/* req is a close(2) (framing = file): answered 0 or errno */
	bool signaled;
	unsigned slot;		/* pool slot holding the payload, or POOL_NO_SLOT */
	bool small;		/* that slot is a small one (pool.h) */
	size_t offset;		/* payload offset from the pool's base */
	uint32_t len;
	uint64_t seq;		/* the work request id (wr_id): 1, 2, 3, ... per spool */
	uint64_t deadline_ms;	/* while pending: fail with ENOTCONN after this */
	uint64_t posted_ms;	/* when it was posted (monotonic) */
	bool numbered;		/* receiver confirmation: posted with its number, wire */
	bool parked;		/* completed, waiting for its acknowledgement (confirm.h) */
	bool resend;		/* not acknowledged when the connection died: pending again */
	uint32_t wire;
	/*
	 * protect = encrypt: the payload is ciphertext in its slot since its
	 * last post; its next post makes it plaintext again first, its end
	 * forgets it (link.h; zero: plaintext)
	 */
	struct link_sealed sealed;
	struct await *waiter;	/* a sync write's worker watching for its end (await.h) */
	uint64_t armed_ns;	/* a sync write: when it was armed, for the spin budget (0: not) */
	struct reply reply;	/* the reply it owes, once collected */
	/* called with the outcome just before its reply is sent (NULL: none) */
	void (*answered)(void *ctx, uint64_t arg, int err);
	void *answered_ctx;
	uint64_t answered_arg;
	atomic_uint holds;	/* the spool's, and its reply's until sent */
};

struct msgq {
	struct msg *head, *tail;
	unsigned count;
};

/*
 * msg_new_write -- a write(2) through fh (framing = write) of len bytes at
 * payload, inside pool slot slot of pool: answered with len written, when
 * queued, or at its end when sync (the handle's: mode = sync, O_SYNC).
 * Takes the slot. 0 or -ENOMEM (the slot is then still the caller's).
 */
int msg_new_write(struct handle *fh, fuse_req_t req, const struct pool *pool, unsigned slot,
	const void *payload, uint32_t len, bool sync, struct msg **msg_ptr);

/*
 * msg_new_file -- a file message (framing = file): the len bytes assembled
 * in slot, sent by req, the close(2) (FLUSH) of fh; answered 0 or an errno,
 * at its end when wait (close = wait, sync), else once queued. Takes the
 * slot. 0 or -ENOMEM (the slot is then still the caller's).
 */
int msg_new_file(struct handle *fh, fuse_req_t req, const struct pool *pool, unsigned slot,
	uint32_t len, bool wait, struct msg **msg_ptr);

/*
 * msg_new_draft -- a draft's bytes (len in slot, or a 0-byte message when
 * len is 0: the slot then goes back to the pool), sent by req, the rename(2)
 * of the draft onto a spool file; answered like a close (0 or an errno), at
 * its end when wait. answered(ctx, 0, err) is called with the outcome just
 * before the reply. Takes the slot. 0 or -ENOMEM (the slot is then still
 * the caller's).
 */
int msg_new_draft(fuse_req_t req, struct pool *pool, unsigned slot, uint32_t len, bool wait,
	void (*answered)(void *ctx, uint64_t arg, int err), void *ctx, struct msg **msg_ptr);

/*
 * msg_new_empty -- the 0-byte message of fh's release (docs/design.md
 * §4.1: opened O_TRUNC or truncated to 0, nothing written, nothing failed);
 * nobody waits for it. 0 or -ENOMEM.
 */
int msg_new_empty(struct handle *fh, struct msg **msg_ptr);

/*
 * msg_new_fence -- the spool's fence: a 0-byte RDMA WRITE, signaled, wr_id
 * seq, that confirms the unsignaled sends before it. 0 or -ENOMEM.
 */
int msg_new_fence(uint64_t seq, struct msg **msg_ptr);

/* msg_delete -- free a message never handed to spool_submit(); NULLs the pointer */
void msg_delete(struct msg **msg_ptr);

void msgq_push(struct msgq *q, struct msg *msg);
struct msg *msgq_pop(struct msgq *q);

struct replies {
	struct reply *head, **tail;
};

#define REPLIES_INIT(rs) {.head = NULL, .tail = &(rs).head}

/* msg_unhold -- drop a hold on msg; the last one frees it */
void msg_unhold(struct msg *msg);

/* replies_add -- queue r (part of r->msg, which it holds, or allocated alone) */
void replies_add(struct replies *rs, struct reply *r);

/* reply_msg -- queue the reply msg owes: written (write) or the errno err; clears msg->req */
void reply_msg(struct replies *rs, struct msg *msg, bool write, int err);

/* replies_send -- send every queued reply, oldest first; no lock may be held */
void replies_send(struct replies *rs);

#endif /* RPMAFS_MSG_H */
