// SPDX-License-Identifier: BSD-3-Clause
/* ack.c -- encode and check receiver acknowledgements (see ack.h) */

#include <string.h>

#include "ack.h"
#include "le.h"

void rpmafs_ack_encode(const struct rpmafs_ack *ack, uint8_t buf[RPMAFS_ACK_LEN])
{
	memcpy(buf, RPMAFS_ACK_MAGIC, 4);
	buf[4] = RPMAFS_ACK_VERSION;
	buf[5] = RPMAFS_ACK_LEN;
	put_le16(buf + 6, 0);
	put_le32(buf + 8, ack->acked & RPMAFS_SEQ_MASK);
	put_le16(buf + 12, ack->credits);
	put_le16(buf + 14, ack->requests);
}

int rpmafs_ack_parse(const void *buf, size_t len, struct rpmafs_ack *ack, const char **why)
{
	const uint8_t *p = buf;
	const char *dummy;
	uint32_t acked;

	if (!why)
		why = &dummy;
	if (!p || len < RPMAFS_ACK_LEN) {
		*why = "acknowledgement truncated";
		return -1;
	}
	if (len > RPMAFS_ACK_LEN) {
		*why = "oversized acknowledgement";
		return -1;
	}
	if (memcmp(p, RPMAFS_ACK_MAGIC, 4) != 0) {
		*why = "not an acknowledgement (no RPAK magic)";
		return -1;
	}
	if (p[4] != RPMAFS_ACK_VERSION) {
		*why = "unsupported acknowledgement version";
		return -1;
	}
	if (p[5] != RPMAFS_ACK_LEN) {
		*why = "acknowledgement length field is wrong";
		return -1;
	}
	if (get_le16(p + 6) != 0) {
		*why = "unknown acknowledgement flags";
		return -1;
	}
	acked = get_le32(p + 8);
	if (acked > RPMAFS_SEQ_MASK) {
		*why = "acknowledged number out of range";
		return -1;
	}
	if (ack) {
		ack->acked = acked;
		ack->credits = get_le16(p + 12);
		ack->requests = get_le16(p + 14);
	}
	*why = "ok";
	return 0;
}

void rpmafs_ack_state_sent(struct rpmafs_ack_state *st, uint32_t imm)
{
	if (imm & RPMAFS_IMM_REQUEST) {
		st->requests++;
		return;
	}
	st->sent = imm & RPMAFS_SEQ_MASK;
	if (!st->sent_any) {
		st->sent_any = true;
		st->first = st->sent;
	}
}

int rpmafs_ack_check(struct rpmafs_ack_state *st, const struct rpmafs_ack *ack, const char **why)
{
	const char *dummy;
	uint16_t new_requests, unanswered;

	if (!why)
		why = &dummy;
	if (!st->sent_any) {
		*why = "acknowledgement before any message was sent";
		return -1;
	}
	/* the receiver may acknowledge first - 1 (nothing written yet) .. sent */
	if (rpmafs_seq_after(ack->acked, st->sent)) {
		*why = "acknowledges a message from the future (not sent yet)";
		return -1;
	}
	if (rpmafs_seq_diff(st->sent, ack->acked) > rpmafs_seq_diff(st->sent, st->first) + 1) {
		*why = "acknowledges a number before this connection's first message";
		return -1;
	}
	if (st->acked_any && rpmafs_seq_after(st->acked, ack->acked)) {
		*why = "acknowledgement goes back behind an earlier one";
		return -1;
	}
	new_requests = (uint16_t)(ack->requests - st->requests_acked);
	unanswered = (uint16_t)(st->requests - st->requests_acked);
	if (new_requests > unanswered) {
		*why = "acknowledgement counts more requests than were sent";
		return -1;
	}
	st->acked_any = true;
	st->acked = ack->acked;
	st->requests_acked = ack->requests;
	*why = "ok";
	return 0;
}
