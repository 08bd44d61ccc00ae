// SPDX-License-Identifier: BSD-3-Clause
/* linkauth.c -- a link connection's half of authenticated peers (see linkauth.h) */

#include <stdbool.h>
#include <stdlib.h>

#include <librpma.h>

#include "ack.h"
#include "auth.h"
#include "linkauth.h"

#define TAG RPMAFS_AUTH_TAG_BYTES

int linkauth_new(struct rpma_peer *peer, struct rpma_conn *conn, struct rpmafs_auth **auth,
	unsigned nempty, struct linkauth **la_ptr)
{
	struct linkauth *la = calloc(1, sizeof(*la));
	int ret;

	if (!la) {
		rpmafs_auth_delete(auth);
		return RPMA_E_NOMEM;
	}
	la->auth = *auth;
	*auth = NULL;
	la->encrypt = rpmafs_auth_encrypts(la->auth);
	la->refs = 1; /* the connection's */
	la->nempty = nempty ? nempty : 1;
	la->buf = calloc(1 + la->nempty, TAG);
	if (!la->buf) {
		linkauth_delete(&la);
		return RPMA_E_NOMEM;
	}
	ret = rpma_mr_reg(
		peer, la->buf, (size_t)(1 + la->nempty) * TAG, RPMA_MR_USAGE_SEND, &la->mr);
	if (!ret) {
		/* seq 0, before any message: the receiver delivers nothing before it */
		rpmafs_auth_seal_proof(la->auth, la->buf);
		ret = rpma_send(conn, la->mr, 0, TAG, RPMA_F_COMPLETION_ON_ERROR,
			(const void *)(uintptr_t)LINKAUTH_PROOF_WRID);
	}
	if (ret) {
		linkauth_delete(&la);
		return ret;
	}
	*la_ptr = la;
	return 0;
}

void linkauth_hold(struct linkauth *la)
{
	__atomic_add_fetch(&la->refs, 1, __ATOMIC_RELAXED);
}

void linkauth_put(struct linkauth *la)
{
	/* the last one wipes the keys */
	if (__atomic_sub_fetch(&la->refs, 1, __ATOMIC_ACQ_REL))
		return;
	rpmafs_auth_delete(&la->auth);
	free(la);
}

void linkauth_delete(struct linkauth **la_ptr)
{
	struct linkauth *la = *la_ptr;

	if (!la)
		return;
	if (la->mr)
		(void)rpma_mr_dereg(&la->mr);
	free(la->buf);
	la->buf = NULL;
	*la_ptr = NULL;
	linkauth_put(la); /* the messages it encrypted may still hold it */
}

void linkauth_seal(struct linkauth *la, uint8_t *payload, uint32_t len, uint32_t imm)
{
	rpmafs_auth_seal(la->auth, imm, payload, len, payload + len);
}

uint64_t linkauth_next_seq(const struct linkauth *la)
{
	return rpmafs_auth_next_seq(la->auth);
}

void linkauth_unseal(
	const struct linkauth *la, uint64_t seq, uint32_t imm, uint8_t *payload, uint32_t len)
{
	rpmafs_auth_unseal(la->auth, seq, imm, payload, len);
}

size_t linkauth_seal_empty(struct linkauth *la, uint32_t imm)
{
	/*
	 * A ring of as many slots as the send queue has entries: a slot is
	 * taken again only after as many later posts, by when its SEND has
	 * left the queue (the queue cannot hold more).
	 */
	size_t off = (size_t)(1 + la->next_empty) * TAG;

	la->next_empty = (la->next_empty + 1) % la->nempty;
	rpmafs_auth_seal(la->auth, imm, NULL, 0, la->buf + off);
	return off;
}

int linkauth_open_ack(struct linkauth *la, const uint8_t *buf, uint32_t byte_len, uint32_t *len)
{
	if (byte_len != RPMAFS_ACK_LEN + TAG)
		return -1;
	*len = RPMAFS_ACK_LEN;
	return rpmafs_auth_open_ack(la->auth, buf, RPMAFS_ACK_LEN, buf + RPMAFS_ACK_LEN);
}

int linkauth_take(struct ibv_wc *wc, int n, bool *failed)
{
	int kept = 0;

	for (int i = 0; i < n; i++) {
		if (wc[i].wr_id != LINKAUTH_PROOF_WRID) {
			wc[kept++] = wc[i];
			continue;
		}
		/* a flush is the connection going anyway; an error is a proof not made */
		*failed = true;
	}
	return kept;
}
