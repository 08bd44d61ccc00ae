// SPDX-License-Identifier: BSD-3-Clause
/* ackreq.c -- what an acknowledging sender's receive completion is (see ackreq.h) */

#include <arpa/inet.h>

#include "ack.h"
#include "ackreq.h"

enum rpmafs_ackreq_kind rpmafs_ackreq_take(struct rpmafs_ackreq *rq, const struct ibv_wc *wc,
	uint32_t *num, bool *prompt, const char **why)
{
	bool ignored;
	uint32_t imm, n;

	if (!prompt)
		prompt = &ignored;
	*prompt = false;
	if (!(wc->wc_flags & IBV_WC_WITH_IMM)) {
		*why = "a message without its number from an acknowledging sender";
		return RPMAFS_ACKREQ_BAD;
	}
	imm = ntohl(wc->imm_data);
	if (imm & RPMAFS_IMM_REQUEST) {
		if (wc->byte_len != 0 || (imm & RPMAFS_SEQ_MASK) != 0) {
			*why = "an acknowledgement request with a payload or a number";
			return RPMAFS_ACKREQ_BAD;
		}
		if (!rq->seen_any) {
			*why = "an acknowledgement request before any message";
			return RPMAFS_ACKREQ_BAD;
		}
		rq->requests++;
		*prompt = true;
		return RPMAFS_ACKREQ_REQUEST;
	}
	n = imm & RPMAFS_SEQ_MASK;
	*num = n;
	*prompt = (imm & RPMAFS_IMM_PROMPT) != 0;
	if (rq->seen_any && !rpmafs_seq_after(n, rq->seen)) {
		/* RC does not repeat itself: only a sender's re-send can be this */
		return RPMAFS_ACKREQ_DUPLICATE;
	}
	rq->seen_any = true;
	rq->seen = n;
	return RPMAFS_ACKREQ_RECORD;
}
