/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * msg.h -- a spool's message queues, and the FUSE replies owed
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

struct handle;
struct msg;

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
	size_t offset;		/* payload offset from the pool's base */
	uint32_t len;
	uint64_t seq;		/* the work request id (wr_id): 1, 2, 3, ... per spool */
	uint64_t deadline_ms;	/* while pending: fail with ENOTCONN after this */
	uint64_t posted_ms;	/* when it was posted (monotonic) */
	bool numbered;		/* receiver confirmation: posted with its number, wire */
	bool parked;		/* completed, waiting for its acknowledgement (confirm.h) */
	bool resend;		/* not acknowledged when the connection died: pending again */
	uint32_t wire;
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
