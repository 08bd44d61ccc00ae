// SPDX-License-Identifier: BSD-3-Clause
/*
 * linkpost.c -- the posts of a link's connection (link.h: link_post,
 * link_post_imm, link_post_batch), sealed with the key on an authenticated
 * connection (linkauth.h, docs/design.md §11.2)
 */

#include <librpma.h>
#include <librpma_ext.h>

#include "auth.h"
#include "devices.h"
#include "link.h"
#include "link_priv.h"
#include "linkack.h"
#include "linkauth.h"

#define TAG RPMAFS_AUTH_TAG_BYTES

/*
 * Seal n sends in their order, under the caller's lock that orders posts
 * (link.h), right before they are posted: the receiver's seq is the order
 * it receives them in. A payload's tag follows it in its pool buffer (room
 * by construction: linkauth.h); a 0-byte message's tag is sent from
 * linkauth's ring, 16 bytes. A failed post drops the connection (the
 * caller's rule for a failed post), so a seq sealed and never posted is
 * never needed again -- but a payload it encrypted is (the sends after the
 * failed one stay pending): it is recorded in its struct link_sealed, as
 * every encrypted one, so that its next post unseals it first.
 */
static void seal_batch(
	struct link_conn *c, struct rpma_send_desc *d, const struct link_send *sends, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t imm = d[i].with_imm ? d[i].imm : 0;
		struct link_sealed *rec = sends ? sends[i].sealed : NULL;

		if (d[i].src) {
			/* encrypt: what seals it is recorded, to give it its plaintext back */
			if (rec && c->auth->encrypt && d[i].len) {
				linkauth_hold(c->auth);
				*rec = (struct link_sealed){.by = c->auth,
					.seq = linkauth_next_seq(c->auth),
					.imm = imm};
			}
			linkauth_seal(c->auth, c->pool + d[i].offset, (uint32_t)d[i].len, imm);
			d[i].len += TAG;
		} else {
			d[i].offset = linkauth_seal_empty(c->auth, imm);
			d[i].src = c->auth->mr;
			d[i].len = TAG;
		}
	}
}

void link_sealed_forget(struct link_sealed *rec)
{
	if (!rec->by)
		return;
	linkauth_put(rec->by);
	*rec = (struct link_sealed){0};
}

/* a payload encrypted by an earlier post (a re-send): its plaintext back, the record forgotten */
static void unseal(struct link_conn *c, const struct link_send *s)
{
	struct link_sealed *rec = s->sealed;

	linkauth_unseal(rec->by, rec->seq, rec->imm, c->pool + s->offset, s->len);
	link_sealed_forget(rec);
}

/* link_post's SEND (without immediate data) on an authenticated connection */
static int post_sealed(struct link_conn *c, enum link_op op, size_t offset, uint32_t len, int flags,
	const void *ctx)
{
	struct rpma_send_desc d = {.src = op == LINK_SEND ? c->dev->pool_mr : NULL,
		.offset = op == LINK_SEND ? offset : 0,
		.len = op == LINK_SEND ? len : 0,
		.flags = flags,
		.op_context = ctx};

	seal_batch(c, &d, NULL, 1);
	return rpma_send(c->conn, d.src, d.offset, d.len, flags, ctx);
}

int link_post(struct link *link, enum link_op op, size_t offset, uint32_t len, uint64_t wr_id,
	bool signaled)
{
	struct link_conn *c = link->cur; /* stable while UP: see link_post in link.h */
	int flags = signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
	const void *ctx = (const void *)(uintptr_t)wr_id;

	if (!c)
		return RPMA_E_INVAL;
	/* the poster settles the CQ next (link_settle) */
	__atomic_store_n(&link->posted, true, __ATOMIC_SEQ_CST);
	if (c->auth && op != LINK_FENCE)
		return post_sealed(c, op, offset, len, flags, ctx);
	switch (op) {
	case LINK_SEND:
		return rpma_send(c->conn, c->dev->pool_mr, offset, len, flags, ctx);
	case LINK_SEND_EMPTY:
		return rpma_send(c->conn, NULL, 0, 0, flags, ctx);
	case LINK_FENCE:
		return rpma_write(c->conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, ctx);
	}
	return RPMA_E_INVAL;
}

int link_post_imm(struct link *link, enum link_op op, size_t offset, uint32_t len, uint64_t wr_id,
	bool signaled, uint32_t imm)
{
	struct link_conn *c = link->cur; /* stable while UP, as for link_post */
	int flags = signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;

	if (!c || !c->la || op == LINK_FENCE)
		return link_post(link, op, offset, len, wr_id, signaled);
	__atomic_store_n(&link->posted, true, __ATOMIC_SEQ_CST);
	if (c->auth) {
		struct link_send s = {op, offset, len, wr_id, signaled, imm, NULL};
		unsigned posted;

		return link_post_batch(link, &s, 1, &posted);
	}
	return linkack_send(c->la, c->conn, op == LINK_SEND ? c->dev->pool_mr : NULL, offset,
		op == LINK_SEND ? len : 0, flags, imm, wr_id);
}

uint64_t link_session(struct link *link)
{
	return __atomic_load_n(&link->session, __ATOMIC_RELAXED);
}

bool link_acks(struct link *link)
{
	/* from on_up, on the loop thread: cur is the connection just up */
	return link->cur && link->cur->la;
}

/* librpma posts one work request per call: the chain is the project's extension */
_Static_assert(LINK_BATCH_MAX <= RPMA_SEND_BATCH_MAX, "a batch is one rpma_send_batch");
int link_post_batch(struct link *link, const struct link_send *sends, unsigned n, unsigned *posted)
{
	struct link_conn *c = link->cur; /* stable while UP, as in link_post */
	struct rpma_send_desc d[LINK_BATCH_MAX];
	unsigned i;

	*posted = 0;
	if (!c || n == 0 || n > LINK_BATCH_MAX)
		return RPMA_E_INVAL;
	for (i = 0; i < n; i++) {
		bool data = sends[i].op == LINK_SEND;

		if (sends[i].op == LINK_FENCE)
			return RPMA_E_INVAL; /* a fence is an RDMA WRITE: link_post */
		/* a payload encrypted on an earlier connection (a re-send): plaintext first */
		if (data && sends[i].sealed && sends[i].sealed->by)
			unseal(c, &sends[i]);
		d[i] = (struct rpma_send_desc){.src = data ? c->dev->pool_mr : NULL,
			.offset = data ? sends[i].offset : 0,
			.len = data ? sends[i].len : 0,
			.flags = sends[i].signaled ? RPMA_F_COMPLETION_ALWAYS
						   : RPMA_F_COMPLETION_ON_ERROR,
			.with_imm = c->la != NULL,
			.imm = sends[i].imm,
			.op_context = (const void *)(uintptr_t)sends[i].wr_id};
	}
	if (c->auth)
		seal_batch(c, d, sends, n);
	__atomic_store_n(&link->posted, true, __ATOMIC_SEQ_CST);
	if (c->la)
		return linkack_send_batch(c->la, c->conn, d, n, posted);
	return rpma_send_batch(c->conn, d, n, posted);
}
