// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_conn_cfg.c -- the connection configuration object: defaults, every getter and setter
 *
 * (How a configuration shapes the CQs and the QP is tested with the requests: conn_req, ep.)
 */
#include <limits.h>

#include "unit.h"

#define NOT_TOUCHED ((struct rpma_conn_cfg *)0x1234)

static void test_new_rejects_null(void **state)
{
	(void)state;
	assert_int_equal(rpma_conn_cfg_new(NULL), RPMA_E_INVAL);
}

static void test_new_has_librpma_defaults(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_non_null(cfg);

	int timeout = 0;
	uint32_t size = 0;
	bool shared = true;
	assert_int_equal(rpma_conn_cfg_get_timeout(cfg, &timeout), 0);
	assert_int_equal(timeout, 1000);
	assert_int_equal(rpma_conn_cfg_get_cq_size(cfg, &size), 0);
	assert_int_equal(size, 10);
	assert_int_equal(rpma_conn_cfg_get_rcq_size(cfg, &size), 0);
	assert_int_equal(size, 0);
	assert_int_equal(rpma_conn_cfg_get_sq_size(cfg, &size), 0);
	assert_int_equal(size, 10);
	assert_int_equal(rpma_conn_cfg_get_rq_size(cfg, &size), 0);
	assert_int_equal(size, 10);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	assert_false(shared);

	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_null(cfg);
}

static void test_delete(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_delete(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0); /* NULL object: nothing to do */
}

static int new_cfg(void *arg)
{
	return rpma_conn_cfg_new(arg);
}

static void delete_cfg(void *arg)
{
	assert_int_equal(rpma_conn_cfg_delete(arg), 0);
}

static void test_out_of_memory(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = NOT_TOUCHED;
	struct alloc_sweep sweep = {.op = new_cfg, .undo = delete_cfg};
	assert_int_equal(unit_alloc_sweep(&sweep, &cfg), 1);
}

static void test_timeout(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	int timeout = -7;

	assert_int_equal(rpma_conn_cfg_set_timeout(NULL, 10), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_set_timeout(cfg, -1), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_set_timeout(cfg, INT_MIN), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_timeout(NULL, &timeout), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_timeout(cfg, NULL), RPMA_E_INVAL);
	assert_int_equal(timeout, -7);

	const int values[] = {0, 1, 250, INT_MAX};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		assert_int_equal(rpma_conn_cfg_set_timeout(cfg, values[i]), 0);
		assert_int_equal(rpma_conn_cfg_get_timeout(cfg, &timeout), 0);
		assert_int_equal(timeout, values[i]);
	}
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
}

typedef int (*set_size_fn)(struct rpma_conn_cfg *, uint32_t);
typedef int (*get_size_fn)(const struct rpma_conn_cfg *, uint32_t *);

static void check_size(set_size_fn set, get_size_fn get)
{
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
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
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
}

static void test_cq_size(void **state)
{
	(void)state;
	check_size(rpma_conn_cfg_set_cq_size, rpma_conn_cfg_get_cq_size);
}

static void test_rcq_size(void **state)
{
	(void)state;
	check_size(rpma_conn_cfg_set_rcq_size, rpma_conn_cfg_get_rcq_size);
}

static void test_sq_size(void **state)
{
	(void)state;
	check_size(rpma_conn_cfg_set_sq_size, rpma_conn_cfg_get_sq_size);
}

static void test_rq_size(void **state)
{
	(void)state;
	check_size(rpma_conn_cfg_set_rq_size, rpma_conn_cfg_get_rq_size);
}

static void test_sizes_are_independent(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(1, 2, 3, 4, true);
	uint32_t size;
	assert_int_equal(rpma_conn_cfg_get_cq_size(cfg, &size), 0);
	assert_int_equal(size, 1);
	assert_int_equal(rpma_conn_cfg_get_rcq_size(cfg, &size), 0);
	assert_int_equal(size, 2);
	assert_int_equal(rpma_conn_cfg_get_sq_size(cfg, &size), 0);
	assert_int_equal(size, 3);
	assert_int_equal(rpma_conn_cfg_get_rq_size(cfg, &size), 0);
	assert_int_equal(size, 4);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
}

static void test_compl_channel(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	bool shared = true;

	assert_int_equal(rpma_conn_cfg_set_compl_channel(NULL, true), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(NULL, &shared), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, NULL), RPMA_E_INVAL);

	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	assert_true(shared);
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, false), 0);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	assert_false(shared);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
}

/* rpma_conn_cfg_set_srq(3) / _get_srq(3): default NULL; set: RPMA_E_INVAL - cfg is NULL; get:
 * RPMA_E_INVAL - cfg or srq_ptr is NULL, *srq_ptr not set on failure */
static void test_srq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	struct rpma_srq *const marker = (struct rpma_srq *)0x5a5a;
	struct rpma_srq *srq = marker;

	assert_int_equal(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	assert_null(srq);

	srq = marker;
	assert_int_equal(rpma_conn_cfg_set_srq(NULL, marker), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_srq(NULL, &srq), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_srq(cfg, NULL), RPMA_E_INVAL);
	assert_ptr_equal(srq, marker);

	/* the pointer is kept as given (the SRQ is not looked into here) and can be cleared */
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, marker), 0);
	srq = NULL;
	assert_int_equal(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	assert_ptr_equal(srq, marker);
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, NULL), 0);
	assert_int_equal(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	assert_null(srq);

	/* and a new configuration does not inherit it */
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, marker), 0);
	struct rpma_conn_cfg *fresh = NULL;
	assert_int_equal(rpma_conn_cfg_new(&fresh), 0);
	assert_int_equal(rpma_conn_cfg_get_srq(fresh, &srq), 0);
	assert_null(srq);
	assert_int_equal(rpma_conn_cfg_delete(&fresh), 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_new_rejects_null),
		rpma_unit_test(test_new_has_librpma_defaults),
		rpma_unit_test(test_delete),
		rpma_unit_test(test_out_of_memory),
		rpma_unit_test(test_timeout),
		rpma_unit_test(test_cq_size),
		rpma_unit_test(test_rcq_size),
		rpma_unit_test(test_sq_size),
		rpma_unit_test(test_rq_size),
		rpma_unit_test(test_sizes_are_independent),
		rpma_unit_test(test_compl_channel),
		rpma_unit_test(test_srq),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
