// SPDX-License-Identifier: BSD-3-Clause
/* confirm.c -- acknowledging what was written out (see confirm.h) */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ack.h"
#include "confirm.h"

int recv_confirm_new(struct rpma_peer *peer, uint16_t credits, struct recv_confirm **rc_ptr)
{
	long page = sysconf(_SC_PAGESIZE);
	struct recv_confirm *rc = calloc(1, sizeof(*rc));
	int ret;

	if (!rc)
		return -ENOMEM;
	if (posix_memalign((void **)&rc->bufs, page > 0 ? (size_t)page : 4096,
		    RECV_ACK_BUFS * RPMAFS_ACK_LEN)) {
		free(rc);
		return -ENOMEM;
	}
	ret = rpma_mr_reg(peer, rc->bufs, RECV_ACK_BUFS * RPMAFS_ACK_LEN, RPMA_MR_USAGE_SEND,
		&rc->mr);
	if (ret) {
		free(rc->bufs);
		free(rc);
		return ret;
	}
	rc->credits = credits;
	*rc_ptr = rc;
	return 0;
}

void recv_confirm_delete(struct recv_confirm **rc_ptr)
{
	struct recv_confirm *rc = *rc_ptr;

	if (!rc)
		return;
	if (rc->mr)
		(void)rpma_mr_dereg(&rc->mr);
	free(rc->bufs);
	free(rc);
	*rc_ptr = NULL;
}

enum recv_take recv_confirm_take(
	struct recv_confirm *rc, const struct ibv_wc *wc, uint32_t *num, const char **why)
{
	uint32_t imm, n;

	if (!(wc->wc_flags & IBV_WC_WITH_IMM)) {
		*why = "a message without its number from an acknowledging sender";
		return RECV_TAKE_BAD;
	}
	imm = ntohl(wc->imm_data);
	if (imm & RPMAFS_IMM_REQUEST) {
		if (wc->byte_len != 0 || (imm & RPMAFS_SEQ_MASK) != 0) {
			*why = "an acknowledgement request with a payload or a number";
			return RECV_TAKE_BAD;
		}
		if (!rc->seen_any) {
			*why = "an acknowledgement request before any message";
			return RECV_TAKE_BAD;
		}
		rc->requests++;
		rc->prompt = true;
		return RECV_TAKE_REQUEST;
	}
	n = imm & RPMAFS_SEQ_MASK;
	if (imm & RPMAFS_IMM_PROMPT)
		rc->prompt = true;
	if (rc->seen_any && !rpmafs_seq_after(n, rc->seen)) {
		/* RC does not repeat itself: only a sender's re-send can be this */
		rc->duplicates++;
		return RECV_TAKE_DUPLICATE;
	}
	rc->seen_any = true;
	rc->seen = n;
	*num = n;
	return RECV_TAKE_RECORD;
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
	if (rc->acked_any && rc->acked == rc->written && rc->acked_requests == rc->requests)
		return -1;
	if (rc->prompt || rc->unacked >= RECV_ACK_EVERY || rc->acked_requests != rc->requests)
		return 0;
	left = rc->since_ms + RECV_ACK_DELAY_MS - now_ms;
	return left > 0 ? (int)left : 0;
}

int recv_confirm_sent(struct recv_confirm *rc, const struct ibv_wc *wc, const char **why)
{
	uint64_t i = wc->wr_id & ~RECV_ACK_TAG;

	if (i < RECV_ACK_BUFS)
		rc->busy &= ~(1u << i);
	if (wc->status != IBV_WC_SUCCESS) {
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
	unsigned i;
	int ret;

	if (cq && recv_confirm_poll(rc, cq, why))
		return -1;
	for (i = 0; i < RECV_ACK_BUFS && (rc->busy & (1u << i)); i++)
		;
	if (i == RECV_ACK_BUFS)
		return 1;
	rpmafs_ack_encode(&(struct rpmafs_ack){rc->written, rc->credits, rc->requests},
		rc->bufs + i * RPMAFS_ACK_LEN);
	ret = rpma_send(conn, rc->mr, i * RPMAFS_ACK_LEN, RPMAFS_ACK_LEN,
		RPMA_F_COMPLETION_ALWAYS, (const void *)(uintptr_t)(RECV_ACK_TAG | i));
	if (ret) {
		*why = rpma_err_2str(ret);
		return -1;
	}
	rc->busy |= 1u << i;
	rc->acked_any = true;
	rc->acked = rc->written;
	rc->acked_requests = rc->requests;
	rc->unacked = 0;
	rc->prompt = false;
	rc->acks++;
	return 0;
}
