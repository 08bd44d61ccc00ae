// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_pdata.c -- the RPMF header: version 1 (no session), version 2 (the
 * sender's session) and version 3 (a key: request and accept) round trips, clamping, padding, and every way a header
 * with the magic can be malformed
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pdata.h"

#define SESSION 0x8877665544332211ull

static enum rpmafs_pdata_kind parse(
	const uint8_t *buf, size_t len, struct rpmafs_pdata *pd, const char **why)
{
	return rpmafs_pdata_parse(buf, len, pd, why);
}

/* p parses as malformed, *pd untouched, and why says text */
static void malformed(const uint8_t *p, size_t len, const char *text)
{
	struct rpmafs_pdata pd = {7, 7, 7, 7, {0}};
	const char *why = NULL;

	assert_int_equal(parse(p, len, &pd, &why), RPMAFS_PDATA_MALFORMED);
	assert_non_null(why);
	assert_non_null(strstr(why, text));
	assert_int_equal(pd.max_message, 7);
	assert_int_equal(pd.credits, 7);
	assert_int_equal(pd.flags, 7);
	assert_true(pd.session == 7);
}

/* version 1: no session, 16 bytes, F_SESSION never sent */
static void v1_round_trip(void **state)
{
	uint8_t buf[RPMAFS_PDATA_MAX_LEN];
	struct rpmafs_pdata pd;
	const char *why;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = 4096,
						     .credits = 31,
						     .flags = RPMAFS_PDATA_F_ACK |
							      RPMAFS_PDATA_F_SESSION | 0x8000},
				 buf),
		RPMAFS_PDATA_LEN);
	assert_memory_equal(buf, "RPMF\x01\x10\x01\x00\x00\x10\x00\x00\x1f\x00\x00\x00", 16);
	assert_int_equal(buf[16], 0xee); /* nothing written past the header */
	assert_int_equal(parse(buf, RPMAFS_PDATA_LEN, &pd, &why), RPMAFS_PDATA_OK);
	assert_string_equal(why, "ok");
	assert_int_equal(pd.max_message, 4096);
	assert_int_equal(pd.credits, 31);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_ACK);
	assert_true(pd.session == 0);

	/* padded to 56 bytes with zeros, as RoCE pads a request */
	uint8_t padded[56] = {0};
	memcpy(padded, buf, RPMAFS_PDATA_LEN);
	assert_int_equal(parse(padded, sizeof(padded), &pd, NULL), RPMAFS_PDATA_OK);
	assert_true(pd.session == 0);

	/* a version 1 header with the session bit: ignored, as unknown bits were */
	buf[6] |= RPMAFS_PDATA_F_SESSION;
	assert_int_equal(parse(buf, RPMAFS_PDATA_LEN, &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_ACK);
	assert_true(pd.session == 0);
}

/* version 2: the session at offset 16, F_SESSION set, 24 bytes */
static void v2_round_trip(void **state)
{
	uint8_t buf[RPMAFS_PDATA_MAX_LEN], padded[56] = {0};
	struct rpmafs_pdata pd;
	const char *why;

	(void)state;
	assert_int_equal(rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = 1u << 20,
						     .flags = RPMAFS_PDATA_F_ACK,
						     .session = SESSION},
				 buf),
		RPMAFS_PDATA_LEN_2);
	assert_memory_equal(buf,
		"RPMF\x02\x18\x03\x00\x00\x00\x10\x00\x00\x00\x00\x00"
		"\x11\x22\x33\x44\x55\x66\x77\x88",
		24);
	assert_int_equal(parse(buf, sizeof(buf), &pd, &why), RPMAFS_PDATA_OK);
	assert_string_equal(why, "ok");
	assert_int_equal(pd.max_message, 1u << 20);
	assert_int_equal(pd.credits, 0);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_SESSION);
	assert_true(pd.session == SESSION);
	memcpy(padded, buf, sizeof(buf));
	assert_int_equal(parse(padded, sizeof(padded), &pd, NULL), RPMAFS_PDATA_OK);
	assert_true(pd.session == SESSION);

	/* a session without receiver confirmation, and the extreme values */
	assert_int_equal(rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = 0,
						     .credits = 1u << 31,
						     .session = UINT64_MAX},
				 buf),
		RPMAFS_PDATA_LEN_2);
	assert_int_equal(parse(buf, sizeof(buf), &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(pd.max_message, 1);
	assert_int_equal(pd.credits, RPMAFS_PDATA_MAX_CREDITS);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_SESSION);
	assert_true(pd.session == UINT64_MAX);
	assert_int_equal(
		rpmafs_pdata_encode(
			&(struct rpmafs_pdata){.max_message = UINT32_MAX, .session = 1}, buf),
		RPMAFS_PDATA_LEN_2);
	assert_int_equal(parse(buf, sizeof(buf), &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(pd.max_message, RPMAFS_PDATA_MAX_MESSAGE);
	assert_true(pd.session == 1);

	/* unknown flag bits of a newer peer: ignored in version 2 too */
	buf[7] = 0x80;
	assert_int_equal(parse(buf, sizeof(buf), &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_SESSION);
}

/* none, zeros, and data that is not ours */
static void none_and_foreign(void **state)
{
	uint8_t zeros[56] = {0};
	struct rpmafs_pdata pd = {7, 7, 7, 7, {0}};

	(void)state;
	assert_int_equal(parse(NULL, 0, &pd, NULL), RPMAFS_PDATA_NONE);
	assert_int_equal(parse(zeros, 0, &pd, NULL), RPMAFS_PDATA_NONE);
	assert_int_equal(parse(zeros, sizeof(zeros), &pd, NULL), RPMAFS_PDATA_NONE);
	assert_int_equal(parse((const uint8_t *)"RPM", 3, &pd, NULL), RPMAFS_PDATA_FOREIGN);
	assert_int_equal(
		parse((const uint8_t *)"HELLO, RECEIVER", 15, &pd, NULL), RPMAFS_PDATA_FOREIGN);
	assert_true(pd.max_message == 7 && pd.session == 7);
}

/* every way a header with the magic is refused */
static void every_malformed_case(void **state)
{
	uint8_t v1[RPMAFS_PDATA_MAX_LEN], v2[RPMAFS_PDATA_MAX_LEN], b[64];

	(void)state;
	rpmafs_pdata_encode(&(struct rpmafs_pdata){4096, 8, RPMAFS_PDATA_F_ACK, 0, {0}}, v1);
	rpmafs_pdata_encode(&(struct rpmafs_pdata){4096, 0, RPMAFS_PDATA_F_ACK, SESSION, {0}}, v2);

	/* truncated, at every length from the magic on */
	for (size_t len = 4; len < RPMAFS_PDATA_LEN; len++) {
		malformed(v1, len, "truncated");
		malformed(v2, len, "truncated");
	}
	for (size_t len = RPMAFS_PDATA_LEN; len < RPMAFS_PDATA_LEN_2; len++)
		malformed(v2, len, "truncated");

	/* versions other than 1, 2 and 3 (test v3_malformed) */
	for (unsigned v = 0; v < 256; v++) {
		if (v == RPMAFS_PDATA_VERSION || v == RPMAFS_PDATA_VERSION_2 ||
			v == RPMAFS_PDATA_VERSION_3)
			continue;
		memcpy(b, v1, 16);
		b[4] = (uint8_t)v;
		malformed(b, 16, "version");
		memcpy(b, v2, 24);
		b[4] = (uint8_t)v;
		malformed(b, 24, "version");
	}

	/* any other version/length pair */
	for (unsigned l = 0; l < 256; l++) {
		if (l != RPMAFS_PDATA_LEN) {
			memset(b, 0, sizeof(b));
			memcpy(b, v1, 16);
			b[5] = (uint8_t)l;
			malformed(b, sizeof(b), "length");
		}
		if (l != RPMAFS_PDATA_LEN_2) {
			memset(b, 0, sizeof(b));
			memcpy(b, v2, 24);
			b[5] = (uint8_t)l;
			malformed(b, sizeof(b), "length");
		}
	}
	/* version 1 with version 2's length (and its session after it) */
	memcpy(b, v2, 24);
	b[4] = RPMAFS_PDATA_VERSION;
	malformed(b, 24, "length");
	/* version 2 with version 1's length */
	memcpy(b, v1, 16);
	b[4] = RPMAFS_PDATA_VERSION_2;
	malformed(b, 24, "length");

	/* non-zero bytes past the header, at every position up to 56 bytes */
	for (size_t at = 16; at < 56; at++) {
		memset(b, 0, sizeof(b));
		memcpy(b, v1, 16);
		b[at] = 1;
		malformed(b, 56, "past the rpmafs header");
		if (at >= 24) {
			memset(b, 0, sizeof(b));
			memcpy(b, v2, 24);
			b[at] = 0x80;
			malformed(b, 56, "past the rpmafs header");
		}
	}

	/* max_message 0 and past 1 GiB, credits past 65535, in both versions */
	const uint8_t *hdrs[2] = {v1, v2};
	const size_t lens[2] = {RPMAFS_PDATA_LEN, RPMAFS_PDATA_LEN_2};
	for (int i = 0; i < 2; i++) {
		memcpy(b, hdrs[i], lens[i]);
		memset(b + 8, 0, 4);
		malformed(b, lens[i], "max_message");
		memcpy(b, hdrs[i], lens[i]);
		memcpy(b + 8, "\x01\x00\x00\x40", 4);
		malformed(b, lens[i], "max_message");
		memcpy(b, hdrs[i], lens[i]);
		memcpy(b + 12, "\x00\x00\x01\x00", 4);
		malformed(b, lens[i], "credits");
	}

	/* version 2: the flag with session 0, a session without the flag */
	memcpy(b, v2, 24);
	memset(b + 16, 0, 8);
	malformed(b, 24, "session 0");
	memcpy(b, v2, 24);
	b[6] &= (uint8_t)~RPMAFS_PDATA_F_SESSION;
	malformed(b, 24, "without the session flag");
	/* and any single byte of the session set without the flag */
	for (int at = 16; at < 24; at++) {
		memcpy(b, v2, 24);
		b[6] &= (uint8_t)~RPMAFS_PDATA_F_SESSION;
		memset(b + 16, 0, 8);
		b[at] = 1;
		malformed(b, 24, "without the session flag");
	}
	/* version 2 with neither flag nor session is a sender without one: accepted */
	memcpy(b, v2, 24);
	b[6] &= (uint8_t)~RPMAFS_PDATA_F_SESSION;
	memset(b + 16, 0, 8);
	struct rpmafs_pdata pd;
	assert_int_equal(parse(b, 24, &pd, NULL), RPMAFS_PDATA_OK);
	assert_true(pd.session == 0);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_ACK);
}

/* version 3 headers as auth.c writes them, by hand (the tags are auth.c's business) */
static const uint8_t v3_req[56] = "RPMF\x03\x38\x07\x00\x00\x10\x00\x00\x00\x00\x00\x00"
				  "\x11\x22\x33\x44\x55\x66\x77\x88" /* session */
				  "\x01\x02\x03\x04\x05\x06\x07\x08" /* key id */
				  "\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf"
				  "\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7"; /* tag */
static const uint8_t v3_acc[48] =
	"RPMF\x03\x30\x0d\x00\x00\x10\x00\x00\x40\x00\x00\x00"
	"\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf"
	"\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf";

static void v3_parse(void **state)
{
	struct rpmafs_pdata pd;
	uint8_t b[196] = {0};
	const char *why;

	(void)state;
	assert_int_equal(parse(v3_req, sizeof(v3_req), &pd, &why), RPMAFS_PDATA_OK);
	assert_string_equal(why, "ok");
	assert_int_equal(pd.max_message, 4096);
	assert_int_equal(pd.credits, 0);
	assert_int_equal(
		pd.flags, RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_SESSION | RPMAFS_PDATA_F_AUTH);
	assert_true(pd.session == 0x8877665544332211ull);
	assert_true(pd.auth.on && pd.auth.request && !pd.auth.encrypt);
	assert_memory_equal(pd.auth.id, v3_req + 24, 8);
	assert_memory_equal(pd.auth.nonce, v3_req + 32, 16);
	assert_memory_equal(pd.auth.tag, v3_req + 48, 8);
	assert_memory_equal(pd.auth.tag + 8, "\0\0\0\0\0\0\0\0", 8);

	/* an accept, padded to 196 bytes as an InfiniBand reply is */
	memcpy(b, v3_acc, sizeof(v3_acc));
	assert_int_equal(parse(b, sizeof(b), &pd, &why), RPMAFS_PDATA_OK);
	assert_int_equal(pd.credits, 64);
	assert_int_equal(
		pd.flags, RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_AUTH | RPMAFS_PDATA_F_ENCRYPT);
	assert_true(pd.session == 0);
	assert_true(pd.auth.on && !pd.auth.request && pd.auth.encrypt);
	assert_memory_equal(pd.auth.id, "\0\0\0\0\0\0\0\0", 8);
	assert_memory_equal(pd.auth.nonce, v3_acc + 16, 16);
	assert_memory_equal(pd.auth.tag, v3_acc + 32, 16);
	/* an accept's F_SESSION is ignored; unknown flags too */
	b[6] |= RPMAFS_PDATA_F_SESSION;
	b[7] = 0x80;
	assert_int_equal(parse(b, sizeof(b), &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(
		pd.flags, RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_AUTH | RPMAFS_PDATA_F_ENCRYPT);

	/* a request without a session */
	memcpy(b, v3_req, sizeof(v3_req));
	b[6] &= (uint8_t)~RPMAFS_PDATA_F_SESSION;
	memset(b + 16, 0, 8);
	assert_int_equal(parse(b, 56, &pd, NULL), RPMAFS_PDATA_OK);
	assert_true(pd.session == 0);

	/* versions 1 and 2 leave pd->auth zero, and never carry F_AUTH/F_ENCRYPT */
	memcpy(b, "RPMF\x01\x10\x0d\x00\x00\x10\x00\x00\x00\x00\x00\x00", 16);
	memset(&pd, 0xff, sizeof(pd));
	assert_int_equal(parse(b, 16, &pd, NULL), RPMAFS_PDATA_OK);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_ACK);
	assert_false(pd.auth.on || pd.auth.request || pd.auth.encrypt);
	assert_memory_equal(pd.auth.nonce, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	/* and encode writes no version 3 flag */
	assert_int_equal(
		rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = 1, .flags = 0xffff}, b),
		16);
	assert_int_equal(b[6], RPMAFS_PDATA_F_ACK);
	assert_int_equal(b[7], 0);
}

static void v3_malformed(void **state)
{
	uint8_t b[64];

	(void)state;
	/* without F_AUTH */
	memcpy(b, v3_req, 56);
	b[6] &= (uint8_t)~RPMAFS_PDATA_F_AUTH;
	malformed(b, 56, "auth flag");
	memcpy(b, v3_acc, 48);
	b[6] &= (uint8_t)~RPMAFS_PDATA_F_AUTH;
	malformed(b, 48, "auth flag");
	/* any length but 48 and 56 */
	for (unsigned l = 0; l < 256; l++) {
		if (l == 48 || l == 56)
			continue;
		memset(b, 0, sizeof(b));
		memcpy(b, v3_req, 56);
		b[5] = (uint8_t)l;
		malformed(b, sizeof(b), "length");
		memset(b, 0, sizeof(b));
		memcpy(b, v3_acc, 48);
		b[5] = (uint8_t)l;
		malformed(b, sizeof(b), "length");
	}
	/* truncated */
	for (size_t len = 4; len < 56; len++)
		malformed(v3_req, len, "truncated");
	for (size_t len = 4; len < 48; len++)
		malformed(v3_acc, len, "truncated");
	/* an accept's length on a request's bytes is an accept with junk after it */
	memcpy(b, v3_req, 56);
	b[5] = 48;
	malformed(b, 56, "past the rpmafs header");
	/* non-zero bytes past the header */
	for (size_t at = 48; at < 64; at++) {
		memset(b, 0, sizeof(b));
		memcpy(b, v3_acc, 48);
		b[at] = 1;
		malformed(b, sizeof(b), "past the rpmafs header");
		if (at >= 56) {
			memset(b, 0, sizeof(b));
			memcpy(b, v3_req, 56);
			b[at] = 1;
			malformed(b, sizeof(b), "past the rpmafs header");
		}
	}
	/* the request's session as version 2's */
	memcpy(b, v3_req, 56);
	memset(b + 16, 0, 8);
	malformed(b, 56, "session 0");
	memcpy(b, v3_req, 56);
	b[6] &= (uint8_t)~RPMAFS_PDATA_F_SESSION;
	malformed(b, 56, "without the session flag");
	/* ranges */
	memcpy(b, v3_req, 56);
	memset(b + 8, 0, 4);
	malformed(b, 56, "max_message");
	memcpy(b, v3_acc, 48);
	memcpy(b + 12, "\x00\x00\x01\x00", 4);
	malformed(b, 48, "credits");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(v1_round_trip),
		cmocka_unit_test(v2_round_trip),
		cmocka_unit_test(none_and_foreign),
		cmocka_unit_test(every_malformed_case),
		cmocka_unit_test(v3_parse),
		cmocka_unit_test(v3_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
