// SPDX-License-Identifier: BSD-3-Clause
/* confirm.c -- acknowledging what was written out (see confirm.h) */

#include <errno.h>
#include <stdlib.h>

#include "ack.h"
#include "confirm.h"

int recv_confirm_new(struct rpma_peer *peer, uint16_t credits, struct recv_confirm **rc_ptr)
{
	struct recv_confirm *rc = calloc(1, sizeof(*rc));
	int ret;

	if (!rc)
		return -ENOMEM;
	/* its CQ also holds the shared receive queue's completions: tagged */
	ret = rpmafs_ackring_new(peer, 1, RECV_ACK_TAG, &rc->ring);
	if (ret) {
		free(rc);
		return ret;
	}
	rc->credits = credits;
	*rc_ptr = rc;
	return 0;
}

void recv_confirm_seal(struct recv_confirm *rc, struct rpmafs_auth *auth)
{
	rc->auth = auth;
}

void recv_confirm_delete(struct recv_confirm **rc_ptr)
{
	struct recv_confirm *rc = *rc_ptr;

	if (!rc)
		return;
	rpmafs_ackring_delete(&rc->ring);
	free(rc);
	*rc_ptr = NULL;
}

enum recv_take recv_confirm_take(
	struct recv_confirm *rc, const struct ibv_wc *wc, uint32_t *num, const char **why)
{
	bool prompt;
	enum rpmafs_ackreq_kind kind = rpmafs_ackreq_take(&rc->req, wc, num, &prompt, why);

	/* a re-send of a message someone waits for still wants its answer */
	if (prompt)
		rc->prompt = true;
	switch (kind) {
	case RPMAFS_ACKREQ_RECORD:
		return RECV_TAKE_RECORD;
	case RPMAFS_ACKREQ_DUPLICATE:
		rc->duplicates++;
		return RECV_TAKE_DUPLICATE;
	case RPMAFS_ACKREQ_REQUEST:
		return RECV_TAKE_REQUEST;
	case RPMAFS_ACKREQ_BAD:
		break;
	}
	return RECV_TAKE_BAD;
}

void recv_confirm_written(struct recv_confirm *rc, uint32_t num, int64_t now_ms)
{
	if (!rc->unacked)
		rc->since_ms = now_ms;
	rc->unacked++;
	rc->written_any = true;
	rc->written = num;
}

int recv_confirm_due(const struct recv_confirm *rc, int64_t now_ms)
{
	int64_t left;

	if (!rc->written_any)
		return -1;
	if (rc->acked_any && rc->acked == rc->written && rc->acked_requests == rc->req.requests)
		return -1;
	if (rc->prompt || rc->unacked >= RECV_ACK_EVERY || rc->acked_requests != rc->req.requests)
		return 0;
	left = rc->since_ms + RECV_ACK_DELAY_MS - now_ms;
	return left > 0 ? (int)left : 0;
}

int recv_confirm_sent(struct recv_confirm *rc, const struct ibv_wc *wc, const char **why)
{
	if (rpmafs_ackring_sent(rc->ring, &rc->busy, wc)) {
		*why = ibv_wc_status_str(wc->status);
		return -1;
	}
	return 0;
}

int recv_confirm_poll(struct recv_confirm *rc, struct rpma_cq *cq, const char **why)
{
	struct ibv_wc wc[RECV_ACK_BUFS];
	int n = 0, ret;

	if (!rc->busy)
		return 0;
	ret = rpma_cq_get_wc(cq, RECV_ACK_BUFS, wc, &n);
	if (ret && ret != RPMA_E_NO_COMPLETION) {
		*why = rpma_err_2str(ret);
		return -1;
	}
	for (int k = 0; k < n; k++)
		if (recv_confirm_sent(rc, &wc[k], why))
			return -1;
	return 0;
}

int recv_confirm_send(
	struct recv_confirm *rc, struct rpma_conn *conn, struct rpma_cq *cq, const char **why)
{
	struct rpmafs_ack ack = {
		.acked = rc->written, .credits = rc->credits, .requests = rc->req.requests};
	int ret;

	if (cq && recv_confirm_poll(rc, cq, why))
		return -1;
	ret = rpmafs_ackring_send(rc->ring, 0, &rc->busy, conn, &ack, rc->auth, why);
	if (ret)
		return ret;
	rc->acked_any = true;
	rc->acked = rc->written;
	rc->acked_requests = rc->req.requests;
	rc->unacked = 0;
	rc->prompt = false;
	rc->acks++;
	return 0;
}
