// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_sessions.c -- the duplicate table: the window of one session (in
 * and out of order, gaps, the 2^30 wrap, too old), its bounds (eviction at
 * max_sessions, expiry after ttl_ms) and the persisted blob (round trip,
 * truncation at every length, garbage)
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sessions.h"

#define MASK ((1u << 30) - 1)
#define S1 0x1111111111111111ull
#define S2 0x2222222222222222ull
#define S3 0x3333333333333333ull
#define S4 0x4444444444444444ull

static struct rpmafs_sessions *table(unsigned max, uint64_t ttl)
{
	struct rpmafs_sessions_limits lim = {max, ttl};
	struct rpmafs_sessions *s;

	assert_int_equal(rpmafs_sessions_new(&lim, &s), 0);
	assert_non_null(s);
	return s;
}

static bool seen(struct rpmafs_sessions *s, uint64_t id, uint32_t n)
{
	return rpmafs_sessions_seen(s, id, n, 1000);
}

static void mark(struct rpmafs_sessions *s, uint64_t id, uint32_t n)
{
	rpmafs_sessions_mark(s, id, n, 1000);
}

static void limits(void **state)
{
	struct rpmafs_sessions *s = (void *)1;

	(void)state;
	assert_int_equal(rpmafs_sessions_new(&(struct rpmafs_sessions_limits){0, 1}, &s), -EINVAL);
	assert_null(s);
	assert_int_equal(rpmafs_sessions_new(&(struct rpmafs_sessions_limits){1, 0}, &s), -EINVAL);
	assert_int_equal(
		rpmafs_sessions_new(
			&(struct rpmafs_sessions_limits){RPMAFS_SESSIONS_MAX_LIMIT + 1, 1}, &s),
		-EINVAL);
	assert_int_equal(rpmafs_sessions_new(NULL, &s), 0);
	assert_int_equal(rpmafs_sessions_count(s), 0);
	/* session 0 is no session: never seen, never remembered */
	rpmafs_sessions_mark(s, 0, 1, 0);
	assert_false(rpmafs_sessions_seen(s, 0, 1, 0));
	assert_int_equal(rpmafs_sessions_count(s), 0);
	/* a connect creates nothing: only a mark does */
	assert_false(seen(s, S1, 1));
	assert_int_equal(rpmafs_sessions_count(s), 0);
	rpmafs_sessions_delete(&s);
	assert_null(s);
	rpmafs_sessions_delete(&s); /* NULL is fine */
}

/* in order: everything marked is seen, the next one is not */
static void in_order(void **state)
{
	struct rpmafs_sessions *s = table(16, 1000000);

	(void)state;
	for (uint32_t n = 1; n <= 500; n++) {
		assert_false(seen(s, S1, n));
		mark(s, S1, n);
		assert_true(seen(s, S1, n));
	}
	for (uint32_t n = 1; n <= 500; n++)
		assert_true(seen(s, S1, n));
	assert_false(seen(s, S1, 501));
	assert_false(seen(s, S1, 500 + (1u << 29) - 1)); /* far ahead is still ahead */
	assert_true(seen(s, S1, 500 + (1u << 29)));	 /* half way round: behind, too old */
	assert_false(seen(s, S2, 1)); /* another session knows nothing of these */
	/* marking again changes nothing */
	mark(s, S1, 500);
	mark(s, S1, 499);
	assert_false(seen(s, S1, 501));
	assert_int_equal(rpmafs_sessions_count(s), 1);
	rpmafs_sessions_delete(&s);
}

/* out of order within the window, with gaps that stay gaps */
static void out_of_order_and_gaps(void **state)
{
	struct rpmafs_sessions *s = table(16, 1000000);

	(void)state;
	mark(s, S1, 10);
	mark(s, S1, 5);
	mark(s, S1, 7);
	for (uint32_t n = 1; n <= 12; n++)
		assert_int_equal(seen(s, S1, n), n == 5 || n == 7 || n == 10);
	/* a gap (a message failed for its own fault) stays open as the window moves */
	mark(s, S1, 12);
	assert_false(seen(s, S1, 11));
	mark(s, S1, 11);
	assert_true(seen(s, S1, 11));
	assert_false(seen(s, S1, 6));
	/* ahead by exactly 63, 64, 65: the old highest moves to the window's edge, or past */
	mark(s, S1, 12 + 63);
	assert_true(seen(s, S1, 12));
	assert_false(seen(s, S1, 13));
	assert_true(seen(s, S1, 11)); /* behind 64: the last bit */
	mark(s, S1, 75 + 64);
	assert_true(seen(s, S1, 75)); /* behind 64 */
	assert_false(seen(s, S1, 76));
	assert_false(seen(s, S1, 138));
	mark(s, S1, 139 + 65);
	assert_true(seen(s, S1, 139)); /* behind 65: too old, treated as delivered */
	assert_false(seen(s, S1, 140));
	assert_false(seen(s, S1, 203));
	rpmafs_sessions_delete(&s);
}

/* too old to tell: more than the window behind is taken as delivered */
static void too_old(void **state)
{
	struct rpmafs_sessions *s = table(16, 1000000);

	(void)state;
	mark(s, S1, 100);
	assert_false(seen(s, S1, 100 - RPMAFS_SESSIONS_WINDOW)); /* the window's last bit */
	assert_true(seen(s, S1, 100 - RPMAFS_SESSIONS_WINDOW - 1));
	assert_true(seen(s, S1, 1));
	/* marking a too old one does nothing to the window */
	mark(s, S1, 2);
	assert_false(seen(s, S1, 99));
	assert_false(seen(s, S1, 101));
	rpmafs_sessions_delete(&s);
}

/* the numbers are 30 bits: the window works across 2^30 - 1 -> 0 */
static void wrap(void **state)
{
	struct rpmafs_sessions *s = table(16, 1000000);

	(void)state;
	mark(s, S1, MASK - 2);
	mark(s, S1, MASK);
	mark(s, S1, 0);
	mark(s, S1, 2);
	assert_true(seen(s, S1, MASK - 2));
	assert_false(seen(s, S1, MASK - 1));
	assert_true(seen(s, S1, MASK));
	assert_true(seen(s, S1, 0));
	assert_false(seen(s, S1, 1));
	assert_true(seen(s, S1, 2));
	assert_false(seen(s, S1, 3));
	mark(s, S1, MASK - 1); /* late, across the wrap */
	mark(s, S1, 1);
	for (uint32_t n = MASK - 2; n != 3; n = (n + 1) & MASK)
		assert_true(seen(s, S1, n));
	/* higher bits than 30 are ignored */
	assert_true(seen(s, S1, 2 | 1u << 30));
	assert_false(seen(s, S1, 3 | 1u << 31));
	/* 64 behind across the wrap is the window's edge, 65 too old */
	mark(s, S1, 62);
	assert_true(seen(s, S1, MASK - 1)); /* 62 - (2^30 - 2) = 64 behind: the last bit, marked */
	assert_true(seen(s, S1, MASK - 2)); /* 65 behind: too old, treated as delivered */
	assert_false(seen(s, S1, 3));	    /* 59 behind, never marked */
	assert_false(seen(s, S1, 61));
	rpmafs_sessions_delete(&s);
}

/* full: the least recently seen goes, counted; a lookup counts as seen */
static void eviction(void **state)
{
	struct rpmafs_sessions *s = table(3, 1000000);

	(void)state;
	rpmafs_sessions_mark(s, S1, 1, 10);
	rpmafs_sessions_mark(s, S2, 1, 20);
	rpmafs_sessions_mark(s, S3, 1, 30);
	assert_int_equal(rpmafs_sessions_count(s), 3);
	assert_true(rpmafs_sessions_seen(s, S1, 1, 40)); /* S1 is now the most recent */
	rpmafs_sessions_mark(s, S4, 1, 50);
	assert_int_equal(rpmafs_sessions_count(s), 3);
	assert_int_equal(rpmafs_sessions_evicted(s), 1);
	assert_false(rpmafs_sessions_seen(s, S2, 1, 60)); /* forgotten: at least once again */
	assert_true(rpmafs_sessions_seen(s, S1, 1, 60));
	assert_true(rpmafs_sessions_seen(s, S3, 1, 60));
	assert_true(rpmafs_sessions_seen(s, S4, 1, 60));
	/* a flood of new sessions: the table never grows past its bound */
	for (uint64_t id = 100; id < 1100; id++)
		rpmafs_sessions_mark(s, id, 7, 100 + id);
	assert_int_equal(rpmafs_sessions_count(s), 3);
	assert_int_equal(rpmafs_sessions_evicted(s), 1001);
	for (uint64_t id = 1097; id < 1100; id++)
		assert_true(rpmafs_sessions_seen(s, id, 7, 5000));
	assert_int_equal(rpmafs_sessions_expired(s), 0);
	rpmafs_sessions_delete(&s);
}

/* a session not seen for ttl_ms is dropped, counted; a clock gone back ages nothing */
static void expiry(void **state)
{
	struct rpmafs_sessions *s = table(8, 1000);

	(void)state;
	rpmafs_sessions_mark(s, S1, 5, 0);
	rpmafs_sessions_mark(s, S2, 5, 500);
	assert_true(rpmafs_sessions_seen(s, S1, 5, 999)); /* 999 ms: still there, seen again */
	assert_true(rpmafs_sessions_seen(s, S2, 5, 1499));
	assert_true(rpmafs_sessions_seen(s, S1, 5, 1998));
	assert_int_equal(rpmafs_sessions_expired(s), 0);
	/* S2 last seen at 1499: gone at 2499; S1 (1998) not yet */
	assert_false(rpmafs_sessions_seen(s, S2, 5, 2499));
	assert_int_equal(rpmafs_sessions_expired(s), 1);
	assert_int_equal(rpmafs_sessions_count(s), 1);
	assert_true(rpmafs_sessions_seen(s, S1, 5, 2499));
	/* expiry on mark too */
	rpmafs_sessions_mark(s, S3, 1, 3499);
	assert_int_equal(rpmafs_sessions_expired(s), 2);
	assert_int_equal(rpmafs_sessions_count(s), 1);
	assert_int_equal(rpmafs_sessions_evicted(s), 0);
	/* the clock went back: S3 is young, not old */
	assert_true(rpmafs_sessions_seen(s, S3, 1, 10));
	assert_int_equal(rpmafs_sessions_count(s), 1);
	rpmafs_sessions_delete(&s);
}

/* a few sessions with windows of every shape */
static struct rpmafs_sessions *sample(unsigned max)
{
	struct rpmafs_sessions *s = table(max, 1000000);

	rpmafs_sessions_mark(s, S1, 10, 100);
	rpmafs_sessions_mark(s, S1, 3, 100);
	rpmafs_sessions_mark(s, S2, MASK, 200);
	rpmafs_sessions_mark(s, S2, 1, 200);
	rpmafs_sessions_mark(s, S3, 1000, 300);
	for (uint32_t n = 900; n < 1000; n += 3)
		rpmafs_sessions_mark(s, S3, n, 300);
	return s;
}

static void same_answers(struct rpmafs_sessions *a, struct rpmafs_sessions *b)
{
	const uint64_t ids[] = {S1, S2, S3, S4};

	for (size_t k = 0; k < 4; k++)
		for (uint32_t n = 0; n < 1100; n++)
			assert_int_equal(rpmafs_sessions_seen(a, ids[k], n, 400),
				rpmafs_sessions_seen(b, ids[k], n, 400));
	for (uint32_t n = MASK - 70; n <= MASK; n++)
		assert_int_equal(
			rpmafs_sessions_seen(a, S2, n, 400), rpmafs_sessions_seen(b, S2, n, 400));
}

static uint8_t *encoded(struct rpmafs_sessions *s, size_t *len)
{
	size_t size = rpmafs_sessions_encoded_size(s);
	uint8_t *buf = malloc(size);

	assert_non_null(buf);
	assert_int_equal(rpmafs_sessions_encode(s, buf, size - 1), 0); /* too small */
	assert_int_equal(rpmafs_sessions_encode(s, buf, size), size);
	*len = size;
	return buf;
}

static void round_trip(void **state)
{
	struct rpmafs_sessions *s = sample(8), *t = table(8, 1000000), *u = table(2, 1000000);
	size_t len, len2;
	uint8_t *blob, *again;

	(void)state;
	rpmafs_sessions_mark(s, S4, 1, 350); /* evicts nothing: 4 of 8 */
	blob = encoded(s, &len);
	assert_int_equal(len, 32 + 4 * 32 + 8);
	assert_memory_equal(blob, "RPSS\x01\x00\x20\x00\x04\x00\x00\x00", 12);
	rpmafs_sessions_mark(t, S4, 99, 1); /* replaced by the decode */
	assert_int_equal(rpmafs_sessions_decode(t, blob, len), 0);
	assert_int_equal(rpmafs_sessions_count(t), 4);
	/* encoding what was decoded gives the same blob (order kept) */
	again = encoded(t, &len2);
	assert_int_equal(len2, len);
	assert_memory_equal(again, blob, len);
	free(again);
	same_answers(s, t);

	/* the order of last seen is kept: the least recent is evicted first */
	assert_int_equal(rpmafs_sessions_decode(u, blob, len), 0);
	assert_int_equal(rpmafs_sessions_count(u), 2); /* S4 and S3, the most recent */
	assert_int_equal(rpmafs_sessions_evicted(u), 2);
	assert_true(rpmafs_sessions_seen(u, S4, 1, 400));
	assert_true(rpmafs_sessions_seen(u, S3, 1000, 400));
	assert_false(rpmafs_sessions_seen(u, S1, 10, 400));

	/* the counters travel */
	rpmafs_sessions_delete(&u);
	u = table(1, 100);
	rpmafs_sessions_mark(u, S1, 1, 0);
	rpmafs_sessions_mark(u, S2, 1, 0);    /* evicted 1 */
	rpmafs_sessions_mark(u, S3, 1, 1000); /* expired 1 */
	free(blob);
	blob = encoded(u, &len);
	assert_int_equal(rpmafs_sessions_decode(t, blob, len), 0);
	assert_int_equal(rpmafs_sessions_count(t), 1);
	assert_int_equal(rpmafs_sessions_evicted(t), 1);
	assert_int_equal(rpmafs_sessions_expired(t), 1);

	/* an empty table */
	rpmafs_sessions_delete(&u);
	u = table(4, 100);
	free(blob);
	blob = encoded(u, &len);
	assert_int_equal(len, 40);
	assert_int_equal(rpmafs_sessions_decode(t, blob, len), 0);
	assert_int_equal(rpmafs_sessions_count(t), 0);
	assert_false(rpmafs_sessions_seen(t, S3, 1, 1000));
	free(blob);
	rpmafs_sessions_delete(&s);
	rpmafs_sessions_delete(&t);
	rpmafs_sessions_delete(&u);
}

/* the checksum, as sessions.h describes it: for blobs made wrong on purpose */
static void resum(uint8_t *blob, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len - 8; i++) {
		h ^= blob[i];
		h *= 0x100000001b3ull;
	}
	for (int i = 0; i < 8; i++)
		blob[len - 8 + i] = (uint8_t)(h >> (8 * i));
}

/* refused, and the table as it was */
static void refused(
	struct rpmafs_sessions *t, struct rpmafs_sessions *ref, const uint8_t *b, size_t len)
{
	assert_int_equal(rpmafs_sessions_decode(t, b, len), -EINVAL);
	assert_int_equal(rpmafs_sessions_count(t), rpmafs_sessions_count(ref));
}

static void truncated_and_garbage(void **state)
{
	struct rpmafs_sessions *s = sample(8), *t = sample(8);
	size_t len;
	uint8_t *blob = encoded(s, &len), *b = malloc(len + 64);

	(void)state;
	assert_non_null(b);
	assert_int_equal(rpmafs_sessions_decode(t, NULL, 0), -EINVAL);
	/* cut at every length */
	for (size_t l = 0; l < len; l++) {
		memcpy(b, blob, l);
		refused(t, s, b, l);
	}
	/* one more byte, or more, of anything */
	for (size_t extra = 1; extra <= 64; extra++) {
		memcpy(b, blob, len);
		memset(b + len, 0, extra);
		refused(t, s, b, len + extra);
	}
	/* every single bit flipped (the checksum) */
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(b, blob, len);
			b[i] ^= (uint8_t)(1u << bit);
			refused(t, s, b, len);
		}
	/* garbage of every length up to the blob's and more: never accepted */
	srand(24);
	for (size_t l = 0; l < len + 64; l++) {
		for (size_t i = 0; i < l; i++)
			b[i] = (uint8_t)rand();
		refused(t, s, b, l);
	}
	/* well summed but wrong inside */
	struct {
		size_t at;
		uint8_t value;
	} wrong[] = {
		{4, 2},		 /* version */
		{6, 16},	 /* entry size */
		{8, 4},		 /* count: one more than there are */
		{8, 2},		 /* one fewer */
		{12, 1},	 /* reserved */
		{32 + 20, 1},	 /* an entry's reserved word */
		{32 + 19, 0x40}, /* hi past 2^30 - 1 */
	};
	for (size_t k = 0; k < sizeof(wrong) / sizeof(wrong[0]); k++) {
		memcpy(b, blob, len);
		b[wrong[k].at] = wrong[k].value;
		resum(b, len);
		refused(t, s, b, len);
	}
	/* a session 0, and one session twice */
	memcpy(b, blob, len);
	memset(b + 32, 0, 8);
	resum(b, len);
	refused(t, s, b, len);
	memcpy(b, blob, len);
	memcpy(b + 64, b + 32, 8);
	resum(b, len);
	refused(t, s, b, len);
	/* twice, where the second is past what a small table keeps: still refused */
	struct rpmafs_sessions *small = table(1, 100);
	refused(small, small, b, len);
	rpmafs_sessions_delete(&small);
	/* the blob itself still decodes, and t answers as s */
	assert_int_equal(rpmafs_sessions_decode(t, blob, len), 0);
	same_answers(s, t);
	free(b);
	free(blob);
	rpmafs_sessions_delete(&s);
	rpmafs_sessions_delete(&t);
}

/* many sessions: the hash and the list stay right through growth and removal */
static void many(void **state)
{
	struct rpmafs_sessions *s = table(1000, 100000), *t = table(1000, 100000);
	size_t len;
	uint8_t *blob;

	(void)state;
	for (uint64_t id = 1; id <= 3000; id++)
		rpmafs_sessions_mark(s, id * 0x9e3779b97f4a7c15ull, (uint32_t)id, id);
	assert_int_equal(rpmafs_sessions_count(s), 1000);
	assert_int_equal(rpmafs_sessions_evicted(s), 2000);
	for (uint64_t id = 2001; id <= 3000; id++)
		assert_true(
			rpmafs_sessions_seen(s, id * 0x9e3779b97f4a7c15ull, (uint32_t)id, 3000));
	for (uint64_t id = 1; id <= 2000; id++)
		assert_false(
			rpmafs_sessions_seen(s, id * 0x9e3779b97f4a7c15ull, (uint32_t)id, 3000));
	blob = encoded(s, &len);
	assert_int_equal(rpmafs_sessions_decode(t, blob, len), 0);
	assert_int_equal(rpmafs_sessions_count(t), 1000);
	/* all seen at 3000: all expire together */
	assert_false(rpmafs_sessions_seen(t, 1, 1, 103000));
	assert_int_equal(rpmafs_sessions_count(t), 0);
	assert_int_equal(rpmafs_sessions_expired(t), 1000);
	free(blob);
	rpmafs_sessions_delete(&s);
	rpmafs_sessions_delete(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(limits),
		cmocka_unit_test(in_order),
		cmocka_unit_test(out_of_order_and_gaps),
		cmocka_unit_test(too_old),
		cmocka_unit_test(wrap),
		cmocka_unit_test(eviction),
		cmocka_unit_test(expiry),
		cmocka_unit_test(round_trip),
		cmocka_unit_test(truncated_and_garbage),
		cmocka_unit_test(many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
