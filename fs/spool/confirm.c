// SPDX-License-Identifier: BSD-3-Clause
/* confirm.c -- message numbers, credits and parked messages (see confirm.h) */

#include <infiniband/verbs.h>

#include "ack.h"
#include "confirm.h"
#include "runtime/clock.h"

/* how close to the receiver's limit a message asks for an acknowledgement at once */
#define CREDITS_LOW 2

void confirm_init(struct confirm *cf)
{
	*cf = (struct confirm){.next = 1};
}

void confirm_up(struct confirm *cf, bool on, unsigned credits, const struct msgq *pending)
{
	uint32_t first = cf->next;

	/*
	 * Numbers are the spool's, not the connection's: what is not acked
	 * goes again with its number (confirm_requeue put it first in
	 * pending). The accept's credits count from the number before the
	 * first one sent here, not from the last ack: numbers of messages
	 * that failed meanwhile (parked past send_timeout_ms) are never sent
	 * again, and counting them would leave no credit for the next ones.
	 */
	for (const struct msg *msg = pending->head; msg; msg = msg->next)
		if (msg->numbered) {
			first = msg->wire;
			break;
		}
	cf->acked = (first - 1) & RPMAFS_SEQ_MASK;
	cf->on = on;
	cf->unanswered = 0;
	cf->heard_ms = now_ms_coarse();
	cf->asked_ms = 0;
	cf->limited = on && credits > 0;
	cf->limit = rpmafs_seq_add(cf->acked, credits);
}

bool confirm_may_post(const struct confirm *cf, const struct msg *msg)
{
	uint32_t num = msg->numbered ? msg->wire : cf->next;

	return !cf->on || !cf->limited || !rpmafs_seq_after(num, cf->limit);
}

bool confirm_imm(const struct confirm *cf, const struct msg *msg, bool prompt, uint32_t *next,
	uint32_t *imm)
{
	uint32_t num = msg->numbered ? msg->wire : *next;

	*imm = 0;
	if (!cf->on)
		return true;
	if (cf->limited && rpmafs_seq_after(num, cf->limit))
		return false;
	if (cf->limited && rpmafs_seq_diff(cf->limit, num) < CREDITS_LOW)
		prompt = true; /* the receiver's room is running out: let it say so soon */
	if (!msg->numbered)
		*next = rpmafs_seq_next(*next);
	*imm = num | (prompt ? RPMAFS_IMM_PROMPT : 0);
	return true;
}

void confirm_posted(struct confirm *cf, struct msg *msg, uint32_t imm)
{
	if (!cf->on || msg->numbered)
		return;
	msg->wire = imm & RPMAFS_SEQ_MASK;
	msg->numbered = true;
	cf->next = rpmafs_seq_next(msg->wire);
}

static bool covered(const struct confirm *cf, const struct msg *msg)
{
	return !rpmafs_seq_after(msg->wire, cf->acked);
}

bool confirm_acked(const struct confirm *cf, const struct msg *msg)
{
	return cf->on && msg->numbered && covered(cf, msg);
}

bool confirm_park(struct confirm *cf, struct msg *msg, struct spool_stats *st)
{
	/*
	 * Off: no acknowledgement will come on this connection, also for a
	 * message numbered on an earlier one and sent again here (the next
	 * receiver does not acknowledge): its completion confirms it, as
	 * transport confirmation does (docs/design.md §8.6).
	 */
	if (!cf->on || !msg->numbered || covered(cf, msg))
		return false;
	msg->parked = true;
	msgq_push(&cf->parked, msg);
	now_coarse(&st->ctime);
	st->in_flight--;
	st->completed++;
	st->unacked++;
	return true;
}

bool confirm_retry(struct confirm *cf, struct msg *msg, int status, struct spool_stats *st)
{
	/*
	 * The receiver may or may not have it: at least once, so again. A
	 * remote operation error is the responder's fault, not the message's
	 * (its receive could not be used: under rxe, a receiver killed while a
	 * long send was landing has its receive buffers deregistered under it),
	 * and the connection is in error after it as after the others.
	 */
	switch (status) {
	case IBV_WC_WR_FLUSH_ERR:
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_REM_OP_ERR:
		break;
	default:
		return false;
	}
	return confirm_park(cf, msg, st);
}

static void back_to_pending(struct msg *msg, struct msgq *q, uint64_t deadline_ms,
	struct spool_stats *st)
{
	msg->parked = false;
	msg->resend = true;
	msg->deadline_ms = deadline_ms;
	st->posted--;
	st->bytes_posted -= msg->len;
	st->pending++;
	msgq_push(q, msg);
}

void confirm_requeue(struct confirm *cf, struct msgq *in_flight, struct msgq *pending,
	uint64_t deadline_ms, struct spool_stats *st)
{
	struct msgq again = {0}, rest = {0};
	struct msg *msg;

	while ((msg = msgq_pop(&cf->parked))) {
		st->unacked--;
		st->completed--;
		back_to_pending(msg, &again, deadline_ms, st);
	}
	while ((msg = msgq_pop(in_flight))) {
		if (msg->kind == MSG_FENCE) {
			msg_unhold(msg);
		} else if (msg->numbered) {
			st->in_flight--;
			back_to_pending(msg, &again, deadline_ms, st);
		} else {
			msgq_push(&rest, msg);
		}
	}
	*in_flight = rest;
	/* before anything newer */
	while ((msg = msgq_pop(pending)))
		msgq_push(&again, msg);
	*pending = again;
}

void confirm_ack(struct confirm *cf, const struct rpmafs_ack *ack, unsigned unanswered)
{
	cf->acked = ack->acked;
	cf->unanswered = unanswered;
	cf->heard_ms = now_ms_coarse();
	if (!unanswered)
		cf->asked_ms = 0;
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

bool confirm_awaits(const struct confirm *cf)
{
	return cf->on && (cf->unanswered || ((cf->next - 1) & RPMAFS_SEQ_MASK) != cf->acked);
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
	if (!ret) {
		cf->unanswered++;
		cf->asked_ms = now_ms_coarse();
	}
	return ret;
}

static uint64_t later(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

enum confirm_watch confirm_watch(
	struct confirm *cf, struct link *link, uint64_t now, uint64_t silence_ms, uint64_t *due)
{
	const struct msg *oldest = cf->parked.head;
	uint64_t quiet, gone;

	*due = 0;
	if (!cf->on || !oldest)
		return CONFIRM_HEARD;
	quiet = later(cf->heard_ms, oldest->posted_ms);
	if (!cf->unanswered) {
		if (quiet + silence_ms / 4 > now) {
			*due = quiet + silence_ms / 4;
			return CONFIRM_HEARD;
		}
		if (confirm_request(cf, link))
			return CONFIRM_POST_FAILED;
		if (!cf->unanswered) {
			/* nothing to ask about (all acknowledged): look again later */
			*due = now + silence_ms / 4;
			return CONFIRM_HEARD;
		}
		cf->asked_ms = now; /* the tick's clock */
	}
	gone = later(quiet + silence_ms, cf->asked_ms + silence_ms / 2);
	if (gone <= now)
		return CONFIRM_SILENT;
	*due = gone;
	return CONFIRM_HEARD;
}

void confirm_down(struct confirm *cf)
{
	cf->on = false;
	cf->unanswered = 0;
	cf->asked_ms = 0;
}
