// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_srq_cfg.c -- the shared receive queue configuration: librpma 1.3's defaults, every
 * getter and setter with every row of their ERRORS
 *
 * (How a configuration shapes the SRQ and its receive CQ is tested in tests/unit/rpma/srq.)
 */
#include <limits.h>

#include "unit.h"

#define NOT_TOUCHED ((struct rpma_srq_cfg *)0x1234)

/* rpma_srq_cfg_new(3) ERRORS: RPMA_E_INVAL - cfg_ptr is NULL */
static void test_new_rejects_null(void **state)
{
	(void)state;
	assert_int_equal(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
}

/* rpma_srq_cfg_new(3): .rcq_size = 100, .rq_size = 100 */
static void test_new_has_librpma_defaults(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_new(&cfg), 0);
	assert_non_null(cfg);

	uint32_t size = 0;
	assert_int_equal(rpma_srq_cfg_get_rq_size(cfg, &size), 0);
	assert_int_equal(size, 100);
	size = 0;
	assert_int_equal(rpma_srq_cfg_get_rcq_size(cfg, &size), 0);
	assert_int_equal(size, 100);

	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
	assert_null(cfg);
}

/* changing one configuration does not change the defaults of the next one */
static void test_new_copies_the_defaults(void **state)
{
	(void)state;
	struct rpma_srq_cfg *first = NULL, *second = NULL;
	assert_int_equal(rpma_srq_cfg_new(&first), 0);
	assert_int_equal(rpma_srq_cfg_set_rq_size(first, 7), 0);
	assert_int_equal(rpma_srq_cfg_set_rcq_size(first, 0), 0);
	assert_int_equal(rpma_srq_cfg_new(&second), 0);

	uint32_t size = 0;
	assert_int_equal(rpma_srq_cfg_get_rq_size(second, &size), 0);
	assert_int_equal(size, 100);
	assert_int_equal(rpma_srq_cfg_get_rcq_size(second, &size), 0);
	assert_int_equal(size, 100);

	assert_int_equal(rpma_srq_cfg_delete(&first), 0);
	assert_int_equal(rpma_srq_cfg_delete(&second), 0);
}

/* rpma_srq_cfg_delete(3) ERRORS: RPMA_E_INVAL - cfg_ptr is NULL; a NULL object is a no-op */
static void test_delete(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_delete(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
	assert_null(cfg);
}

static int new_cfg(void *arg)
{
	return rpma_srq_cfg_new(arg);
}

static void delete_cfg(void *arg)
{
	assert_int_equal(rpma_srq_cfg_delete(arg), 0);
}

/* rpma_srq_cfg_new(3) ERRORS: RPMA_E_NOMEM - out of memory; *cfg_ptr is not set on failure */
static void test_out_of_memory(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = NOT_TOUCHED;
	struct alloc_sweep sweep = {.op = new_cfg, .undo = delete_cfg};
	assert_int_equal(unit_alloc_sweep(&sweep, &cfg), 1);
}

static void test_out_of_memory_leaves_the_pointer(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = NOT_TOUCHED;
	alloc_fail_nth(1);
	assert_int_equal(rpma_srq_cfg_new(&cfg), RPMA_E_NOMEM);
	alloc_fail_nth(0);
	assert_ptr_equal(cfg, NOT_TOUCHED);
}

typedef int (*set_size_fn)(struct rpma_srq_cfg *, uint32_t);
typedef int (*get_size_fn)(const struct rpma_srq_cfg *, uint32_t *);

/*
 * set: RPMA_E_INVAL - cfg is NULL; get: RPMA_E_INVAL - cfg or the size is NULL, and the size
 * is not set on failure; every uint32_t value is kept as given
 */
static void check_size(set_size_fn set, get_size_fn get)
{
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_new(&cfg), 0);
	uint32_t size = 77;

	assert_int_equal(set(NULL, 5), RPMA_E_INVAL);
	assert_int_equal(get(NULL, &size), RPMA_E_INVAL);
	assert_int_equal(get(cfg, NULL), RPMA_E_INVAL);
	assert_int_equal(size, 77);

	const uint32_t values[] = {0, 1, 4096, (uint32_t)INT_MAX + 1, UINT32_MAX};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		assert_int_equal(set(cfg, values[i]), 0);
		assert_int_equal(get(cfg, &size), 0);
		assert_int_equal(size, values[i]);
	}
	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
}

static void test_rq_size(void **state)
{
	(void)state;
	check_size(rpma_srq_cfg_set_rq_size, rpma_srq_cfg_get_rq_size);
}

static void test_rcq_size(void **state)
{
	(void)state;
	check_size(rpma_srq_cfg_set_rcq_size, rpma_srq_cfg_get_rcq_size);
}

static void test_sizes_are_independent(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_new(&cfg), 0);
	assert_int_equal(rpma_srq_cfg_set_rq_size(cfg, 3), 0);
	assert_int_equal(rpma_srq_cfg_set_rcq_size(cfg, 4), 0);
	uint32_t size = 0;
	assert_int_equal(rpma_srq_cfg_get_rq_size(cfg, &size), 0);
	assert_int_equal(size, 3);
	assert_int_equal(rpma_srq_cfg_get_rcq_size(cfg, &size), 0);
	assert_int_equal(size, 4);
	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_new_rejects_null),
		rpma_unit_test(test_new_has_librpma_defaults),
		rpma_unit_test(test_new_copies_the_defaults),
		rpma_unit_test(test_delete),
		rpma_unit_test(test_out_of_memory),
		rpma_unit_test(test_out_of_memory_leaves_the_pointer),
		rpma_unit_test(test_rq_size),
		rpma_unit_test(test_rcq_size),
		rpma_unit_test(test_sizes_are_independent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
