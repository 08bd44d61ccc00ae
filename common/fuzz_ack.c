// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_ack.c -- libFuzzer target for the acknowledgement parser and checker
 *
 * An acknowledgement is what a receiver sends back on a connection (ack.h);
 * rpmafs parses every one with rpmafs_ack_parse() and checks it against
 * what it sent with rpmafs_ack_check(). The input is the received bytes
 * (a heap copy of exactly that length, for ASan), preceded by 12 bytes
 * that make up the sender's state (first and last number sent, the last
 * ack, requests). Beyond what ASan and UBSan catch, the target aborts when:
 *  - an accepted ack is not exactly RPMAFS_ACK_LEN bytes of the magic,
 *    version, length, zero flags and a number within RPMAFS_SEQ_MASK, or
 *    encode() does not give the same bytes back;
 *  - a refusal says nothing, or changes *ack;
 *  - rpmafs_ack_check() accepts a number after the last one sent, before
 *    the connection's first one minus one, or behind the previous ack, or
 *    changes the state when it refuses.
 *
 *	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 *	ninja -C build-fuzz common/fuzz_ack
 *	build-fuzz/common/fuzz_ack -dict=common/fuzz_ack.dict CORPUS_DIR
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ack.h"

#define CHECK(cond)                                                                           \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "fuzz_ack: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                              \
		}                                                                             \
	} while (0)

#define STATE_BYTES 12

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_state(const uint8_t *s, const struct rpmafs_ack *ack)
{
	struct rpmafs_ack_state st = {0}, before;
	const char *why = NULL;
	uint32_t first = le32(s) & RPMAFS_SEQ_MASK;
	uint32_t span = le32(s + 4) & ((1u << 28) - 1);
	int ret;

	st.sent_any = s[8] & 1;
	st.first = first;
	st.sent = rpmafs_seq_add(first, span);
	st.acked_any = s[8] & 2;
	st.acked = rpmafs_seq_add(first, span / 2);
	st.requests = (uint16_t)(s[9] | s[10] << 8);
	st.requests_acked = (uint16_t)(st.requests - (s[11] & 3));
	before = st;
	ret = rpmafs_ack_check(&st, ack, &why);
	CHECK(why != NULL && why[0] != '\0');
	if (ret) {
		CHECK(strcmp(why, "ok") != 0);
		CHECK(st.sent_any == before.sent_any && st.first == before.first &&
			st.sent == before.sent && st.acked_any == before.acked_any &&
			st.acked == before.acked && st.requests == before.requests &&
			st.requests_acked == before.requests_acked);
		return;
	}
	CHECK(strcmp(why, "ok") == 0);
	CHECK(before.sent_any);
	/* within first - 1 .. sent */
	CHECK(rpmafs_seq_diff(ack->acked, rpmafs_seq_add(first, RPMAFS_SEQ_MASK)) <= span + 1);
	CHECK(!before.acked_any || !rpmafs_seq_after(before.acked, ack->acked));
	CHECK((uint16_t)(ack->requests - before.requests_acked) <=
		(uint16_t)(before.requests - before.requests_acked));
	CHECK(st.acked == ack->acked && st.requests_acked == ack->requests && st.acked_any);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct rpmafs_ack sentinel = {0x3abcdef1, 0x1234, 0x5678};
	struct rpmafs_ack ack = sentinel;
	const uint8_t *state;
	uint8_t again[RPMAFS_ACK_LEN];
	const char *why = NULL;
	uint8_t *copy;
	int ret;

	if (size < STATE_BYTES)
		return 0;
	state = data;
	data += STATE_BYTES;
	size -= STATE_BYTES;
	if (size > 256)
		size = 256;
	copy = malloc(size ? size : 1);
	CHECK(copy != NULL);
	memcpy(copy, data, size);

	ret = rpmafs_ack_parse(size ? copy : NULL, size, &ack, &why);
	CHECK(why != NULL && why[0] != '\0');
	if (ret) {
		CHECK(strcmp(why, "ok") != 0);
		CHECK(ack.acked == sentinel.acked && ack.credits == sentinel.credits &&
			ack.requests == sentinel.requests);
		/* a well-formed ack of the state's numbers is still checked */
		ack.acked = le32(state) & RPMAFS_SEQ_MASK;
		ack.requests = 0;
	} else {
		CHECK(strcmp(why, "ok") == 0);
		CHECK(size == RPMAFS_ACK_LEN);
		CHECK(memcmp(copy, RPMAFS_ACK_MAGIC, 4) == 0);
		CHECK(copy[4] == RPMAFS_ACK_VERSION && copy[5] == RPMAFS_ACK_LEN);
		CHECK(copy[6] == 0 && copy[7] == 0);
		CHECK(ack.acked <= RPMAFS_SEQ_MASK && ack.acked == le32(copy + 8));
		rpmafs_ack_encode(&ack, again);
		CHECK(memcmp(again, copy, RPMAFS_ACK_LEN) == 0);
	}
	CHECK(rpmafs_ack_parse(size ? copy : NULL, size, NULL, NULL) == ret);
	check_state(state, &ack);
	free(copy);
	return 0;
}
