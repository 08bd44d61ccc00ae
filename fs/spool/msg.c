// SPDX-License-Identifier: BSD-3-Clause
/* msg.c -- a spool's message queues, and the FUSE replies owed (see msg.h) */

#include <stdlib.h>

#include "msg.h"

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
