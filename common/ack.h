/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ack.h -- receiver confirmation: message numbers, and the acknowledgement
 * rpma-recv sends back (docs/design.md §11.1)
 *
 * Negotiated through the connect private data (pdata.h,
 * RPMAFS_PDATA_F_ACK): only when the sender's request and the receiver's
 * accept both carry the flag does anything of this file travel. Then:
 *
 * - every message the sender sends is rpma_send_with_imm(): the payload
 *   is unchanged, the 32-bit immediate data carries
 *	bit 31	PROMPT: acknowledge at once, someone waits for this message
 *	bit 30	REQUEST: no message, nothing written out: a 0-byte request for
 *		an acknowledgement of everything before it (fsync, close)
 *	0..29	the message number (not for a REQUEST: 0), 1, 2, 3, ... per
 *		spool, modulo 2^30, compared wrap-safe (rpmafs_seq_after)
 * - the receiver sends back, on the same connection, acknowledgements of
 *   exactly RPMAFS_ACK_LEN bytes, little-endian:
 *	offset	size	field
 *	0	4	magic "RPAK"
 *	4	1	version (RPMAFS_ACK_VERSION)
 *	5	1	length (RPMAFS_ACK_LEN)
 *	6	2	flags: none defined, must be 0
 *	8	4	acked: the number of the last message written out (for
 *			--fsync: and synced) on this connection, in order
 *	12	2	credits: messages the sender may send past acked
 *	14	2	requests: REQUEST messages taken in on this connection
 *			so far, modulo 2^16
 *
 * rpmafs_ack_parse() checks the format, rpmafs_ack_check() checks an ack
 * against what was sent; a connection that delivers an ack failing either
 * is dropped by its sender (and counted): an ack is a promise about data,
 * and one that cannot be true means the peer cannot be trusted.
 */
#ifndef RPMAFS_ACK_H
#define RPMAFS_ACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPMAFS_IMM_PROMPT (1u << 31)
#define RPMAFS_IMM_REQUEST (1u << 30)
#define RPMAFS_SEQ_MASK ((1u << 30) - 1)

#define RPMAFS_ACK_MAGIC "RPAK"
#define RPMAFS_ACK_VERSION 1
#define RPMAFS_ACK_LEN 16
#define RPMAFS_ACK_MAX_CREDITS 65535u

struct rpmafs_ack {
	uint32_t acked;	   /* 0 .. RPMAFS_SEQ_MASK */
	uint16_t credits;
	uint16_t requests;
};

/* rpmafs_seq_next -- the number after s (modulo 2^30) */
static inline uint32_t rpmafs_seq_next(uint32_t s)
{
	return (s + 1) & RPMAFS_SEQ_MASK;
}

/* rpmafs_seq_add -- s + n (modulo 2^30) */
static inline uint32_t rpmafs_seq_add(uint32_t s, uint32_t n)
{
	return (s + n) & RPMAFS_SEQ_MASK;
}

/* rpmafs_seq_diff -- how far b is after a (modulo 2^30) */
static inline uint32_t rpmafs_seq_diff(uint32_t b, uint32_t a)
{
	return (b - a) & RPMAFS_SEQ_MASK;
}

/* rpmafs_seq_after -- a comes after b: within half the number space ahead of it */
static inline bool rpmafs_seq_after(uint32_t a, uint32_t b)
{
	uint32_t d = rpmafs_seq_diff(a, b);

	return d != 0 && d < (1u << 29);
}

/* rpmafs_ack_encode -- write *ack into buf (RPMAFS_ACK_LEN bytes); acked is masked */
void rpmafs_ack_encode(const struct rpmafs_ack *ack, uint8_t buf[RPMAFS_ACK_LEN]);

/*
 * rpmafs_ack_parse -- check len bytes at buf as one acknowledgement; 0 and
 * *ack filled in, or -1 with *why (unless NULL) saying what is wrong and
 * *ack left alone. Exactly RPMAFS_ACK_LEN bytes; the magic, version and
 * length; no flags; acked within RPMAFS_SEQ_MASK.
 */
int rpmafs_ack_parse(const void *buf, size_t len, struct rpmafs_ack *ack, const char **why);

/* what a sender has sent on one connection and has had acknowledged */
struct rpmafs_ack_state {
	bool sent_any;	   /* a numbered message went out on this connection */
	uint32_t first;	   /* the number of the first one */
	uint32_t sent;	   /* the number of the last one */
	bool acked_any;	   /* an ack came */
	uint32_t acked;	   /* the last ack's number */
	uint16_t requests; /* REQUEST messages sent (modulo 2^16) */
	uint16_t requests_acked; /* the last ack's count of them */
};

/*
 * rpmafs_ack_check -- is ack possible after what st says was sent and
 * acknowledged? 0, and st updated; or -1 with *why: it acknowledges a
 * message not sent (from the future, or before this connection's first),
 * goes back behind an earlier ack, or counts more requests than were sent.
 */
int rpmafs_ack_check(struct rpmafs_ack_state *st, const struct rpmafs_ack *ack, const char **why);

/* rpmafs_ack_state_sent -- record a message sent with immediate data imm */
void rpmafs_ack_state_sent(struct rpmafs_ack_state *st, uint32_t imm);

#endif /* RPMAFS_ACK_H */
