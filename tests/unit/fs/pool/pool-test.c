// SPDX-License-Identifier: BSD-3-Clause
/* pool-test.c -- the shared request-buffer pool */

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(new_rejects_bad_arguments),
		cmocka_unit_test(slots_are_page_rounded_and_disjoint),
		cmocka_unit_test(empty_pool_says_eagain),
		cmocka_unit_test(waiter_wakes_on_put),
		cmocka_unit_test(close_wakes_waiters_with_eshutdown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
