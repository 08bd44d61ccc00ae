// SPDX-License-Identifier: BSD-3-Clause
/* size.c -- strict parsing of byte sizes and decimal numbers */

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "size.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int fail(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -1;
}

/*
 * Why a string that does not start with a digit is not a number. Spelled
 * out because "-1" and " 4" are the mistakes people actually make.
 */
static const char *not_a_number(const char *s)
{
	if (*s == '\0')
		return "is empty";
	if (*s == '-')
		return "is negative";
	if (*s == '+')
		return "has a sign; write the number alone";
	if (*s == ' ' || *s == '\t')
		return "has blanks before the number";
	return "is not a whole decimal number";
}

/*
 * Read the leading run of digits of s into *out; *end points past them.
 * Returns -1 with *why set when there are none or they overflow.
 */
static int parse_digits(const char *s, uint64_t *out, const char **end, const char **why)
{
	uint64_t v = 0;

	if (!is_digit(*s))
		return fail(why, not_a_number(s));
	for (; is_digit(*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return fail(why, "is too large");
		v = v * 10 + d;
	}
	*out = v;
	*end = s;
	return 0;
}

int rpmafs_parse_decimal(const char *s, uint64_t *out, const char **why)
{
	const char *end;
	uint64_t v;

	if (!s || !out)
		return fail(why, "is missing");
	if (parse_digits(s, &v, &end, why))
		return -1;
	if (*end != '\0') {
		if (*end == ' ' || *end == '\t')
			return fail(why, "has blanks after the number");
		if ((*end == 'x' || *end == 'X') && end == s + 1 && s[0] == '0')
			return fail(why, "is not decimal (no hexadecimal here)");
		if (*end == '.' || *end == 'e' || *end == 'E')
			return fail(why, "is not a whole number");
		return fail(why, "has characters after the number");
	}
	*out = v;
	return 0;
}

struct size_suffix {
	const char *name;
	unsigned shift;
};

/* Binary units only: an admin who writes "4KB" is told, not guessed at. */
static const struct size_suffix suffixes[] = {
	{"", 0},
	{"K", 10},
	{"KiB", 10},
	{"M", 20},
	{"MiB", 20},
	{"G", 30},
	{"GiB", 30},
};

int rpmafs_parse_size(const char *s, uint64_t *out, const char **why)
{
	const char *end;
	uint64_t v;

	if (!s || !out)
		return fail(why, "is missing");
	if (parse_digits(s, &v, &end, why))
		return -1;
	if (*end == '.' || *end == ',')
		return fail(why, "has a fraction; sizes are whole numbers (e.g. 1536K, not 1.5M)");
	if (strpbrk(end, " \t"))
		return fail(why, "has blanks in it; write the suffix right after the number (4K)");

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		unsigned shift = suffixes[i].shift;

		if (strcasecmp(end, suffixes[i].name) != 0)
			continue;
		if (v > (UINT64_MAX >> shift))
			return fail(why, "is too large");
		*out = v << shift;
		return 0;
	}
	return fail(why, "has an unknown suffix");
}

char *rpmafs_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"GiB", "MiB", "KiB"};
	static const unsigned shifts[] = {30, 20, 10};

	if (!buf || len == 0)
		return buf;
	for (size_t i = 0; i < 3; i++) {
		uint64_t unit = (uint64_t)1 << shifts[i];

		if (bytes != 0 && bytes % unit == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(bytes >> shifts[i]),
				units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)bytes);
	return buf;
}
