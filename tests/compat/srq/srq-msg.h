/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq-msg.h -- the messages of the SRQ lab tests: message s of a connection is
 * srq_msg_len(s) bytes, a header (s, the length) then bytes that depend on s and their
 * position, so the receiver can check every byte; after the last one, one 0-byte message
 */
#ifndef SRQ_MSG_H
#define SRQ_MSG_H

#include <stdint.h>
#include <string.h>

#define SRQ_MSG_MAX 256
#define SRQ_MSG_HDR 8

static inline uint32_t srq_msg_len(uint32_t seq)
{
	return SRQ_MSG_HDR + (seq * 37u) % 120u;
}

static inline uint8_t srq_msg_byte(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + i);
}

static inline void srq_msg_fill(uint8_t *buf, uint32_t seq)
{
	uint32_t len = srq_msg_len(seq);
	memcpy(buf, &seq, 4);
	memcpy(buf + 4, &len, 4);
	for (uint32_t i = SRQ_MSG_HDR; i < len; i++)
		buf[i] = srq_msg_byte(seq, i);
}

/* 0 when buf[0 .. byte_len) is message seq, else the first offending offset + 1 */
static inline uint32_t srq_msg_check(const uint8_t *buf, uint32_t byte_len, uint32_t seq)
{
	uint32_t got_seq, got_len;
	if (byte_len != srq_msg_len(seq))
		return 1;
	memcpy(&got_seq, buf, 4);
	memcpy(&got_len, buf + 4, 4);
	if (got_seq != seq || got_len != byte_len)
		return 1;
	for (uint32_t i = SRQ_MSG_HDR; i < byte_len; i++)
		if (buf[i] != srq_msg_byte(seq, i))
			return i + 1;
	return 0;
}

#endif /* SRQ_MSG_H */
