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

#include <stdbool.h>

#include "spool.h"

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
