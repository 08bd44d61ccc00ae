// SPDX-License-Identifier: BSD-3-Clause
/* msg.c -- a spool's messages: their kinds, queues and replies (see msg.h) */

#include <errno.h>
#include <stdlib.h>

#include "msg.h"
#include "runtime/pool.h"

/* a message of kind, with one hold (the spool's) */
static struct msg *msg_alloc(enum msg_kind kind)
{
	struct msg *msg = calloc(1, sizeof(*msg));

	if (!msg)
		return NULL;
	msg->kind = kind;
	msg->slot = POOL_NO_SLOT;
	atomic_init(&msg->holds, 1);
	return msg;
}

/* the payload: slot's bytes (from payload on), as the link posts them */
static void msg_payload(struct msg *msg, const struct pool *pool, unsigned slot,
	const void *payload, uint32_t len)
{
	msg->slot = slot;
	msg->small = pool_is_small(pool, slot);
	msg->offset = (size_t)((const char *)payload - (const char *)pool_base(pool));
	msg->len = len;
}

int msg_new_write(struct handle *fh, fuse_req_t req, const struct pool *pool, unsigned slot,
	const void *payload, uint32_t len, bool sync, struct msg **msg_ptr)
{
	struct msg *msg = msg_alloc(MSG_DATA);

	if (!msg)
		return -ENOMEM;
	msg->fh = fh;
	msg->req = req;
	msg->write_size = len;
	msg->sync = sync;
	msg_payload(msg, pool, slot, payload, len);
	*msg_ptr = msg;
	return 0;
}

int msg_new_file(struct handle *fh, fuse_req_t req, const struct pool *pool, unsigned slot,
	uint32_t len, bool wait, struct msg **msg_ptr)
{
	struct msg *msg = msg_alloc(MSG_DATA);

	if (!msg)
		return -ENOMEM;
	msg->fh = fh;
	msg->req = req;
	msg->flush = true;
	msg->sync = wait;
	msg_payload(msg, pool, slot, pool_slot_ptr(pool, slot), len);
	*msg_ptr = msg;
	return 0;
}

int msg_new_draft(fuse_req_t req, struct pool *pool, unsigned slot, uint32_t len, bool wait,
	void (*answered)(void *ctx, uint64_t arg, int err), void *ctx, struct msg **msg_ptr)
{
	struct msg *msg = msg_alloc(len ? MSG_DATA : MSG_EMPTY);

	if (!msg)
		return -ENOMEM;
	msg->req = req;
	msg->flush = true; /* answered 0 or an errno, like a close */
	msg->sync = wait;
	msg->answered = answered;
	msg->answered_ctx = ctx;
	if (len)
		msg_payload(msg, pool, slot, pool_slot_ptr(pool, slot), len);
	else
		pool_put(pool, slot); /* nothing to send from it */
	*msg_ptr = msg;
	return 0;
}

int msg_new_empty(struct handle *fh, struct msg **msg_ptr)
{
	struct msg *msg = msg_alloc(MSG_EMPTY);

	if (!msg)
		return -ENOMEM;
	msg->fh = fh;
	*msg_ptr = msg;
	return 0;
}

int msg_new_fence(uint64_t seq, struct msg **msg_ptr)
{
	struct msg *msg = msg_alloc(MSG_FENCE);

	if (!msg)
		return -ENOMEM;
	msg->seq = seq;
	msg->signaled = true;
	*msg_ptr = msg;
	return 0;
}

void msg_delete(struct msg **msg_ptr)
{
	free(*msg_ptr);
	*msg_ptr = NULL;
}

void msgq_push(struct msgq *q, struct msg *msg)
{
	msg->next = NULL;
	if (q->tail)
		q->tail->next = msg;
	else
		q->head = msg;
	q->tail = msg;
	q->count++;
}

struct msg *msgq_pop(struct msgq *q)
{
	struct msg *msg = q->head;

	if (msg) {
		q->head = msg->next;
		if (!q->head)
			q->tail = NULL;
		q->count--;
		msg->next = NULL;
	}
	return msg;
}

void msg_unhold(struct msg *msg)
{
	if (atomic_fetch_sub(&msg->holds, 1) == 1)
		free(msg);
}

void replies_add(struct replies *rs, struct reply *r)
{
	if (r->msg)
		atomic_fetch_add(&r->msg->holds, 1);
	r->next = NULL;
	*rs->tail = r;
	rs->tail = &r->next;
}

void reply_msg(struct replies *rs, struct msg *msg, bool write, int err)
{
	/* a close(2) that sent a file message: 0 where a write returns its size */
	if (msg->flush && write) {
		write = false;
		err = 0;
	}
	msg->reply = (struct reply){.req = msg->req, .write = write, .size = msg->write_size,
		.err = err, .msg = msg};
	msg->req = NULL;
	replies_add(rs, &msg->reply);
}

void replies_send(struct replies *rs)
{
	struct reply *r = rs->head;

	while (r) {
		struct reply *next = r->next;

		if (r->msg && r->msg->answered)
			r->msg->answered(r->msg->answered_ctx, r->msg->answered_arg,
				r->write ? 0 : r->err);
		if (r->write)
			fuse_reply_write(r->req, r->size);
		else
			fuse_reply_err(r->req, r->err);
		if (r->msg)
			msg_unhold(r->msg);
		else
			free(r);
		r = next;
	}
	rs->head = NULL;
	rs->tail = &rs->head;
}
