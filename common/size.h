/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * size.h -- strict parsing of byte sizes and decimal numbers from text
 *
 * Shared by the config loader and the tools so that "4K" means the same
 * thing everywhere. Both parsers take the whole string and nothing else:
 * no blanks around it, no sign, no base prefix (a leading 0 is still
 * decimal, never octal), no fraction, nothing after the number. On failure
 * they say why in a static string that completes a sentence about the
 * value, e.g. "\"4KB\" has an unknown suffix".
 */
#ifndef RPMAFS_SIZE_H
#define RPMAFS_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* What rpmafs_parse_size() accepts, for error messages and usage texts. */
#define RPMAFS_SIZE_SYNTAX                                                          \
	"a whole number of bytes, optionally followed by K, KiB, M, MiB, G or GiB " \
	"(powers of 1024; letters in any case), e.g. 64, 4K, 1MiB"

/* Room for any string rpmafs_format_size() writes, NUL included. */
#define RPMAFS_SIZE_STR_MAX 24

/*
 * rpmafs_parse_decimal -- parse s, a plain decimal number such as "7204",
 * into *out (0 .. UINT64_MAX). Returns 0, or -1 with *why set (when why is
 * not NULL) and *out untouched.
 */
int rpmafs_parse_decimal(const char *s, uint64_t *out, const char **why);

/*
 * rpmafs_parse_size -- parse s, a byte count with an optional binary suffix
 * ("64", "4K", "4KiB", "1m", "1GiB"), into *out. K, M and G are 1024,
 * 1024^2 and 1024^3; "KB", "MB" and the like are rejected rather than
 * guessed at. Returns 0, or -1 with *why set (when why is not NULL) and
 * *out untouched. The caller checks the range.
 */
int rpmafs_parse_size(const char *s, uint64_t *out, const char **why);

/*
 * rpmafs_format_size -- write bytes to buf in the shortest exact form
 * rpmafs_parse_size() reads back: "1MiB", "4KiB", "3GiB", or the plain
 * number ("1536", "0") when no suffix divides it. Returns buf; the text is
 * truncated to len - 1 characters when buf is too small
 * (RPMAFS_SIZE_STR_MAX is always enough).
 */
char *rpmafs_format_size(uint64_t bytes, char *buf, size_t len);

#endif /* RPMAFS_SIZE_H */
