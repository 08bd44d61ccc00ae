// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_peer.c -- rpma_peer_new() and rpma_peer_delete()
 */
#include <errno.h>
#include <string.h>

#include "unit.h"

#define NOT_TOUCHED ((struct rpma_peer *)0x1234)

static void test_new_rejects_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = NOT_TOUCHED;
	assert_int_equal(rpma_peer_new(NULL, &peer), RPMA_E_INVAL);
	assert_int_equal(rpma_peer_new(fake_ibv_context(), NULL), RPMA_E_INVAL);
	assert_ptr_equal(peer, NOT_TOUCHED);
	assert_int_equal(fake_calls(FAKE_IBV_ALLOC_PD), 0);
}

static void test_new_and_delete(void **state)
{
	(void)state;
	struct rpma_peer *peer = NULL;
	assert_int_equal(rpma_peer_new(fake_ibv_context(), &peer), 0);
	assert_non_null(peer);
	assert_int_equal(fake_live(FAKE_PD), 1);

	assert_int_equal(rpma_peer_delete(&peer), 0);
	assert_null(peer);
	assert_int_equal(fake_live(FAKE_PD), 0);

	/* deleting nothing is fine */
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_delete_rejects_null(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_delete(NULL), RPMA_E_INVAL);
}

static void expect_new_fails(int err, int expected)
{
	struct rpma_peer *peer = NOT_TOUCHED;
	fake_fail(FAKE_IBV_ALLOC_PD, 1, err);
	assert_int_equal(rpma_peer_new(fake_ibv_context(), &peer), expected);
	assert_ptr_equal(peer, NOT_TOUCHED);
	unit_assert_clean();
}

static void test_alloc_pd_enomem_is_nomem(void **state)
{
	(void)state;
	expect_new_fails(ENOMEM, RPMA_E_NOMEM);
	assert_true(log_has("ibv_alloc_pd()", strerror(ENOMEM), NULL));
}

static void test_alloc_pd_other_errno_is_provider(void **state)
{
	(void)state;
	expect_new_fails(EPERM, RPMA_E_PROVIDER);
	assert_true(log_has("ibv_alloc_pd()", strerror(EPERM), NULL));
}

static void test_alloc_pd_without_errno_is_unknown(void **state)
{
	(void)state;
	expect_new_fails(0, RPMA_E_UNKNOWN);
	assert_true(log_has("ibv_alloc_pd() failed without an errno", NULL));
}

static int new_peer(void *arg)
{
	return rpma_peer_new(fake_ibv_context(), arg);
}

static void delete_peer(void *arg)
{
	assert_int_equal(rpma_peer_delete(arg), 0);
}

static void test_out_of_memory_releases_the_pd(void **state)
{
	(void)state;
	struct rpma_peer *peer = NULL;
	struct alloc_sweep sweep = {.op = new_peer, .undo = delete_peer};
	assert_int_equal(unit_alloc_sweep(&sweep, &peer), 1);
	assert_null(peer);
}

static void test_failed_dealloc_keeps_the_peer_for_a_retry(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_peer *kept = peer;

	fake_fail(FAKE_IBV_DEALLOC_PD, 1, EIO);
	assert_int_equal(rpma_peer_delete(&peer), RPMA_E_PROVIDER);
	assert_ptr_equal(peer, kept);
	assert_true(log_has("ibv_dealloc_pd()", strerror(EIO), NULL));
	assert_int_equal(fake_live(FAKE_PD), 1);

	assert_int_equal(rpma_peer_delete(&peer), 0);
	assert_null(peer);
}

static void test_delete_while_memory_is_registered_fails(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	char buf[64];
	struct rpma_mr_local *mr;
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_SEND, &mr), 0);

	/* the provider says EBUSY: the peer stays usable */
	assert_int_equal(rpma_peer_delete(&peer), RPMA_E_PROVIDER);
	assert_non_null(peer);
	assert_true(log_has("ibv_dealloc_pd()", strerror(EBUSY), NULL));

	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_new_rejects_bad_arguments),
		rpma_unit_test(test_new_and_delete),
		rpma_unit_test(test_delete_rejects_null),
		rpma_unit_test(test_alloc_pd_enomem_is_nomem),
		rpma_unit_test(test_alloc_pd_other_errno_is_provider),
		rpma_unit_test(test_alloc_pd_without_errno_is_unknown),
		rpma_unit_test(test_out_of_memory_releases_the_pd),
		rpma_unit_test(test_failed_dealloc_keeps_the_peer_for_a_retry),
		rpma_unit_test(test_delete_while_memory_is_registered_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
