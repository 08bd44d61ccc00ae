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
 *    credits 0 .. RPMAFS_PDATA_MAX_CREDITS, and it is the magic, version
 *    1 with length 16 or version 2 with length 24, the fields, then
 *    nothing but zeros;
 *  - a session comes only from version 2: non-zero exactly when F_SESSION
 *    is set, and the 8 bytes at offset 16; version 1 gives session 0 and
 *    never F_SESSION;
 *  - version 3 (a key): a request (length 56) or an accept (48) with
 *    F_AUTH; pd->auth has the id, nonce and tag bytes where pdata.h puts
 *    them, F_AUTH/F_ENCRYPT stay in pd->flags; a request's session
 *    follows version 2's rules, an accept has none; versions 1 and 2
 *    leave pd->auth zero and never give F_AUTH or F_ENCRYPT;
 *  - the result does not depend on bytes the caller did not pass
 *    (the same bytes with junk after them, parsed with the same length,
 *    give the same answer);
 *  - every refusal says why, and *pd is left alone unless the answer is OK;
 *  - encode(parse(x)) gives back x's header when x was accepted (a
 *    version 2 header without a session comes back as version 1), and
 *    whatever encode() writes, parse() accepts with the same fields;
 *    encode writes 24 bytes exactly when it has a session, else 16 (a
 *    version 3 header is not encoded back: auth.c writes those).
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

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int zeros(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/* field by field: the struct has padding (pd->auth has none: bytes only) */
static int same_pd(const struct rpmafs_pdata *a, const struct rpmafs_pdata *b)
{
	return a->max_message == b->max_message && a->credits == b->credits &&
	       a->flags == b->flags && a->session == b->session &&
	       memcmp(&a->auth, &b->auth, sizeof(a->auth)) == 0;
}

/* version 3: the flags, the session and pd->auth */
static void check_v3(const uint8_t *p, const struct rpmafs_pdata *pd, unsigned wire_flags)
{
	const unsigned all = RPMAFS_PDATA_KNOWN_FLAGS | RPMAFS_PDATA_AUTH_FLAGS;
	static const uint8_t zero[16];

	CHECK(pd->auth.on);
	CHECK(wire_flags & RPMAFS_PDATA_F_AUTH);
	CHECK(pd->flags & RPMAFS_PDATA_F_AUTH);
	CHECK(pd->auth.encrypt == !!(wire_flags & RPMAFS_PDATA_F_ENCRYPT));
	if (p[5] == RPMAFS_PDATA_LEN_3_REQUEST) {
		CHECK(pd->auth.request);
		CHECK(pd->session == le64(p + 16));
		CHECK(!!(wire_flags & RPMAFS_PDATA_F_SESSION) == (pd->session != 0));
		CHECK(pd->flags == (wire_flags & all));
		CHECK(memcmp(pd->auth.id, p + 24, 8) == 0);
		CHECK(memcmp(pd->auth.nonce, p + 32, 16) == 0);
		CHECK(memcmp(pd->auth.tag, p + 48, 8) == 0 &&
			memcmp(pd->auth.tag + 8, zero, 8) == 0);
	} else {
		CHECK(p[5] == RPMAFS_PDATA_LEN_3_ACCEPT);
		CHECK(!pd->auth.request);
		CHECK(pd->session == 0);
		CHECK(pd->flags == (wire_flags & all & ~RPMAFS_PDATA_F_SESSION));
		CHECK(memcmp(pd->auth.id, zero, 8) == 0);
		CHECK(memcmp(pd->auth.nonce, p + 16, 16) == 0);
		CHECK(memcmp(pd->auth.tag, p + 32, 16) == 0);
	}
}

static void check_ok(const uint8_t *p, size_t len, const struct rpmafs_pdata *pd)
{
	uint8_t again[RPMAFS_PDATA_MAX_LEN];
	size_t hlen, elen;
	unsigned wire_flags;

	CHECK(len >= RPMAFS_PDATA_LEN);
	CHECK(memcmp(p, RPMAFS_PDATA_MAGIC, 4) == 0);
	CHECK((p[4] == RPMAFS_PDATA_VERSION && p[5] == RPMAFS_PDATA_LEN) ||
		(p[4] == RPMAFS_PDATA_VERSION_2 && p[5] == RPMAFS_PDATA_LEN_2) ||
		(p[4] == RPMAFS_PDATA_VERSION_3 &&
			(p[5] == RPMAFS_PDATA_LEN_3_REQUEST || p[5] == RPMAFS_PDATA_LEN_3_ACCEPT)));
	hlen = p[5];
	CHECK(len >= hlen);
	CHECK(zeros(p + hlen, len - hlen));
	CHECK(pd->max_message >= 1 && pd->max_message <= RPMAFS_PDATA_MAX_MESSAGE);
	CHECK(pd->credits <= RPMAFS_PDATA_MAX_CREDITS);
	CHECK(pd->max_message == le32(p + 8) && pd->credits == le32(p + 12));

	wire_flags = (unsigned)(p[6] | p[7] << 8);
	if (p[4] == RPMAFS_PDATA_VERSION_3) {
		check_v3(p, pd, wire_flags);
		return;
	}
	CHECK(!pd->auth.on && !pd->auth.request && !pd->auth.encrypt);
	CHECK(zeros(pd->auth.id, 8) && zeros(pd->auth.nonce, 16) && zeros(pd->auth.tag, 16));
	CHECK((pd->flags & ~RPMAFS_PDATA_KNOWN_FLAGS) == 0);
	if (hlen == RPMAFS_PDATA_LEN) {
		/* version 1: no session, the session bit ignored */
		CHECK(pd->session == 0);
		CHECK(pd->flags ==
			(wire_flags & RPMAFS_PDATA_KNOWN_FLAGS & ~RPMAFS_PDATA_F_SESSION));
	} else {
		CHECK(pd->session == le64(p + 16));
		CHECK(!!(wire_flags & RPMAFS_PDATA_F_SESSION) == (pd->session != 0));
		CHECK(pd->flags == (wire_flags & RPMAFS_PDATA_KNOWN_FLAGS));
	}

	/* encode gives the same header back, unknown flags aside (ignored) */
	elen = rpmafs_pdata_encode(pd, again);
	CHECK(elen == (pd->session ? RPMAFS_PDATA_LEN_2 : RPMAFS_PDATA_LEN));
	CHECK(memcmp(again, p, 4) == 0 && memcmp(again + 8, p + 8, 8) == 0);
	CHECK((again[6] | again[7] << 8) == pd->flags);
	if (pd->session)
		CHECK(memcmp(again + 4, p + 4, 2) == 0 && memcmp(again + 16, p + 16, 8) == 0);
	else
		CHECK(again[4] == RPMAFS_PDATA_VERSION && again[5] == RPMAFS_PDATA_LEN);
}

/* whatever encode() writes, from any field values, parses back as OK */
static void check_encode(const uint8_t *data, size_t size)
{
	struct rpmafs_pdata in = {0}, out = {0};
	uint8_t hdr[RPMAFS_PDATA_MAX_LEN + 8];
	const char *why = NULL;
	size_t len;

	if (size < 8)
		return;
	in.max_message = le32(data);
	in.credits = le32(data + 4);
	if (size >= 10)
		in.flags = (uint16_t)(data[8] | data[9] << 8);
	if (size >= 18)
		in.session = le64(data + 10);
	memset(hdr, 0xa5, sizeof(hdr));
	len = rpmafs_pdata_encode(&in, hdr);
	CHECK(len == (in.session ? RPMAFS_PDATA_LEN_2 : RPMAFS_PDATA_LEN));
	CHECK(hdr[len] == 0xa5); /* nothing written past what it says */
	CHECK(rpmafs_pdata_parse(hdr, len, &out, &why) == RPMAFS_PDATA_OK);
	CHECK(out.session == in.session);
	CHECK(out.flags == ((in.flags & RPMAFS_PDATA_KNOWN_FLAGS & ~RPMAFS_PDATA_F_SESSION) |
				   (in.session ? RPMAFS_PDATA_F_SESSION : 0)));
	CHECK(why && strcmp(why, "ok") == 0);
	if (in.max_message >= 1 && in.max_message <= RPMAFS_PDATA_MAX_MESSAGE)
		CHECK(out.max_message == in.max_message);
	else
		CHECK(out.max_message == (in.max_message ? RPMAFS_PDATA_MAX_MESSAGE : 1));
	CHECK(out.credits ==
		(in.credits <= RPMAFS_PDATA_MAX_CREDITS ? in.credits : RPMAFS_PDATA_MAX_CREDITS));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t padded[PDATA_MAX + 64];
	const struct rpmafs_pdata sentinel = {0xdeadbeef, 0xfeedf00d, 0xbeef, 0xfeedfacecafebeef,
		{true, true, true, {0xee}, {0xee}, {0xee}}};
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
