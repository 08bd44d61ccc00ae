/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seq.h -- the test messages send-seq sends and check-seq checks
 *
 * Message seq of sender id is `size` bytes; byte i is seq_byte(id, seq, i),
 * a pattern that takes every byte value ('\n' and '\\' included). A message
 * of at least SEQ_HDR_LEN bytes starts instead with a header, little-endian:
 * id (4 bytes), seq (8), size (4), so that a checker can tell where a
 * message comes from when senders interleave.
 */
#ifndef RPMA_RECV_TEST_SEQ_H
#define RPMA_RECV_TEST_SEQ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SEQ_HDR_LEN 16
#define SEQ_MAX_SIZES 64

static inline uint8_t seq_byte(uint32_t id, uint64_t seq, size_t i)
{
	return (uint8_t)(i * 131 + (i >> 8) * 7 + seq * 17 + id * 101);
}

static inline void seq_put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t seq_get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* seq_fill -- write message (id, seq) of size bytes to buf */
static inline void seq_fill(uint8_t *buf, uint32_t id, uint64_t seq, size_t size)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = seq_byte(id, seq, i);
	if (size >= SEQ_HDR_LEN) {
		seq_put_le(buf, id, 4);
		seq_put_le(buf + 4, seq, 8);
		seq_put_le(buf + 12, size, 4);
	}
}

/* seq_body_ok -- whether bytes from `from` to len follow the pattern */
static inline int seq_body_ok(
	const uint8_t *buf, size_t from, size_t len, uint32_t id, uint64_t seq)
{
	for (size_t i = from; i < len; i++)
		if (buf[i] != seq_byte(id, seq, i))
			return 0;
	return 1;
}

/*
 * seq_parse_sizes -- "0,1,4K,1M" into sizes[]; returns how many, or -1.
 * K and M are binary (1024, 1048576).
 */
static inline int seq_parse_sizes(const char *text, size_t *sizes)
{
	int n = 0;

	while (*text) {
		char *end;
		unsigned long long v = strtoull(text, &end, 10);

		if (end == text || n == SEQ_MAX_SIZES)
			return -1;
		if (*end == 'K' || *end == 'k') {
			v <<= 10;
			end++;
		} else if (*end == 'M' || *end == 'm') {
			v <<= 20;
			end++;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		sizes[n++] = (size_t)v;
		text = end;
	}
	return n;
}

#endif /* RPMA_RECV_TEST_SEQ_H */
