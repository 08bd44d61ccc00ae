// SPDX-License-Identifier: BSD-3-Clause
/* inbox_ack.c -- acknowledging what was read from the inbox (see inbox_ack.h) */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>

#include "ack.h"
#include "inbox_ack.h"

/* a connection's share of the queue: a quarter of it, at most 64 receives */
#define SHARE_PART 4
#define SHARE_MAX 64

struct inbox_ack {
	struct rpma_mr_local *mr;
	uint8_t *bufs; /* conns x INBOX_ACK_BUFS x RPMAFS_ACK_LEN, registered */
	uint32_t conns, *free_idx, nfree;
	uint32_t slots, reserved;
	/* per slot: the connection its message is acknowledged to, or NULL */
	struct inbox_ack_conn **owner;
	uint32_t *num, *next;
	bool *done;
};

int inbox_ack_new(struct rpma_peer *peer, uint32_t slots, uint32_t conns, struct inbox_ack **a_ptr)
{
	size_t len = (size_t)conns * INBOX_ACK_BUFS * RPMAFS_ACK_LEN;
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
	a->free_idx = calloc(conns, sizeof(*a->free_idx));
	/* registration takes any address: no page alignment needed */
	a->bufs = calloc(1, len);
	if (!a->owner || !a->num || !a->next || !a->done || !a->free_idx || !a->bufs) {
		inbox_ack_delete(&a);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < conns; i++)
		a->free_idx[a->nfree++] = conns - 1 - i;
	ret = rpma_mr_reg(peer, a->bufs, len, RPMA_MR_USAGE_SEND, &a->mr);
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
	if (a->mr)
		(void)rpma_mr_dereg(&a->mr);
	free(a->bufs);
	free(a->owner);
	free(a->num);
	free(a->next);
	free(a->done);
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
	uint32_t imm, n;

	if (!(wc->wc_flags & IBV_WC_WITH_IMM)) {
		*why = "a message without its number from an acknowledging sender";
		return INBOX_TAKE_BAD;
	}
	imm = ntohl(wc->imm_data);
	if (imm & RPMAFS_IMM_REQUEST) {
		if (wc->byte_len != 0 || (imm & RPMAFS_SEQ_MASK) != 0) {
			*why = "an acknowledgement request with a payload or a number";
			return INBOX_TAKE_BAD;
		}
		if (!ac->seen_any) {
			*why = "an acknowledgement request before any message";
			return INBOX_TAKE_BAD;
		}
		ac->requests++;
		return INBOX_TAKE_REQUEST;
	}
	n = imm & RPMAFS_SEQ_MASK;
	if (ac->seen_any && !rpmafs_seq_after(n, ac->seen)) {
		/* RC does not repeat itself: only a sender's re-send can be this */
		ac->duplicates++;
		return INBOX_TAKE_DUPLICATE;
	}
	if (!ac->seen_any) {
		/* nothing read yet: acknowledging the number before the first says so */
		ac->read_upto = (n - 1) & RPMAFS_SEQ_MASK;
	}
	ac->seen_any = true;
	ac->seen = n;
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

void inbox_ack_plain(struct inbox_ack *a, uint32_t slot)
{
	a->owner[slot] = NULL;
}

struct inbox_ack_conn *inbox_ack_released(
	struct inbox_ack *a, uint32_t slot, inbox_post_fn post, void *arg)
{
	struct inbox_ack_conn *ac = a->owner[slot];
	bool moved = false;

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
		ac->read_any = true;
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

static bool due(const struct inbox_ack_conn *ac)
{
	/* before anything was read, only a REQUEST is answered (acked: the first - 1) */
	if (!ac->on || !ac->seen_any || (!ac->read_any && ac->requests == ac->sent_requests))
		return false;
	return !ac->sent_any || ac->sent_acked != ac->read_upto ||
	       ac->sent_requests != ac->requests;
}

int inbox_ack_send(
	struct inbox_ack *a, struct inbox_ack_conn *ac, struct rpma_conn *conn, const char **why)
{
	size_t off;
	unsigned i;
	int ret;

	if (!due(ac)) {
		ac->owed = false;
		return 0;
	}
	for (i = 0; i < INBOX_ACK_BUFS && (ac->busy & (1u << i)); i++)
		;
	if (i == INBOX_ACK_BUFS) {
		ac->owed = true;
		return 1;
	}
	off = ((size_t)ac->idx * INBOX_ACK_BUFS + i) * RPMAFS_ACK_LEN;
	rpmafs_ack_encode(&(struct rpmafs_ack){ac->read_upto,
				  (uint16_t)(ac->share ? ac->share - 1 : 0), ac->requests},
		a->bufs + off);
	ret = rpma_send(conn, a->mr, off, RPMAFS_ACK_LEN, RPMA_F_COMPLETION_ALWAYS,
		(const void *)(uintptr_t)i);
	if (ret) {
		*why = rpma_err_2str(ret);
		return -1;
	}
	ac->busy |= 1u << i;
	ac->sent_any = true;
	ac->sent_acked = ac->read_upto;
	ac->sent_requests = ac->requests;
	ac->owed = false;
	ac->acks++;
	return 0;
}

int inbox_ack_sent(struct inbox_ack_conn *ac, const struct ibv_wc *wc, const char **why)
{
	if (wc->wr_id < INBOX_ACK_BUFS)
		ac->busy &= ~(1u << wc->wr_id);
	if (wc->status != IBV_WC_SUCCESS) {
		*why = "the acknowledgement's send failed";
		return -1;
	}
	return 0;
}
