// SPDX-License-Identifier: BSD-3-Clause
/* linkack.c -- acknowledgements received on a link connection (see linkack.h) */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>
#include <librpma_ext.h>

#include "linkack.h"
#include "linkauth.h"

static int post(struct linkack *la, struct rpma_conn *conn, uint64_t i)
{
	return rpma_recv(conn, la->mr, i * LINKACK_BUF, LINKACK_BUF,
		(const void *)(uintptr_t)(LINKACK_TAG | i));
}

int linkack_new(struct rpma_peer *peer, struct rpma_conn *conn, struct linkack **la_ptr)
{
	struct linkack *la = calloc(1, sizeof(*la));
	int ret;

	if (!la)
		return RPMA_E_NOMEM;
	la->buf = calloc(LINKACK_RECVS, LINKACK_BUF);
	if (!la->buf) {
		free(la);
		return RPMA_E_NOMEM;
	}
	pthread_mutex_init(&la->lock, NULL);
	ret = rpma_mr_reg(peer, la->buf, LINKACK_RECVS * LINKACK_BUF, RPMA_MR_USAGE_RECV, &la->mr);
	for (uint64_t i = 0; !ret && i < LINKACK_RECVS; i++)
		ret = post(la, conn, i);
	if (ret) {
		linkack_delete(&la);
		return ret;
	}
	*la_ptr = la;
	return 0;
}

void linkack_delete(struct linkack **la_ptr)
{
	struct linkack *la = *la_ptr;

	if (!la)
		return;
	if (la->mr)
		(void)rpma_mr_dereg(&la->mr);
	pthread_mutex_destroy(&la->lock);
	free(la->buf);
	free(la);
	*la_ptr = NULL;
}

/* record imm[0..n) as sent; *before: what the record said, for undo_locked */
static void record_locked(struct linkack *la, const struct rpma_send_desc *d, unsigned n,
	struct rpmafs_ack_state *before)
{
	*before = la->st;
	for (unsigned i = 0; i < n; i++)
		rpmafs_ack_state_sent(&la->st, d[i].imm);
}

/*
 * Only the first kept of what record_locked recorded went out: the sent
 * record goes back and takes those again; what acknowledgements changed
 * meanwhile (acked, requests_acked) stays. No acknowledgement can name an
 * unsent one: posts are serialized (the spool's lock).
 */
static void undo_locked(struct linkack *la, const struct rpma_send_desc *d, unsigned kept,
	const struct rpmafs_ack_state *before)
{
	la->st.sent_any = before->sent_any;
	la->st.first = before->first;
	la->st.sent = before->sent;
	la->st.requests = before->requests;
	for (unsigned i = 0; i < kept; i++)
		rpmafs_ack_state_sent(&la->st, d[i].imm);
}

int linkack_send(struct linkack *la, struct rpma_conn *conn, const struct rpma_mr_local *src,
	size_t offset, uint32_t len, int flags, uint32_t imm, uint64_t wr_id)
{
	struct rpma_send_desc d = {.src = src,
		.offset = offset,
		.len = len,
		.flags = flags,
		.with_imm = true,
		.imm = imm,
		.op_context = (const void *)(uintptr_t)wr_id};
	struct rpmafs_ack_state before;
	int ret;

	/*
	 * Recorded before the post: rxe runs the whole exchange inside
	 * ibv_post_send, so the acknowledgement can be in the CQ before the
	 * post returns (seen in the lab: refused as "from the future").
	 */
	pthread_mutex_lock(&la->lock);
	record_locked(la, &d, 1, &before);
	pthread_mutex_unlock(&la->lock);
	ret = rpma_send_with_imm(conn, src, offset, len, flags, imm, d.op_context);
	if (ret) {
		pthread_mutex_lock(&la->lock);
		undo_locked(la, &d, 0, &before);
		pthread_mutex_unlock(&la->lock);
	}
	return ret;
}

int linkack_send_batch(struct linkack *la, struct rpma_conn *conn,
	const struct rpma_send_desc *descs, unsigned n, unsigned *posted)
{
	struct rpmafs_ack_state before;
	int ret;

	/* recorded before the post, as in linkack_send */
	pthread_mutex_lock(&la->lock);
	record_locked(la, descs, n, &before);
	pthread_mutex_unlock(&la->lock);
	ret = rpma_send_batch(conn, descs, n, posted);
	if (ret) {
		pthread_mutex_lock(&la->lock);
		undo_locked(la, descs, *posted, &before);
		pthread_mutex_unlock(&la->lock);
	}
	return ret;
}

/* one acknowledgement's completion: 0 and *ack, 1 to skip, -1 refused (*why) */
static int received(struct linkack *la, struct rpma_conn *conn, const struct ibv_wc *wc,
	struct rpmafs_ack *ack, unsigned *unanswered, const char **why)
{
	uint64_t i = wc->wr_id & ~LINKACK_TAG;
	uint32_t len = wc->byte_len;
	int ret;

	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return 1;
	if (wc->status != IBV_WC_SUCCESS) {
		/* e.g. a local length error: a message larger than any acknowledgement */
		snprintf(la->why, sizeof(la->why), "receive failed (status %d)", (int)wc->status);
		*why = la->why;
		return -1;
	}
	if (i >= LINKACK_RECVS || wc->opcode != IBV_WC_RECV) {
		*why = "unexpected completion";
		return -1;
	}
	if (wc->byte_len > LINKACK_BUF) {
		*why = "oversized acknowledgement";
		return -1;
	}
	/* a sealed acknowledgement (§11.2): opened before anything in it is believed */
	if (la->auth && linkauth_open_ack(la->auth, la->buf + i * LINKACK_BUF, len, &len)) {
		*why = "MAC";
		return -1;
	}
	if (rpmafs_ack_parse(la->buf + i * LINKACK_BUF, len, ack, why))
		return -1;
	pthread_mutex_lock(&la->lock);
	ret = rpmafs_ack_check(&la->st, ack, why);
	*unanswered = (uint16_t)(la->st.requests - la->st.requests_acked);
	pthread_mutex_unlock(&la->lock);
	if (ret)
		return -1;
	/* the buffer is read: take the next acknowledgement into it */
	if (post(la, conn, i)) {
		*why = "cannot post a receive for acknowledgements";
		return -1;
	}
	return 0;
}

int linkack_take(struct linkack *la, struct rpma_conn *conn, struct ibv_wc *wc, int n,
	void (*on_ack)(void *ctx, const struct rpmafs_ack *ack, unsigned unanswered), void *ctx,
	char *refused, size_t len)
{
	struct rpmafs_ack ack;
	unsigned unanswered = 0;
	const char *why = NULL;
	bool bad = false;
	int kept = 0, ret;

	for (int i = 0; i < n; i++) {
		if (!(wc[i].wr_id & LINKACK_TAG)) {
			wc[kept++] = wc[i];
			continue;
		}
		if (bad)
			continue; /* refused: the connection goes, its sends still count */
		ret = received(la, conn, &wc[i], &ack, &unanswered, &why);
		if (ret == 0) {
			on_ack(ctx, &ack, unanswered);
		} else if (ret < 0) {
			bad = true;
			on_ack(ctx, NULL, unanswered);
			snprintf(refused, len, "acknowledgement refused: %s", why);
		}
	}
	return kept;
}
