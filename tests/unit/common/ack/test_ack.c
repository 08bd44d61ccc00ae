// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_ack.c -- unit tests of common/ack.c and the RPMAFS_PDATA_F_ACK flag
 * of common/pdata.c: the acknowledgement format, hostile acknowledgements
 * (garbage, truncated, oversized, from the future, wrapped, going back)
 * and the negotiation flag with peers that do not know it.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ack.h"
#include "pdata.h"

static void encode(uint32_t acked, uint16_t credits, uint16_t requests, uint8_t *buf)
{
	rpmafs_ack_encode(&(struct rpmafs_ack){acked, credits, requests}, buf);
}

static void refused(const uint8_t *buf, size_t len, const char *want_why)
{
	struct rpmafs_ack ack = {7, 8, 9};
	const char *why = NULL;

	assert_int_equal(rpmafs_ack_parse(buf, len, &ack, &why), -1);
	assert_non_null(why);
	if (!strstr(why, want_why))
		fail_msg("why is \"%s\", want \"%s\"", why, want_why);
	/* left alone */
	assert_int_equal(ack.acked, 7);
	assert_int_equal(ack.credits, 8);
	assert_int_equal(ack.requests, 9);
}

static void test_roundtrip(void **state)
{
	uint8_t buf[RPMAFS_ACK_LEN];
	struct rpmafs_ack ack;
	const char *why;

	(void)state;
	encode(RPMAFS_SEQ_MASK, 65535, 513, buf);
	assert_memory_equal(buf, "RPAK\x01\x10\x00\x00\xff\xff\xff\x3f\xff\xff\x01\x02", 16);
	assert_int_equal(rpmafs_ack_parse(buf, sizeof(buf), &ack, &why), 0);
	assert_string_equal(why, "ok");
	assert_int_equal(ack.acked, RPMAFS_SEQ_MASK);
	assert_int_equal(ack.credits, 65535);
	assert_int_equal(ack.requests, 513);
	/* flag bits of the immediate data never leak into the number */
	encode(RPMAFS_IMM_PROMPT | 5, 1, 0, buf);
	assert_int_equal(rpmafs_ack_parse(buf, sizeof(buf), &ack, NULL), 0);
	assert_int_equal(ack.acked, 5);
}

static void test_hostile_format(void **state)
{
	uint8_t buf[64], good[RPMAFS_ACK_LEN];

	(void)state;
	encode(10, 4, 0, good);
	refused(NULL, 0, "truncated");
	refused(good, 0, "truncated");
	refused(good, RPMAFS_ACK_LEN - 1, "truncated");
	memset(buf, 0, sizeof(buf));
	memcpy(buf, good, sizeof(good));
	refused(buf, RPMAFS_ACK_LEN + 1, "oversized"); /* even zero padding */
	refused(buf, sizeof(buf), "oversized");
	memset(buf, 0xa5, sizeof(buf));
	refused(buf, RPMAFS_ACK_LEN, "magic"); /* garbage */
	memcpy(buf, "RPMF\x01\x10", 6);	       /* a private data header is no ack */
	refused(buf, RPMAFS_ACK_LEN, "magic");
	memcpy(buf, good, sizeof(good));
	buf[4] = 2;
	refused(buf, RPMAFS_ACK_LEN, "version");
	memcpy(buf, good, sizeof(good));
	buf[5] = 17;
	refused(buf, RPMAFS_ACK_LEN, "length");
	memcpy(buf, good, sizeof(good));
	buf[7] = 0x80;
	refused(buf, RPMAFS_ACK_LEN, "flags");
	memcpy(buf, good, sizeof(good));
	buf[11] = 0x40; /* acked = 2^30 + 10 */
	refused(buf, RPMAFS_ACK_LEN, "out of range");
}

static struct rpmafs_ack_state sent(uint32_t first, uint32_t last)
{
	struct rpmafs_ack_state st = {0};

	for (uint32_t n = first;; n = rpmafs_seq_next(n)) {
		rpmafs_ack_state_sent(&st, n | (n % 3 ? 0 : RPMAFS_IMM_PROMPT));
		if (n == last)
			break;
	}
	return st;
}

static void check_bad(struct rpmafs_ack_state *st, uint32_t acked, uint16_t requests,
	const char *want_why)
{
	struct rpmafs_ack_state before = *st;
	const char *why = NULL;

	if (rpmafs_ack_check(st, &(struct rpmafs_ack){acked, 1, requests}, &why) == 0)
		fail_msg("ack of %u accepted", acked);
	if (!strstr(why, want_why))
		fail_msg("ack of %u: why is \"%s\", want \"%s\"", acked, why, want_why);
	assert_int_equal(st->acked, before.acked);
	assert_int_equal(st->acked_any, before.acked_any);
}

static void check_good(struct rpmafs_ack_state *st, uint32_t acked, uint16_t requests)
{
	const char *why = NULL;

	if (rpmafs_ack_check(st, &(struct rpmafs_ack){acked, 1, requests}, &why))
		fail_msg("ack of %u refused: %s", acked, why);
	assert_int_equal(st->acked, acked);
}

static void test_check_sequence(void **state)
{
	struct rpmafs_ack_state st = {0};

	(void)state;
	check_bad(&st, 0, 0, "before any message");
	st = sent(100, 110);
	check_bad(&st, 111, 0, "future");
	check_bad(&st, 110 + (1u << 28), 0, "future");
	check_bad(&st, 98, 0, "before this connection");
	check_good(&st, 99, 0); /* nothing of this connection written yet */
	check_good(&st, 105, 0);
	check_good(&st, 105, 0); /* the same again: nothing new */
	check_bad(&st, 104, 0, "goes back");
	check_good(&st, 110, 0);
	check_bad(&st, 0, 0, "before this connection");
}

static void test_check_wrap(void **state)
{
	struct rpmafs_ack_state st;

	(void)state;
	/* numbers wrap at 2^30: 2^30 - 3 .. 2 */
	st = sent(RPMAFS_SEQ_MASK - 2, 2);
	assert_int_equal(st.sent, 2);
	check_good(&st, RPMAFS_SEQ_MASK, 0);
	check_good(&st, 0, 0);
	check_good(&st, 2, 0);
	check_bad(&st, 3, 0, "future");
	check_bad(&st, RPMAFS_SEQ_MASK, 0, "goes back");
	/* half the number space ahead is the past, not the future */
	st = sent(10, 20);
	check_bad(&st, 20 + (1u << 29) + 1, 0, "before this connection");
}

static void test_check_requests(void **state)
{
	struct rpmafs_ack_state st = sent(1, 3);

	(void)state;
	check_bad(&st, 3, 1, "more requests");
	rpmafs_ack_state_sent(&st, RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT);
	assert_int_equal(st.sent, 3); /* a request takes no number */
	check_good(&st, 3, 0);
	check_good(&st, 3, 1);
	check_bad(&st, 3, 2, "more requests");
	check_bad(&st, 3, 0xffff, "more requests");
}

static void test_seq(void **state)
{
	(void)state;
	assert_int_equal(rpmafs_seq_next(RPMAFS_SEQ_MASK), 0);
	assert_true(rpmafs_seq_after(0, RPMAFS_SEQ_MASK));
	assert_false(rpmafs_seq_after(5, 5));
	assert_false(rpmafs_seq_after(4, 5));
	assert_int_equal(rpmafs_seq_diff(2, RPMAFS_SEQ_MASK - 1), 4);
}

/* the negotiation: a version-1 peer without the flag is what every older rpmafs sends */
static void test_pdata_flag(void **state)
{
	uint8_t hdr[RPMAFS_PDATA_MAX_LEN];
	struct rpmafs_pdata pd;

	(void)state;
	assert_int_equal(rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = 4096,
						     .credits = 8,
						     .flags = RPMAFS_PDATA_F_ACK | 0x8000,
						     .session = 0},
				 hdr),
		RPMAFS_PDATA_LEN);
	assert_int_equal(hdr[4], 1); /* still version 1: older peers accept it */
	assert_int_equal(hdr[6], 1);
	assert_int_equal(hdr[7], 0); /* unknown flags are not sent */
	assert_int_equal(rpmafs_pdata_parse(hdr, RPMAFS_PDATA_LEN, &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_ACK);
	rpmafs_pdata_encode(
		&(struct rpmafs_pdata){.max_message = 4096, .credits = 8, .flags = 0, .session = 0},
		hdr);
	assert_int_equal(rpmafs_pdata_parse(hdr, RPMAFS_PDATA_LEN, &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(pd.flags, 0);
	/* a newer peer's flag bits are ignored, not refused */
	hdr[7] = 0x80;
	assert_int_equal(rpmafs_pdata_parse(hdr, RPMAFS_PDATA_LEN, &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(pd.flags, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_hostile_format),
		cmocka_unit_test(test_check_sequence),
		cmocka_unit_test(test_check_wrap),
		cmocka_unit_test(test_check_requests),
		cmocka_unit_test(test_seq),
		cmocka_unit_test(test_pdata_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
