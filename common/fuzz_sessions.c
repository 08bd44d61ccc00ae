// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_sessions.c -- libFuzzer target for the duplicate table's blob
 * (sessions.h), which rpma-recv reads back from its state file
 *
 * The first byte is a mode: bit 0 set, the last 8 bytes of the rest are
 * replaced by the right checksum first (else nearly every input would
 * stop there); the rest is the blob, in a heap buffer of exactly its
 * length. Besides what ASan and UBSan catch, the target aborts when:
 *  - a refused blob changed the table (it must stay as it was);
 *  - an accepted blob does not encode back to exactly the same bytes
 *    (the table holds up to 4096 sessions, more than any input here);
 *  - after marks and lookups driven by the same bytes the table breaks
 *    a promise: a number just marked is not seen, the count passes
 *    max_sessions, or its own blob does not decode.
 *
 *	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 *	ninja -C build-fuzz common/fuzz_sessions
 *	build-fuzz/common/fuzz_sessions -dict=common/fuzz_sessions.dict CORPUS_DIR
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "sessions.h"

#define CHECK(cond)                                                                               \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "fuzz_sessions: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                  \
		}                                                                                 \
	} while (0)

static uint64_t fnv1a64(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint8_t *blob_of(const struct rpmafs_sessions *s, size_t *len)
{
	size_t size = rpmafs_sessions_encoded_size(s);
	uint8_t *b = malloc(size);

	CHECK(b != NULL);
	CHECK(rpmafs_sessions_encode(s, b, size) == size);
	*len = size;
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpmafs_sessions_limits lim = {RPMAFS_SESSIONS_MAX_DEFAULT, 1000};
	struct rpmafs_sessions *s, *t;
	uint8_t *copy, *before, *after;
	size_t len, blen, alen;
	int ret;

	if (size < 1)
		return 0;
	len = size - 1;
	copy = malloc(len ? len : 1);
	CHECK(copy != NULL);
	memcpy(copy, data + 1, len);
	if ((data[0] & 1) && len >= 8)
		put_le64(copy + len - 8, fnv1a64(copy, len - 8));

	CHECK(rpmafs_sessions_new(&lim, &s) == 0);
	rpmafs_sessions_mark(s, 42, 7, 0); /* something to keep on a refusal */
	before = blob_of(s, &blen);
	ret = rpmafs_sessions_decode(s, len ? copy : NULL, len);
	if (ret) {
		CHECK(ret == -22 /* EINVAL */ || ret == -12 /* ENOMEM */);
		after = blob_of(s, &alen);
		CHECK(alen == blen && memcmp(after, before, blen) == 0);
		free(after);
	} else {
		after = blob_of(s, &alen);
		CHECK(alen == len && memcmp(after, copy, len) == 0);
		free(after);
	}
	free(before);

	/* the same bytes as marks and lookups, with time moving on */
	for (size_t i = 0; i + 4 <= len; i += 4) {
		uint64_t id = 1 + (copy[i] & 15); /* few sessions: windows get busy */
		uint32_t n = get_le32(copy + i) >> 4;
		uint64_t now = i * 37;

		if (copy[i + 1] & 1) {
			rpmafs_sessions_mark(s, id, n, now);
			CHECK(rpmafs_sessions_seen(s, id, n, now));
		} else {
			(void)rpmafs_sessions_seen(s, id, n, now);
		}
		CHECK(rpmafs_sessions_count(s) <= lim.max_sessions);
	}
	before = blob_of(s, &blen);
	CHECK(rpmafs_sessions_new(&lim, &t) == 0);
	CHECK(rpmafs_sessions_decode(t, before, blen) == 0);
	after = blob_of(t, &alen);
	CHECK(alen == blen && memcmp(after, before, blen) == 0);
	free(after);
	free(before);
	rpmafs_sessions_delete(&t);
	rpmafs_sessions_delete(&s);
	free(copy);
	return 0;
}
