// SPDX-License-Identifier: BSD-3-Clause
/* test_size.c -- unit tests of common/size.c: sizes and decimal numbers from text */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "size.h"

#define KIB 1024ull
#define MIB (1024ull * 1024)
#define GIB (1024ull * 1024 * 1024)

static void size_ok(const char *s, uint64_t want)
{
	const char *why = NULL;
	uint64_t v = 12345;

	if (rpmafs_parse_size(s, &v, &why) != 0)
		fail_msg("\"%s\" rejected: %s", s, why);
	if (v != want)
		fail_msg("\"%s\" gave %llu, want %llu", s, (unsigned long long)v,
			(unsigned long long)want);
}

/* s is refused, *out is left alone, and why contains want_why */
static void size_bad(const char *s, const char *want_why)
{
	const char *why = NULL;
	uint64_t v = 12345;

	if (rpmafs_parse_size(s, &v, &why) == 0)
		fail_msg("\"%s\" accepted as %llu", s, (unsigned long long)v);
	assert_int_equal(v, 12345);
	assert_non_null(why);
	if (!strstr(why, want_why))
		fail_msg("\"%s\": why is \"%s\", want \"%s\"", s, why, want_why);
}

static void decimal_ok(const char *s, uint64_t want)
{
	const char *why = NULL;
	uint64_t v = 12345;

	if (rpmafs_parse_decimal(s, &v, &why) != 0)
		fail_msg("\"%s\" rejected: %s", s, why);
	assert_int_equal(v, want);
}

static void decimal_bad(const char *s, const char *want_why)
{
	const char *why = NULL;
	uint64_t v = 12345;

	if (rpmafs_parse_decimal(s, &v, &why) == 0)
		fail_msg("\"%s\" accepted as %llu", s, (unsigned long long)v);
	assert_int_equal(v, 12345);
	assert_non_null(why);
	if (!strstr(why, want_why))
		fail_msg("\"%s\": why is \"%s\", want \"%s\"", s, why, want_why);
}

static void test_size_plain(void **state)
{
	(void)state;
	size_ok("0", 0);
	size_ok("1", 1);
	size_ok("64", 64);
	size_ok("1048576", MIB);
	size_ok("0064", 64); /* decimal, never octal */
	size_ok("18446744073709551615", UINT64_MAX);
}

static void test_size_suffixes(void **state)
{
	(void)state;
	size_ok("4K", 4 * KIB);
	size_ok("4k", 4 * KIB);
	size_ok("4KiB", 4 * KIB);
	size_ok("4kib", 4 * KIB);
	size_ok("4KIB", 4 * KIB);
	size_ok("1M", MIB);
	size_ok("1m", MIB);
	size_ok("1MiB", MIB);
	size_ok("1G", GIB);
	size_ok("1GiB", GIB);
	size_ok("16G", 16 * GIB);
	size_ok("0K", 0);
	size_ok("1536K", 1536 * KIB);
	/* the largest that fits */
	size_ok("17179869183G", 17179869183ull * GIB);
	size_ok("18014398509481983K", 18014398509481983ull * KIB);
}

static void test_size_errors(void **state)
{
	(void)state;
	size_bad("", "empty");
	size_bad("-1", "negative");
	size_bad("+1", "sign");
	size_bad("K", "not a whole decimal number");
	size_bad("4KB", "unknown suffix");
	size_bad("4kb", "unknown suffix");
	size_bad("1MB", "unknown suffix");
	size_bad("4Ki", "unknown suffix");
	size_bad("4KiBx", "unknown suffix");
	size_bad("4B", "unknown suffix");
	size_bad("1T", "unknown suffix");
	size_bad("12abc", "unknown suffix");
	size_bad("0x10", "unknown suffix");
	size_bad("1.5M", "fraction");
	size_bad("1,5M", "fraction");
	size_bad(" 4K", "blanks");
	size_bad("4K ", "blanks");
	size_bad("4 K", "blanks");
	size_bad("18446744073709551616", "too large");
	size_bad("99999999999999999999999", "too large");
	size_bad("17179869184G", "too large");
	size_bad("18014398509481984K", "too large");
}

static void test_size_null(void **state)
{
	const char *why = NULL;
	uint64_t v = 7;

	(void)state;
	assert_int_equal(rpmafs_parse_size(NULL, &v, &why), -1);
	assert_non_null(why);
	assert_int_equal(rpmafs_parse_size("4K", NULL, NULL), -1);
	assert_int_equal(rpmafs_parse_size("4KB", &v, NULL), -1); /* why may be NULL */
	assert_int_equal(v, 7);
}

static void test_decimal(void **state)
{
	(void)state;
	decimal_ok("0", 0);
	decimal_ok("7204", 7204);
	decimal_ok("010", 10); /* decimal, never octal */
	decimal_ok("18446744073709551615", UINT64_MAX);
	decimal_bad("18446744073709551616", "too large");
	decimal_bad("", "empty");
	decimal_bad("-1", "negative");
	decimal_bad("-0", "negative");
	decimal_bad("+5", "sign");
	decimal_bad(" 5", "blanks");
	decimal_bad("5 ", "blanks");
	decimal_bad("0x1c", "hexadecimal");
	decimal_bad("1e3", "whole number");
	decimal_bad("1.0", "whole number");
	decimal_bad("12ms", "characters after");
	decimal_bad("4K", "characters after"); /* sizes are not numbers */
	decimal_bad("abc", "not a whole decimal number");
	assert_int_equal(rpmafs_parse_decimal(NULL, NULL, NULL), -1);
}

static void test_format(void **state)
{
	char buf[RPMAFS_SIZE_STR_MAX];
	char tiny[4];

	(void)state;
	assert_string_equal(rpmafs_format_size(0, buf, sizeof(buf)), "0");
	assert_string_equal(rpmafs_format_size(1, buf, sizeof(buf)), "1");
	assert_string_equal(rpmafs_format_size(1000, buf, sizeof(buf)), "1000");
	assert_string_equal(rpmafs_format_size(1536, buf, sizeof(buf)), "1536");
	assert_string_equal(rpmafs_format_size(4096, buf, sizeof(buf)), "4KiB");
	assert_string_equal(rpmafs_format_size(MIB, buf, sizeof(buf)), "1MiB");
	assert_string_equal(rpmafs_format_size(MIB + 1, buf, sizeof(buf)), "1048577");
	assert_string_equal(rpmafs_format_size(1536 * KIB, buf, sizeof(buf)), "1536KiB");
	assert_string_equal(rpmafs_format_size(3 * GIB, buf, sizeof(buf)), "3GiB");
	assert_string_equal(
		rpmafs_format_size(UINT64_MAX, buf, sizeof(buf)), "18446744073709551615");
	assert_string_equal(
		rpmafs_format_size(UINT64_MAX - 1023, buf, sizeof(buf)), "18014398509481983KiB");
	assert_string_equal(rpmafs_format_size(MIB, tiny, sizeof(tiny)), "1Mi");
}

/* Whatever format writes, parse reads back to the same number. */
static void test_round_trip(void **state)
{
	static const uint64_t values[] = {0, 1, 64, 1023, 1024, 1025, 4096, MIB - 1, MIB, MIB + 1,
		7 * GIB, GIB * 1024, UINT64_MAX, UINT64_MAX - 1023};
	char buf[RPMAFS_SIZE_STR_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint64_t back = 0;

		rpmafs_format_size(values[i], buf, sizeof(buf));
		assert_int_equal(rpmafs_parse_size(buf, &back, NULL), 0);
		assert_int_equal(back, values[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_plain),
		cmocka_unit_test(test_size_suffixes),
		cmocka_unit_test(test_size_errors),
		cmocka_unit_test(test_size_null),
		cmocka_unit_test(test_decimal),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
