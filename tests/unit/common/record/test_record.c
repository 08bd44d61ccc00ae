// SPDX-License-Identifier: BSD-3-Clause
/* test_record.c -- records taken whole and in pieces of every size */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "record.h"

/* take msg's record in pieces of at most piece bytes; returns its length */
static size_t take_all(enum rpmafs_record_format f, const char *msg, size_t len, size_t piece,
	uint8_t *out, size_t cap)
{
	struct rpmafs_record r;
	size_t n = 0, got;

	rpmafs_record_start(&r, f, msg, len);
	assert_true(r.size <= cap);
	while ((got = rpmafs_record_take(&r, out + n, piece)) > 0) {
		assert_true(got <= piece);
		n += got;
		assert_int_equal(rpmafs_record_left(&r), r.size - n);
	}
	assert_int_equal(n, r.size);
	return n;
}

/* every piece size from 1 to the whole gives the same bytes: want */
static void check(
	enum rpmafs_record_format f, const char *msg, size_t len, const char *want, size_t wlen)
{
	uint8_t out[256];

	for (size_t piece = 1; piece <= wlen + 1; piece++) {
		size_t n = take_all(f, msg, len, piece, out, sizeof(out));

		assert_int_equal(n, wlen);
		assert_memory_equal(out, want, wlen);
	}
}

static void test_lines(void **state)
{
	(void)state;
	check(RPMAFS_RECORD_LINES, "hello", 5, "hello\n", 6);
	check(RPMAFS_RECORD_LINES, "hello\n", 6, "hello\n", 6); /* one '\n' dropped */
	check(RPMAFS_RECORD_LINES, "a\n\n", 3, "a\\n\n", 4);	/* only one */
	check(RPMAFS_RECORD_LINES, "", 0, "\n", 1);		/* a 0-byte message */
	check(RPMAFS_RECORD_LINES, "\n", 1, "\n", 1);
	check(RPMAFS_RECORD_LINES, "a\\b\nc", 5, "a\\\\b\\nc\n", 8);
	check(RPMAFS_RECORD_LINES, "\\", 1, "\\\\\n", 3);
	check(RPMAFS_RECORD_LINES, "x\0y", 3, "x\0y\n", 4); /* NUL passes */
}

static void test_len(void **state)
{
	(void)state;
	check(RPMAFS_RECORD_LEN, "hi\n", 3, "\3\0\0\0hi\n", 7);
	check(RPMAFS_RECORD_LEN, "", 0, "\0\0\0\0", 4);
}

static void test_len_header_is_little_endian(void **state)
{
	static uint8_t big[0x10203];
	struct rpmafs_record r;
	uint8_t hdr[4];

	(void)state;
	rpmafs_record_start(&r, RPMAFS_RECORD_LEN, big, sizeof(big));
	assert_int_equal(r.size, sizeof(big) + 4);
	assert_int_equal(rpmafs_record_take(&r, hdr, 4), 4);
	assert_int_equal(hdr[0], 0x03);
	assert_int_equal(hdr[1], 0x02);
	assert_int_equal(hdr[2], 0x01);
	assert_int_equal(hdr[3], 0x00);
}

static void test_raw(void **state)
{
	(void)state;
	check(RPMAFS_RECORD_RAW, "a\nb\n", 4, "a\nb\n", 4);
	check(RPMAFS_RECORD_RAW, "", 0, "", 0);
}

static void test_take_after_end(void **state)
{
	struct rpmafs_record r;
	uint8_t out[8];

	(void)state;
	rpmafs_record_start(&r, RPMAFS_RECORD_LINES, "ab", 2);
	assert_int_equal(rpmafs_record_take(&r, out, sizeof(out)), 3);
	assert_int_equal(rpmafs_record_take(&r, out, sizeof(out)), 0);
	assert_int_equal(rpmafs_record_left(&r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_len),
		cmocka_unit_test(test_len_header_is_little_endian),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_take_after_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
