// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_pdata.c -- libFuzzer target for the connection private data parser
 *
 * Every input is private data as the network hands it over: rpma-recv
 * parses a sender's connect request with rpmafs_pdata_parse(), rpmafs
 * parses the receiver's accept with it. The data comes in a buffer of
 * exactly its length (a copy, so that ASan sees a read past the end),
 * and besides what ASan and UBSan catch the target aborts when the
 * parser breaks a promise of pdata.h:
 *  - an accepted header has max_message 1 .. RPMAFS_PDATA_MAX_MESSAGE and
 *    credits 0 .. RPMAFS_PDATA_MAX_CREDITS, and it is the magic, version,
 *    length, the two fields, then nothing but zeros;
 *  - the result does not depend on bytes the caller did not pass
 *    (the same bytes with junk after them, parsed with the same length,
 *    give the same answer);
 *  - every refusal says why, and *pd is left alone unless the answer is OK;
 *  - encode(parse(x)) gives back x's first 16 bytes when x was accepted,
 *    and whatever encode() writes, parse() accepts with the same fields.
 *
 *	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 *	ninja -C build-fuzz common/fuzz_pdata
 *	build-fuzz/common/fuzz_pdata -dict=common/fuzz_pdata.dict CORPUS_DIR
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdata.h"

#define CHECK(cond)                                                                            \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "fuzz_pdata: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                               \
		}                                                                              \
	} while (0)

/* the RDMA CM carries at most 255 bytes of private data (a uint8_t length) */
#define PDATA_MAX 255

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int zeros(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/* field by field: the struct has padding */
static int same_pd(const struct rpmafs_pdata *a, const struct rpmafs_pdata *b)
{
	return a->max_message == b->max_message && a->credits == b->credits &&
		a->flags == b->flags;
}

static void check_ok(const uint8_t *p, size_t len, const struct rpmafs_pdata *pd)
{
	uint8_t again[RPMAFS_PDATA_LEN];

	CHECK(len >= RPMAFS_PDATA_LEN);
	CHECK(memcmp(p, RPMAFS_PDATA_MAGIC, 4) == 0);
	CHECK(p[4] == RPMAFS_PDATA_VERSION && p[5] == RPMAFS_PDATA_LEN);
	CHECK(zeros(p + RPMAFS_PDATA_LEN, len - RPMAFS_PDATA_LEN));
	CHECK(pd->max_message >= 1 && pd->max_message <= RPMAFS_PDATA_MAX_MESSAGE);
	CHECK(pd->credits <= RPMAFS_PDATA_MAX_CREDITS);
	CHECK(pd->max_message == le32(p + 8) && pd->credits == le32(p + 12));

	CHECK((pd->flags & ~RPMAFS_PDATA_KNOWN_FLAGS) == 0);
	CHECK(pd->flags == ((p[6] | p[7] << 8) & RPMAFS_PDATA_KNOWN_FLAGS));

	/* encode gives the same header back, unknown flags aside (ignored) */
	rpmafs_pdata_encode(pd, again);
	CHECK(memcmp(again, p, 6) == 0 && memcmp(again + 8, p + 8, 8) == 0);
	CHECK((again[6] | again[7] << 8) == pd->flags);
}

/* whatever encode() writes, from any field values, parses back as OK */
static void check_encode(const uint8_t *data, size_t size)
{
	struct rpmafs_pdata in, out = {0};
	uint8_t hdr[RPMAFS_PDATA_LEN];
	const char *why = NULL;

	if (size < 8)
		return;
	in.max_message = le32(data);
	in.credits = le32(data + 4);
	rpmafs_pdata_encode(&in, hdr);
	CHECK(rpmafs_pdata_parse(hdr, sizeof(hdr), &out, &why) == RPMAFS_PDATA_OK);
	CHECK(why && strcmp(why, "ok") == 0);
	if (in.max_message >= 1 && in.max_message <= RPMAFS_PDATA_MAX_MESSAGE)
		CHECK(out.max_message == in.max_message);
	else
		CHECK(out.max_message == (in.max_message ? RPMAFS_PDATA_MAX_MESSAGE : 1));
	CHECK(out.credits == (in.credits <= RPMAFS_PDATA_MAX_CREDITS ? in.credits :
		RPMAFS_PDATA_MAX_CREDITS));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t padded[PDATA_MAX + 64];
	const struct rpmafs_pdata sentinel = {0xdeadbeef, 0xfeedf00d, 0xbeef};
	struct rpmafs_pdata pd = sentinel, pd2 = sentinel;
	enum rpmafs_pdata_kind kind, kind2;
	const char *why = NULL, *why2 = NULL;
	uint8_t *copy;

	if (size > PDATA_MAX)
		size = PDATA_MAX;
	/* exactly size bytes on the heap: one byte too far is an ASan report */
	copy = malloc(size ? size : 1);
	CHECK(copy != NULL);
	memcpy(copy, data, size);

	kind = rpmafs_pdata_parse(size ? copy : NULL, size, &pd, &why);
	CHECK(why != NULL && why[0] != '\0');
	switch (kind) {
	case RPMAFS_PDATA_OK:
		CHECK(strcmp(why, "ok") == 0);
		check_ok(copy, size, &pd);
		break;
	case RPMAFS_PDATA_NONE:
		CHECK(zeros(copy, size));
		CHECK(same_pd(&pd, &sentinel));
		break;
	case RPMAFS_PDATA_FOREIGN:
		CHECK(size < 4 || memcmp(copy, RPMAFS_PDATA_MAGIC, 4) != 0);
		CHECK(!zeros(copy, size));
		CHECK(same_pd(&pd, &sentinel));
		break;
	case RPMAFS_PDATA_MALFORMED:
		CHECK(size >= 4 && memcmp(copy, RPMAFS_PDATA_MAGIC, 4) == 0);
		CHECK(strcmp(why, "ok") != 0);
		CHECK(same_pd(&pd, &sentinel));
		break;
	default:
		CHECK(!"an answer outside enum rpmafs_pdata_kind");
	}

	/* the same bytes followed by junk, with the same length: the same answer */
	memcpy(padded, data, size);
	memset(padded + size, 0xa5, sizeof(padded) - size);
	kind2 = rpmafs_pdata_parse(padded, size, &pd2, &why2);
	CHECK(kind2 == kind && why2 != NULL && strcmp(why, why2) == 0);
	CHECK(same_pd(&pd, &pd2));

	/* a NULL pd and a NULL why are allowed */
	CHECK(rpmafs_pdata_parse(size ? copy : NULL, size, NULL, NULL) == kind);

	check_encode(data, size);
	free(copy);
	return 0;
}
