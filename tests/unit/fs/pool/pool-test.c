// SPDX-License-Identifier: BSD-3-Clause
/* pool-test.c -- the shared request-buffer pool */

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/pool.h"

static void new_rejects_bad_arguments(void **state)
{
	struct pool *pool = NULL;

	(void)state;
	assert_int_equal(pool_new(0, 4096, &pool), -EINVAL);
	assert_int_equal(pool_new(4, 0, &pool), -EINVAL);
	assert_int_equal(pool_new(4, 4096, NULL), -EINVAL);
	assert_int_equal(pool_new(2, SIZE_MAX / 2, &pool), -EOVERFLOW);
	assert_null(pool);
}

static void slots_are_page_rounded_and_disjoint(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct pool *pool;
	unsigned a, b;

	(void)state;
	assert_int_equal(pool_new(3, 100, &pool), 0);
	assert_int_equal(pool_slot_size(pool), page);
	assert_int_equal(pool_bytes(pool), 3 * page);
	assert_int_equal(pool_nslots(pool), 3);
	assert_int_equal(pool_get(pool, false, &a), 0);
	assert_int_equal(pool_get(pool, false, &b), 0);
	assert_int_not_equal(a, b);
	assert_true(a < 3 && b < 3);
	/* each slot is writable all through and maps back to itself */
	char *pa = pool_slot_ptr(pool, a);
	pa[0] = 1;
	pa[page - 1] = 2;
	assert_int_equal(pool_slot_of(pool, pa), a);
	assert_int_equal(pool_slot_of(pool, pa + page - 1), a);
	assert_int_equal(pool_slot_of(pool, (char *)pool_base(pool) + 3 * page), POOL_NO_SLOT);
	assert_int_equal(pool_slot_of(pool, &page), POOL_NO_SLOT);
	pool_put(pool, a);
	pool_put(pool, b);
	pool_delete(&pool);
	assert_null(pool);
}

static void empty_pool_says_eagain(void **state)
{
	struct pool *pool;
	unsigned s[2], extra;

	(void)state;
	assert_int_equal(pool_new(2, 4096, &pool), 0);
	assert_int_equal(pool_get(pool, false, &s[0]), 0);
	assert_int_equal(pool_get(pool, false, &s[1]), 0);
	assert_int_equal(pool_free_count(pool), 0);
	assert_int_equal(pool_get(pool, false, &extra), -EAGAIN);
	pool_put(pool, s[1]);
	assert_int_equal(pool_free_count(pool), 1);
	/* the buffer put back last comes out first: it is still warm */
	assert_int_equal(pool_get(pool, false, &extra), 0);
	assert_int_equal(extra, s[1]);
	pool_put(pool, s[0]);
	pool_put(pool, extra);
	pool_delete(&pool);
}

struct waiter {
	struct pool *pool;
	int ret;
	unsigned slot;
};

static void *wait_for_slot(void *arg)
{
	struct waiter *w = arg;

	w->ret = pool_get(w->pool, true, &w->slot);
	return NULL;
}

static void waiter_wakes_on_put(void **state)
{
	struct pool *pool;
	struct waiter w;
	pthread_t t;
	unsigned only;

	(void)state;
	assert_int_equal(pool_new(1, 4096, &pool), 0);
	assert_int_equal(pool_get(pool, false, &only), 0);
	w = (struct waiter){.pool = pool, .ret = 1};
	assert_int_equal(pthread_create(&t, NULL, wait_for_slot, &w), 0);
	usleep(20000);
	assert_int_equal(w.ret, 1); /* still waiting: back-pressure */
	pool_put(pool, only);
	pthread_join(t, NULL);
	assert_int_equal(w.ret, 0);
	assert_int_equal(w.slot, only);
	pool_put(pool, w.slot);
	pool_delete(&pool);
}

static void close_wakes_waiters_with_eshutdown(void **state)
{
	struct pool *pool;
	struct waiter w;
	pthread_t t;
	unsigned only;

	(void)state;
	assert_int_equal(pool_new(1, 4096, &pool), 0);
	assert_int_equal(pool_get(pool, false, &only), 0);
	w = (struct waiter){.pool = pool, .ret = 1};
	assert_int_equal(pthread_create(&t, NULL, wait_for_slot, &w), 0);
	usleep(20000);
	pool_close(pool);
	pthread_join(t, NULL);
	assert_int_equal(w.ret, -ESHUTDOWN);
	/* buffers in flight still come home after close */
	pool_put(pool, only);
	assert_int_equal(pool_free_count(pool), 1);
	assert_int_equal(pool_get(pool, false, &only), -ESHUTDOWN);
	pool_delete(&pool);
}

/* the small slots follow the big buffers in the one mapping, one slot-number space */
static void small_slots_follow_the_big_buffers(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct pool *pool;
	unsigned s, t;

	(void)state;
	assert_int_equal(pool_new_small(0, 4096, 4, 4096, &pool), -EINVAL);
	assert_int_equal(pool_new_small(2, 4096, 4, 0, &pool), -EINVAL);
	assert_int_equal(pool_new_small(2, 100, 3, 1000, &pool), 0);
	assert_int_equal(pool_nslots(pool), 2);
	assert_int_equal(pool_nsmall(pool), 3);
	assert_int_equal(pool_small_size(pool), 1024); /* rounded up to 64 */
	assert_int_equal(pool_small_free_count(pool), 3);
	/*
	 * 2 pages and 3 slots of 1088 (1024 and POOL_SMALL_ROOM, rounded up to
	 * 64), rounded up to the page: one region, one registration
	 */
	assert_int_equal(pool_bytes(pool), (2 * page + 3 * 1088 + page - 1) / page * page);
	assert_int_equal(pool_copy_small(pool, "abc", 3, &s), 0);
	assert_true(pool_is_small(pool, s));
	assert_true(s >= 2 && s < 5);
	char *ps = pool_slot_ptr(pool, s);
	assert_true(ps >= (char *)pool_base(pool) + 2 * page);
	/* a full payload has its tag's room after it, in the slot */
	assert_true(ps + 1024 + POOL_SMALL_ROOM <= (char *)pool_base(pool) + pool_bytes(pool));
	assert_int_equal(pool_slot_of(pool, ps), s);
	assert_int_equal(pool_slot_of(pool, ps + 1024 + POOL_SMALL_ROOM - 1), s);
	assert_int_equal(pool_slot_of(pool, ps + 1088), s + 1 < 5 ? s + 1 : POOL_NO_SLOT);
	assert_int_equal(
		pool_slot_of(pool, (char *)pool_base(pool) + 2 * page + 3 * 1088), POOL_NO_SLOT);
	/* the payload limit is still 1024 */
	{
		char big[1025] = {0};
		unsigned u;

		assert_int_equal(pool_copy_small(pool, big, 1025, &u), -EMSGSIZE);
		assert_int_equal(pool_copy_small(pool, big, 1024, &u), 0);
		assert_int_equal((char *)pool_slot_ptr(pool, u) - (char *)pool_slot_ptr(pool, 2) ==
					 (ptrdiff_t)(u - 2) * 1088,
			1);
		pool_put(pool, u);
	}
	assert_int_equal(pool_get(pool, false, &t), 0);
	assert_false(pool_is_small(pool, t));
	assert_int_equal(pool_slot_of(pool, pool_slot_ptr(pool, t)), t);
	pool_put(pool, s);
	pool_put(pool, t);
	assert_int_equal(pool_small_free_count(pool), 3);
	assert_int_equal(pool_free_count(pool), 2);
	pool_delete(&pool);
}

/* the copy path: the payload lands in the slot; too large is EMSGSIZE, none free EAGAIN */
static void copy_small_copies_and_runs_out(void **state)
{
	char payload[4096], big[4097];
	struct pool *pool;
	unsigned s[4], extra;

	(void)state;
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (char)(i * 7);
	memset(big, 'x', sizeof(big));
	assert_int_equal(pool_new_small(2, 8192, 4, POOL_SMALL_SIZE, &pool), 0);
	assert_int_equal(pool_copy_small(pool, big, sizeof(big), &extra), -EMSGSIZE);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(
			pool_copy_small(pool, payload, i ? 64 : sizeof(payload), &s[i]), 0);
		assert_memory_equal(pool_slot_ptr(pool, s[i]), payload, i ? 64 : sizeof(payload));
	}
	/* every small slot taken: EAGAIN, and the big buffers are untouched */
	assert_int_equal(pool_small_free_count(pool), 0);
	assert_int_equal(pool_copy_small(pool, payload, 64, &extra), -EAGAIN);
	assert_int_equal(pool_free_count(pool), 2);
	/* one comes back: it is taken again (the last put back first) */
	pool_put(pool, s[2]);
	assert_int_equal(pool_small_free_count(pool), 1);
	assert_int_equal(pool_free_count(pool), 2);
	assert_int_equal(pool_copy_small(pool, "hello", 5, &extra), 0);
	assert_int_equal(extra, s[2]);
	assert_memory_equal(pool_slot_ptr(pool, extra), "hello", 5);
	pool_put(pool, extra);
	for (int i = 0; i < 4; i++)
		if (i != 2)
			pool_put(pool, s[i]);
	assert_int_equal(pool_small_free_count(pool), 4);
	/* after close: ESHUTDOWN, as pool_get */
	pool_close(pool);
	assert_int_equal(pool_copy_small(pool, payload, 64, &extra), -ESHUTDOWN);
	pool_delete(&pool);
}

/* a pool without small slots copies nothing: every write stays zero-copy */
static void no_small_slots_no_copy(void **state)
{
	struct pool *pool;
	unsigned s;

	(void)state;
	assert_int_equal(pool_new(2, 4096, &pool), 0);
	assert_int_equal(pool_nsmall(pool), 0);
	assert_int_equal(pool_copy_small(pool, "a", 1, &s), -EMSGSIZE);
	pool_delete(&pool);
}

/* a waiter for a big buffer is not woken by a small slot coming back */
static void small_put_leaves_big_waiters(void **state)
{
	struct pool *pool;
	unsigned big, small;

	(void)state;
	assert_int_equal(pool_new_small(1, 4096, 1, 64, &pool), 0);
	assert_int_equal(pool_get(pool, false, &big), 0);
	assert_int_equal(pool_copy_small(pool, "z", 1, &small), 0);
	pool_put(pool, small);
	assert_int_equal(pool_free_count(pool), 0);
	assert_int_equal(pool_get(pool, false, &small), -EAGAIN);
	pool_put(pool, big);
	pool_delete(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(new_rejects_bad_arguments),
		cmocka_unit_test(slots_are_page_rounded_and_disjoint),
		cmocka_unit_test(empty_pool_says_eagain),
		cmocka_unit_test(waiter_wakes_on_put),
		cmocka_unit_test(close_wakes_waiters_with_eshutdown),
		cmocka_unit_test(small_slots_follow_the_big_buffers),
		cmocka_unit_test(copy_small_copies_and_runs_out),
		cmocka_unit_test(no_small_slots_no_copy),
		cmocka_unit_test(small_put_leaves_big_waiters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
