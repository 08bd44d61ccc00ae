// SPDX-License-Identifier: BSD-3-Clause
/* inbox_ack.c -- acknowledging what was read from the inbox (see inbox_ack.h) */

#include <errno.h>
#include <stdlib.h>

#include "ack.h"
#include "ackring.h"
#include "inbox_ack.h"

/* a connection's share of the queue: a quarter of it, at most 64 receives */
#define SHARE_PART 4
#define SHARE_MAX 64

struct inbox_ack {
	struct rpmafs_ackring *ring; /* a lane per connection: ac->idx */
	uint32_t conns, *free_idx, nfree;
	uint32_t slots, reserved;
	/* per slot: the connection its message is acknowledged to, or NULL */
	struct inbox_ack_conn **owner;
	uint32_t *num, *next;
	bool *done;
	/*
	 * per slot: the session of the message it holds unread (0: none, or
	 * not one a re-send can find); the first re-send held for it and the
	 * next re-send held for the same original (INBOX_ACK_NONE: none)
	 */
	uint64_t *session;
	uint32_t *waiter, *next_waiter;
};

int inbox_ack_new(struct rpma_peer *peer, uint32_t slots, uint32_t conns, struct inbox_ack **a_ptr)
{
	struct inbox_ack *a = calloc(1, sizeof(*a));
	int ret;

	if (!a)
		return -ENOMEM;
	a->slots = slots;
	a->conns = conns;
	a->owner = calloc(slots, sizeof(*a->owner));
	a->num = calloc(slots, sizeof(*a->num));
	a->next = calloc(slots, sizeof(*a->next));
	a->done = calloc(slots, sizeof(*a->done));
	a->session = calloc(slots, sizeof(*a->session));
	a->waiter = malloc(slots * sizeof(*a->waiter));
	a->next_waiter = malloc(slots * sizeof(*a->next_waiter));
	a->free_idx = calloc(conns, sizeof(*a->free_idx));
	if (!a->owner || !a->num || !a->next || !a->done || !a->session || !a->waiter ||
		!a->next_waiter || !a->free_idx) {
		inbox_ack_delete(&a);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < slots; i++)
		a->waiter[i] = a->next_waiter[i] = INBOX_ACK_NONE;
	for (uint32_t i = 0; i < conns; i++)
		a->free_idx[a->nfree++] = conns - 1 - i;
	/* the inbox's connection CQs hold nothing but these sends: no tag */
	ret = rpmafs_ackring_new(peer, conns, 0, &a->ring);
	if (ret) {
		inbox_ack_delete(&a);
		return ret;
	}
	*a_ptr = a;
	return 0;
}

void inbox_ack_delete(struct inbox_ack **a_ptr)
{
	struct inbox_ack *a = *a_ptr;

	if (!a)
		return;
	rpmafs_ackring_delete(&a->ring);
	free(a->owner);
	free(a->num);
	free(a->next);
	free(a->done);
	free(a->session);
	free(a->waiter);
	free(a->next_waiter);
	free(a->free_idx);
	free(a);
	*a_ptr = NULL;
}

int inbox_ack_offer(struct inbox_ack *a, struct inbox_ack_conn *ac)
{
	uint32_t share = a->slots / SHARE_PART;

	if (!a->nfree)
		return -1;
	*ac = (struct inbox_ack_conn){.on = true, .head = INBOX_ACK_NONE, .tail = INBOX_ACK_NONE};
	ac->idx = a->free_idx[--a->nfree];
	if (share > SHARE_MAX)
		share = SHARE_MAX;
	if (share > a->slots - a->reserved)
		share = a->slots - a->reserved;
	/* one receive is kept for a REQUEST; less than two promises nothing */
	if (share < 2)
		share = 0;
	ac->share = share;
	a->reserved += share;
	return share ? (int)share - 1 : 0;
}

enum inbox_take inbox_ack_take(struct inbox_ack *a, struct inbox_ack_conn *ac, uint32_t slot,
	const struct ibv_wc *wc, const char **why)
{
	bool first = !ac->req.seen_any, prompt = false;
	uint32_t n;

	switch (rpmafs_ackreq_take(&ac->req, wc, &n, &prompt, why)) {
	case RPMAFS_ACKREQ_BAD:
		return INBOX_TAKE_BAD;
	case RPMAFS_ACKREQ_REQUEST:
		/* it waits for everything it sent before: acknowledged once read */
		ac->prompt_upto = ac->req.seen;
		return INBOX_TAKE_REQUEST;
	case RPMAFS_ACKREQ_DUPLICATE:
		ac->duplicates++;
		return INBOX_TAKE_DUPLICATE;
	case RPMAFS_ACKREQ_RECORD:
		break;
	}
	if (first) {
		/* nothing read yet: acknowledging the number before the first says so */
		ac->read_upto = (n - 1) & RPMAFS_SEQ_MASK;
		ac->sent_acked = ac->read_upto;
		ac->prompt_upto = ac->read_upto;
		ac->prompted = ac->read_upto;
	}
	if (prompt)
		ac->prompted = n;
	a->session[slot] = 0;
	a->owner[slot] = ac;
	a->num[slot] = n;
	a->done[slot] = false;
	a->next[slot] = INBOX_ACK_NONE;
	if (ac->tail == INBOX_ACK_NONE)
		ac->head = slot;
	else
		a->next[ac->tail] = slot;
	ac->tail = slot;
	return INBOX_TAKE_RECORD;
}

uint32_t inbox_ack_num(const struct inbox_ack *a, uint32_t slot)
{
	return a->num[slot];
}

void inbox_ack_plain(struct inbox_ack *a, uint32_t slot)
{
	a->owner[slot] = NULL;
	a->session[slot] = 0;
}

void inbox_ack_session(struct inbox_ack *a, uint32_t slot, uint64_t session)
{
	a->session[slot] = session;
}

bool inbox_ack_hold_resend(struct inbox_ack *a, uint32_t slot, uint64_t session)
{
	uint32_t n = a->num[slot];

	/* a scan: re-sends come after a lost connection, not with each message */
	for (uint32_t s = 0; s < a->slots; s++) {
		if (s == slot || a->session[s] != session || a->num[s] != n)
			continue;
		a->next_waiter[slot] = a->waiter[s];
		a->waiter[s] = slot;
		return true;
	}
	return false;
}

uint32_t inbox_ack_next_resend(struct inbox_ack *a, uint32_t slot)
{
	uint32_t r = a->waiter[slot];

	if (r != INBOX_ACK_NONE) {
		a->waiter[slot] = a->next_waiter[r];
		a->next_waiter[r] = INBOX_ACK_NONE;
	}
	return r;
}

struct inbox_ack_conn *inbox_ack_released(
	struct inbox_ack *a, uint32_t slot, inbox_post_fn post, void *arg)
{
	struct inbox_ack_conn *ac = a->owner[slot];
	bool moved = false;

	a->session[slot] = 0; /* read: a re-send from now on is taken as read at once */
	if (!ac) {
		post(arg, slot);
		return NULL;
	}
	a->done[slot] = true;
	/* the longest prefix read goes back to the queue, then is acknowledged */
	while (ac->head != INBOX_ACK_NONE && a->done[ac->head]) {
		uint32_t s = ac->head;

		ac->head = a->next[s];
		if (ac->head == INBOX_ACK_NONE)
			ac->tail = INBOX_ACK_NONE;
		ac->read_upto = a->num[s];
		a->owner[s] = NULL;
		post(arg, s);
		moved = true;
	}
	return moved ? ac : NULL;
}

void inbox_ack_drop(struct inbox_ack *a, struct inbox_ack_conn *ac,
	bool (*withdraw)(void *arg, uint32_t slot), inbox_post_fn post, void *arg)
{
	uint32_t s, next;

	if (!ac->on)
		return;
	for (s = ac->head; s != INBOX_ACK_NONE; s = next) {
		next = a->next[s];
		a->owner[s] = NULL;
		if (a->done[s] || withdraw(arg, s))
			post(arg, s);
	}
	a->reserved -= ac->share;
	a->free_idx[a->nfree++] = ac->idx;
	ac->on = false;
	ac->head = ac->tail = INBOX_ACK_NONE;
}

/* anything to acknowledge: a read since the last acknowledgement, or a REQUEST */
static bool owes(const struct inbox_ack_conn *ac)
{
	/* before anything was read, only a REQUEST is answered (acked: the first - 1) */
	return ac->on && ac->req.seen_any &&
	       (ac->sent_acked != ac->read_upto || ac->sent_requests != ac->req.requests);
}

/* messages read per acknowledgement: half the share, so credits never run out */
static uint32_t every(const struct inbox_ack_conn *ac)
{
	uint32_t n = ac->share / 2;

	if (!ac->share || n > INBOX_ACK_EVERY)
		return INBOX_ACK_EVERY; /* no share: the sender's own window, as rpma-recv */
	return n ? n : 1;
}

enum inbox_ack_due inbox_ack_due(const struct inbox_ack_conn *ac)
{
	if (!owes(ac))
		return INBOX_ACK_NOTHING;
	if (ac->owed || ac->sent_requests != ac->req.requests)
		return INBOX_ACK_NOW;
	/* what a REQUEST waits for was read (and not acknowledged yet) */
	if (rpmafs_seq_after(ac->prompt_upto, ac->sent_acked) &&
		!rpmafs_seq_after(ac->prompt_upto, ac->read_upto))
		return INBOX_ACK_NOW;
	/* a PROMPT not acknowledged, and nothing more of the sender's is waiting */
	if (rpmafs_seq_after(ac->prompted, ac->sent_acked) && ac->read_upto == ac->req.seen)
		return INBOX_ACK_NOW;
	if (rpmafs_seq_diff(ac->read_upto, ac->sent_acked) >= every(ac))
		return INBOX_ACK_NOW;
	return INBOX_ACK_HOLD;
}

int inbox_ack_send(struct inbox_ack *a, struct inbox_ack_conn *ac, struct rpma_conn *conn,
	struct rpmafs_auth *auth, const char **why)
{
	struct rpmafs_ack ack = {.acked = ac->read_upto,
		.credits = (uint16_t)(ac->share ? ac->share - 1 : 0),
		.requests = ac->req.requests};
	int ret;

	if (!owes(ac)) {
		ac->owed = false;
		return 0;
	}
	ret = rpmafs_ackring_send(a->ring, ac->idx, &ac->busy, conn, &ack, auth, why);
	if (ret == 1) {
		ac->owed = true;
		return 1;
	}
	if (ret)
		return -1;
	ac->sent_acked = ac->read_upto;
	ac->sent_requests = ac->req.requests;
	ac->owed = false;
	ac->acks++;
	return 0;
}

int inbox_ack_sent(
	struct inbox_ack *a, struct inbox_ack_conn *ac, const struct ibv_wc *wc, const char **why)
{
	if (rpmafs_ackring_sent(a->ring, &ac->busy, wc)) {
		*why = "the acknowledgement's send failed";
		return -1;
	}
	return 0;
}
