// SPDX-License-Identifier: BSD-3-Clause
/* confirm.c -- message numbers, credits and parked messages (see confirm.h) */

#include "ack.h"
#include "confirm.h"

/* how close to the receiver's limit a message asks for an acknowledgement at once */
#define CREDITS_LOW 2

void confirm_init(struct confirm *cf)
{
	*cf = (struct confirm){.next = 1};
}

void confirm_up(struct confirm *cf, bool on, unsigned credits)
{
	uint32_t last = (cf->next - 1) & RPMAFS_SEQ_MASK;

	cf->on = on;
	cf->unanswered = 0;
	cf->acked = last;
	cf->limited = on && credits > 0;
	cf->limit = rpmafs_seq_add(last, credits);
}

bool confirm_may_post(const struct confirm *cf)
{
	return !cf->on || !cf->limited || !rpmafs_seq_after(cf->next, cf->limit);
}

int confirm_post(struct confirm *cf, struct link *link, enum link_op op, struct msg *msg,
	bool prompt)
{
	uint32_t imm;
	int ret;

	if (!cf->on || op == LINK_FENCE)
		return link_post(link, op, msg->offset, msg->len, msg->seq, msg->signaled);
	if (cf->limited && rpmafs_seq_diff(cf->limit, cf->next) < CREDITS_LOW)
		prompt = true; /* the receiver's room is running out: let it say so soon */
	imm = cf->next | (prompt ? RPMAFS_IMM_PROMPT : 0);
	ret = link_post_imm(link, op, msg->offset, msg->len, msg->seq, msg->signaled, imm);
	if (!ret) {
		msg->wire = cf->next;
		msg->numbered = true;
		cf->next = rpmafs_seq_next(cf->next);
	}
	return ret;
}

static bool covered(const struct confirm *cf, const struct msg *msg)
{
	return !rpmafs_seq_after(msg->wire, cf->acked);
}

bool confirm_park(struct confirm *cf, struct msg *msg)
{
	if (!msg->numbered || covered(cf, msg))
		return false;
	msg->parked = true;
	msgq_push(&cf->parked, msg);
	return true;
}

void confirm_ack(struct confirm *cf, const struct rpmafs_ack *ack, unsigned unanswered)
{
	cf->acked = ack->acked;
	cf->unanswered = unanswered;
	if (cf->limited)
		cf->limit = rpmafs_seq_add(ack->acked, ack->credits);
}

struct msg *confirm_take(struct confirm *cf)
{
	if (!cf->parked.head || !covered(cf, cf->parked.head))
		return NULL;
	return msgq_pop(&cf->parked);
}

struct msg *confirm_take_any(struct confirm *cf)
{
	return msgq_pop(&cf->parked);
}

int confirm_request(struct confirm *cf, struct link *link)
{
	uint32_t last = (cf->next - 1) & RPMAFS_SEQ_MASK;
	int ret;

	if (!cf->on || cf->unanswered || last == cf->acked)
		return 0;
	/* wr_id 0 is no message: a failure of it drops the link, settling nothing */
	ret = link_post_imm(link, LINK_SEND_EMPTY, 0, 0, 0, false,
		RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT);
	if (!ret)
		cf->unanswered++;
	return ret;
}

void confirm_down(struct confirm *cf)
{
	cf->on = false;
	cf->unanswered = 0;
}
