// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_mr.c -- rpma_mr_reg(), rpma_mr_dereg(), rpma_mr_get_ptr(), rpma_mr_get_size()
 *
 * (Posting work requests with registrations is tested with the connection: tests/unit/rpma/conn.)
 */
#include <errno.h>
#include <string.h>

#include "unit.h"

#define NOT_TOUCHED ((struct rpma_mr_local *)0x1234)

static char Buf[4096];

static void test_reg_rejects_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_mr_local *mr = NOT_TOUCHED;

	assert_int_equal(
		rpma_mr_reg(NULL, Buf, sizeof(Buf), RPMA_MR_USAGE_SEND, &mr), RPMA_E_INVAL);
	assert_int_equal(
		rpma_mr_reg(peer, NULL, sizeof(Buf), RPMA_MR_USAGE_SEND, &mr), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_reg(peer, Buf, 0, RPMA_MR_USAGE_SEND, &mr), RPMA_E_INVAL);
	assert_int_equal(
		rpma_mr_reg(peer, Buf, sizeof(Buf), RPMA_MR_USAGE_SEND, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_reg(peer, Buf, sizeof(Buf), 0, &mr), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_reg(peer, Buf, sizeof(Buf), 1 << 8, &mr), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_reg(peer, Buf, sizeof(Buf), RPMA_MR_USAGE_SEND | (1 << 8), &mr),
		RPMA_E_INVAL);
	assert_int_equal(rpma_mr_reg(peer, Buf, sizeof(Buf), -1, &mr), RPMA_E_INVAL);

	assert_ptr_equal(mr, NOT_TOUCHED);
	assert_int_equal(fake_calls(FAKE_IBV_REG_MR), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static int access_for(struct rpma_peer *peer, int usage)
{
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_reg(peer, Buf, sizeof(Buf), usage, &mr), 0);
	int access = fake_last_reg_mr_access();
	assert_int_equal(rpma_mr_dereg(&mr), 0);
	return access;
}

static void test_usage_values_keep_librpma_values(void **state)
{
	(void)state;
	assert_int_equal(RPMA_MR_USAGE_READ_SRC, 1);
	assert_int_equal(RPMA_MR_USAGE_READ_DST, 2);
	assert_int_equal(RPMA_MR_USAGE_WRITE_SRC, 4);
	assert_int_equal(RPMA_MR_USAGE_WRITE_DST, 8);
	assert_int_equal(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, 16);
	assert_int_equal(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, 32);
	assert_int_equal(RPMA_MR_USAGE_SEND, 64);
	assert_int_equal(RPMA_MR_USAGE_RECV, 128);
}

static void test_usage_maps_to_access_like_librpma(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();

	assert_int_equal(access_for(peer, RPMA_MR_USAGE_SEND), 0);
	assert_int_equal(access_for(peer, RPMA_MR_USAGE_RECV), IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(access_for(peer, RPMA_MR_USAGE_READ_SRC), IBV_ACCESS_REMOTE_READ);
	assert_int_equal(access_for(peer, RPMA_MR_USAGE_READ_DST), IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(access_for(peer, RPMA_MR_USAGE_WRITE_SRC), IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(access_for(peer, RPMA_MR_USAGE_WRITE_DST),
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(
		access_for(peer, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY), IBV_ACCESS_REMOTE_READ);
	assert_int_equal(
		access_for(peer, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT), IBV_ACCESS_REMOTE_READ);
	assert_int_equal(
		access_for(peer, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV), IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(access_for(peer, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST),
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);

	/* iWARP answers a READ with a WRITE into the destination */
	fake_set_transport(IBV_TRANSPORT_IWARP);
	assert_int_equal(access_for(peer, RPMA_MR_USAGE_READ_DST),
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_reg_get_and_dereg(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_reg(peer, Buf + 16, 100, RPMA_MR_USAGE_RECV, &mr), 0);
	assert_int_equal(fake_live(FAKE_MR), 1);

	void *ptr = NULL;
	size_t size = 0;
	assert_int_equal(rpma_mr_get_ptr(mr, &ptr), 0);
	assert_ptr_equal(ptr, Buf + 16);
	assert_int_equal(rpma_mr_get_size(mr, &size), 0);
	assert_int_equal(size, 100);

	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_null(mr);
	assert_int_equal(fake_live(FAKE_MR), 0);
	assert_int_equal(rpma_mr_dereg(&mr), 0); /* NULL: nothing to do */
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_getters_reject_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_reg(peer, Buf, sizeof(Buf), RPMA_MR_USAGE_SEND, &mr), 0);

	void *ptr = (void *)0x1;
	size_t size = 7;
	assert_int_equal(rpma_mr_get_ptr(NULL, &ptr), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_get_ptr(mr, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_get_size(NULL, &size), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_get_size(mr, NULL), RPMA_E_INVAL);
	assert_ptr_equal(ptr, (void *)0x1);
	assert_int_equal(size, 7);
	assert_int_equal(rpma_mr_dereg(NULL), RPMA_E_INVAL);

	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void expect_reg_fails(struct rpma_peer *peer, int err)
{
	struct rpma_mr_local *mr = NOT_TOUCHED;
	fake_fail(FAKE_IBV_REG_MR, 1, err);
	assert_int_equal(
		rpma_mr_reg(peer, Buf, sizeof(Buf), RPMA_MR_USAGE_SEND, &mr), RPMA_E_PROVIDER);
	assert_ptr_equal(mr, NOT_TOUCHED);
	assert_int_equal(fake_live(FAKE_MR), 0);
}

static void test_reg_failure_explains_memlock(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();

	expect_reg_fails(peer, ENOMEM);
	assert_true(log_has("ibv_reg_mr(", "length=4096", "RLIMIT_MEMLOCK", "soft limit",
		strerror(ENOMEM), NULL));

	log_clear();
	expect_reg_fails(peer, EPERM);
	assert_true(log_has("RLIMIT_MEMLOCK", strerror(EPERM), NULL));

	/* other errors are not about the limit */
	log_clear();
	expect_reg_fails(peer, EINVAL);
	assert_true(log_has("ibv_reg_mr(", strerror(EINVAL), NULL));
	assert_false(log_has("RLIMIT_MEMLOCK", NULL));

	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static int reg(void *arg)
{
	struct rpma_mr_local **mr = arg;
	struct rpma_peer **peer = (struct rpma_peer **)(mr + 1);
	return rpma_mr_reg(*peer, Buf, sizeof(Buf), RPMA_MR_USAGE_RECV, mr);
}

static void dereg(void *arg)
{
	assert_int_equal(rpma_mr_dereg(arg), 0);
}

static void test_out_of_memory_deregisters_nothing_left(void **state)
{
	(void)state;
	struct {
		struct rpma_mr_local *mr;
		struct rpma_peer *peer;
	} arg = {NULL, fx_peer()};
	struct alloc_sweep sweep = {.op = reg, .undo = dereg};
	/* one allocation point; its failure leaves no registration behind */
	assert_int_equal(unit_alloc_sweep(&sweep, &arg), 1);
	assert_int_equal(fake_calls(FAKE_IBV_REG_MR), 1);
	assert_int_equal(rpma_peer_delete(&arg.peer), 0);
}

static void test_failed_dereg_keeps_the_registration(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_reg(peer, Buf, sizeof(Buf), RPMA_MR_USAGE_SEND, &mr), 0);
	struct rpma_mr_local *kept = mr;

	fake_fail(FAKE_IBV_DEREG_MR, 1, EBUSY);
	assert_int_equal(rpma_mr_dereg(&mr), RPMA_E_PROVIDER);
	assert_ptr_equal(mr, kept);
	assert_true(log_has("ibv_dereg_mr()", strerror(EBUSY), NULL));

	size_t size = 0;
	assert_int_equal(rpma_mr_get_size(mr, &size), 0); /* still a valid object */
	assert_int_equal(size, sizeof(Buf));

	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_null(mr);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_reg_rejects_bad_arguments),
		rpma_unit_test(test_usage_values_keep_librpma_values),
		rpma_unit_test(test_usage_maps_to_access_like_librpma),
		rpma_unit_test(test_reg_get_and_dereg),
		rpma_unit_test(test_getters_reject_bad_arguments),
		rpma_unit_test(test_reg_failure_explains_memlock),
		rpma_unit_test(test_out_of_memory_deregisters_nothing_left),
		rpma_unit_test(test_failed_dereg_keeps_the_registration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
