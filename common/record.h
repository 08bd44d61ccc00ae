/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record.h -- one received message encoded as one record, produced in
 * pieces of any size: rpma-recv's output formats, shared with the rpmafs
 * inbox so that `inbox_format = lines` is byte for byte rpma-recv's
 *
 *   raw    the payload as is (no boundaries between records)
 *   lines  one trailing '\n' of the payload dropped, then every '\' becomes
 *          "\\" and every '\n' becomes "\n" (backslash, letter n), then a
 *          '\n'; a 0-byte message is an empty line
 *   len    a 4-byte little-endian length, then the payload
 *
 * The encoder keeps its place, so a reader with a 1-byte buffer (bash's
 * read) costs O(1) per byte, not a rescan of the message.
 */
#ifndef RPMAFS_COMMON_RECORD_H
#define RPMAFS_COMMON_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rpmafs_record_format {
	RPMAFS_RECORD_RAW,
	RPMAFS_RECORD_LINES,
	RPMAFS_RECORD_LEN,
};

/* Longest message a record can hold (len's header is 32 bits). */
#define RPMAFS_RECORD_MSG_MAX UINT32_MAX

struct rpmafs_record {
	enum rpmafs_record_format format;
	const uint8_t *msg;
	size_t len;  /* payload bytes to encode (lines: without the dropped '\n') */
	size_t size; /* the whole record's encoded size */
	size_t pos;  /* encoded bytes taken so far */
	size_t in;   /* payload bytes consumed so far */
	int owed;    /* lines: the second byte of an escape still to give, or -1 */
	uint8_t hdr[4];
};

/*
 * rpmafs_record_start -- begin the record of the len bytes at msg (which
 * must stay in place until the record is taken whole); len must not exceed
 * RPMAFS_RECORD_MSG_MAX
 */
void rpmafs_record_start(
	struct rpmafs_record *r, enum rpmafs_record_format format, const void *msg, size_t len);

/* rpmafs_record_left -- encoded bytes not yet taken */
static inline size_t rpmafs_record_left(const struct rpmafs_record *r)
{
	return r->size - r->pos;
}

/*
 * rpmafs_record_take -- copy the next at most cap encoded bytes to out;
 * returns how many (0 once the record is taken whole)
 */
size_t rpmafs_record_take(struct rpmafs_record *r, void *out, size_t cap);

#endif /* RPMAFS_COMMON_RECORD_H */
