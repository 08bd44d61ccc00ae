// SPDX-License-Identifier: BSD-3-Clause
/* record.c -- a message encoded as one raw, lines or len record, in pieces */

#include <string.h>

#include "record.h"

void rpmafs_record_start(
	struct rpmafs_record *r, enum rpmafs_record_format format, const void *msg, size_t len)
{
	const uint8_t *m = msg;

	memset(r, 0, sizeof(*r));
	r->format = format;
	r->msg = m;
	r->owed = -1;
	switch (format) {
	case RPMAFS_RECORD_RAW:
		r->len = len;
		r->size = len;
		break;
	case RPMAFS_RECORD_LINES:
		if (len > 0 && m[len - 1] == '\n')
			len--;
		r->len = len;
		r->size = len + 1; /* the closing '\n' */
		for (size_t i = 0; i < len; i++)
			r->size += m[i] == '\\' || m[i] == '\n';
		break;
	case RPMAFS_RECORD_LEN:
		r->len = len;
		r->size = sizeof(r->hdr) + len;
		r->hdr[0] = (uint8_t)len;
		r->hdr[1] = (uint8_t)(len >> 8);
		r->hdr[2] = (uint8_t)(len >> 16);
		r->hdr[3] = (uint8_t)(len >> 24);
		break;
	}
}

static size_t take_lines(struct rpmafs_record *r, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (n < cap && r->pos + n < r->size) {
		uint8_t c;

		if (r->owed >= 0) {
			out[n++] = (uint8_t)r->owed;
			r->owed = -1;
			continue;
		}
		if (r->in == r->len) {
			out[n++] = '\n';
			continue;
		}
		c = r->msg[r->in++];
		if (c == '\\' || c == '\n') {
			out[n++] = '\\';
			r->owed = c == '\n' ? 'n' : '\\';
		} else {
			out[n++] = c;
		}
	}
	return n;
}

size_t rpmafs_record_take(struct rpmafs_record *r, void *out, size_t cap)
{
	uint8_t *o = out;
	size_t left = rpmafs_record_left(r), n = 0;

	if (cap > left)
		cap = left;
	switch (r->format) {
	case RPMAFS_RECORD_RAW:
		memcpy(o, r->msg + r->pos, cap);
		n = cap;
		break;
	case RPMAFS_RECORD_LINES:
		n = take_lines(r, o, cap);
		break;
	case RPMAFS_RECORD_LEN:
		while (n < cap && r->pos + n < sizeof(r->hdr)) {
			o[n] = r->hdr[r->pos + n];
			n++;
		}
		if (n < cap) {
			size_t from = r->pos + n - sizeof(r->hdr);

			memcpy(o + n, r->msg + from, cap - n);
			n = cap;
		}
		break;
	}
	r->pos += n;
	return n;
}
