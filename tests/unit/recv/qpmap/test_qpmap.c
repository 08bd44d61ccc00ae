// SPDX-License-Identifier: BSD-3-Clause
/* test_qpmap.c -- rpma-recv's queue pair number map against a plain array */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "qpmap.h"

#define KEYS 5000

static void empty(void **unused)
{
	struct recv_qpmap *map = NULL;

	(void)unused;
	assert_int_equal(recv_qpmap_new(&map), 0);
	assert_int_equal(recv_qpmap_count(map), 0);
	assert_null(recv_qpmap_get(map, 0));
	assert_null(recv_qpmap_get(map, 17));
	recv_qpmap_remove(map, 17); /* not there: nothing happens */
	assert_int_equal(recv_qpmap_count(map), 0);
	recv_qpmap_delete(&map);
	assert_null(map);
	recv_qpmap_delete(&map); /* NULL: a no-op */
}

static void put_replace_remove(void **unused)
{
	struct recv_qpmap *map = NULL;
	int a, b;

	(void)unused;
	assert_int_equal(recv_qpmap_new(&map), 0);
	assert_int_equal(recv_qpmap_put(map, 0, &a), 0); /* 0 is a queue pair number too */
	assert_int_equal(recv_qpmap_put(map, 0xffffff, &b), 0);
	assert_ptr_equal(recv_qpmap_get(map, 0), &a);
	assert_ptr_equal(recv_qpmap_get(map, 0xffffff), &b);
	assert_int_equal(recv_qpmap_put(map, 0, &b), 0);
	assert_ptr_equal(recv_qpmap_get(map, 0), &b);
	assert_int_equal(recv_qpmap_count(map), 2);
	recv_qpmap_remove(map, 0);
	assert_null(recv_qpmap_get(map, 0));
	assert_ptr_equal(recv_qpmap_get(map, 0xffffff), &b);
	assert_int_equal(recv_qpmap_count(map), 1);
	recv_qpmap_delete(&map);
}

/*
 * Thousands of consecutive and scattered numbers put and removed at random
 * (as connections come and go), checked against an array after every step:
 * growth and the backward shift of removal lose nothing.
 */
static void against_an_array(void **unused)
{
	static void *want[KEYS];
	static uint32_t key[KEYS];
	static int values[KEYS];
	struct recv_qpmap *map = NULL;
	size_t count = 0;

	(void)unused;
	srand(14);
	for (int i = 0; i < KEYS; i++)
		key[i] = i < KEYS / 2 ? 17 + (uint32_t)i : (uint32_t)rand() * 2654435761u;
	assert_int_equal(recv_qpmap_new(&map), 0);
	for (int step = 0; step < 100000; step++) {
		int i = rand() % KEYS;

		if (rand() % 3) {
			assert_int_equal(recv_qpmap_put(map, key[i], &values[i]), 0);
			count += want[i] == NULL;
			want[i] = &values[i];
		} else {
			recv_qpmap_remove(map, key[i]);
			count -= want[i] != NULL;
			want[i] = NULL;
		}
		assert_int_equal(recv_qpmap_count(map), count);
		if (step % 997 == 0)
			for (int k = 0; k < KEYS; k++)
				assert_ptr_equal(recv_qpmap_get(map, key[k]), want[k]);
	}
	for (int k = 0; k < KEYS; k++)
		assert_ptr_equal(recv_qpmap_get(map, key[k]), want[k]);
	recv_qpmap_delete(&map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty),
		cmocka_unit_test(put_replace_remove),
		cmocka_unit_test(against_an_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
