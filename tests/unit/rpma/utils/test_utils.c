// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_utils.c -- rpma_utils_get_ibv_context() and rpma_utils_conn_event_2str()
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include "unit.h"

#define NOT_TOUCHED ((struct ibv_context *)0x1234)

static void test_event_names(void **state)
{
	(void)state;
	assert_string_equal(
		rpma_utils_conn_event_2str(RPMA_CONN_UNDEFINED), "Undefined connection event");
	assert_string_equal(
		rpma_utils_conn_event_2str(RPMA_CONN_ESTABLISHED), "Connection established");
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_CLOSED), "Connection closed");
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_LOST), "Connection lost");
	assert_string_equal(rpma_utils_conn_event_2str(RPMA_CONN_REJECTED), "Connection rejected");
	assert_string_equal(
		rpma_utils_conn_event_2str(RPMA_CONN_UNREACHABLE), "Connection unreachable");
	assert_string_equal(rpma_utils_conn_event_2str((enum rpma_conn_event) - 2),
		"Unsupported connection event");
	assert_string_equal(rpma_utils_conn_event_2str((enum rpma_conn_event)5),
		"Unsupported connection event");
}

static void test_event_values_keep_librpma_values(void **state)
{
	(void)state;
	assert_int_equal(RPMA_CONN_UNDEFINED, -1);
	assert_int_equal(RPMA_CONN_ESTABLISHED, 0);
	assert_int_equal(RPMA_CONN_CLOSED, 1);
	assert_int_equal(RPMA_CONN_LOST, 2);
	assert_int_equal(RPMA_CONN_REJECTED, 3);
	assert_int_equal(RPMA_CONN_UNREACHABLE, 4);
	assert_int_equal(RPMA_UTIL_IBV_CONTEXT_LOCAL, 0);
	assert_int_equal(RPMA_UTIL_IBV_CONTEXT_REMOTE, 1);
	assert_int_equal(RPMA_DEFAULT_TIMEOUT_MS, 1000);
}

static void test_get_ibv_context_rejects_bad_arguments(void **state)
{
	(void)state;
	struct ibv_context *ctx = NOT_TOUCHED;
	assert_int_equal(
		rpma_utils_get_ibv_context(NULL, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), RPMA_E_INVAL);
	assert_int_equal(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, NULL),
		RPMA_E_INVAL);
	assert_int_equal(
		rpma_utils_get_ibv_context(UNIT_ADDR, (enum rpma_util_ibv_context_type)2, &ctx),
		RPMA_E_INVAL);
	assert_int_equal(
		rpma_utils_get_ibv_context(UNIT_ADDR, (enum rpma_util_ibv_context_type) - 1, &ctx),
		RPMA_E_INVAL);
	assert_ptr_equal(ctx, NOT_TOUCHED);
	assert_int_equal(fake_calls(FAKE_RDMA_GETADDRINFO), 0);
}

static void test_local_binds_the_address(void **state)
{
	(void)state;
	struct ibv_context *ctx = NULL;
	assert_int_equal(
		rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	assert_ptr_equal(ctx, fake_ibv_context());

	struct rdma_addrinfo hints = fake_last_hints();
	assert_true(hints.ai_flags & RAI_PASSIVE);
	assert_int_equal(hints.ai_qp_type, IBV_QPT_RC);
	assert_int_equal(hints.ai_port_space, RDMA_PS_TCP);
	assert_string_equal(fake_last_node(), UNIT_ADDR);
	assert_string_equal(fake_last_service(), "");
	assert_int_equal(fake_last_port_space(), RDMA_PS_TCP);
	assert_int_equal(fake_calls(FAKE_RDMA_BIND_ADDR), 1);
	assert_int_equal(fake_calls(FAKE_RDMA_RESOLVE_ADDR), 0);
	/* the throw-away ID and the lookup are gone (teardown checks nothing is left) */
	assert_int_equal(fake_calls(FAKE_RDMA_DESTROY_ID), 1);
	assert_int_equal(fake_calls(FAKE_RDMA_FREEADDRINFO), 1);
}

static void test_remote_resolves_the_address(void **state)
{
	(void)state;
	struct ibv_context *ctx = NULL;
	assert_int_equal(
		rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx), 0);
	assert_ptr_equal(ctx, fake_ibv_context());
	assert_false(fake_last_hints().ai_flags & RAI_PASSIVE);
	assert_int_equal(fake_calls(FAKE_RDMA_RESOLVE_ADDR), 1);
	assert_int_equal(fake_last_resolve_addr_timeout(), RPMA_DEFAULT_TIMEOUT_MS);
	assert_int_equal(fake_calls(FAKE_RDMA_BIND_ADDR), 0);
}

static void expect_provider_error(enum rpma_util_ibv_context_type type)
{
	struct ibv_context *ctx = NOT_TOUCHED;
	assert_int_equal(rpma_utils_get_ibv_context(UNIT_ADDR, type, &ctx), RPMA_E_PROVIDER);
	assert_ptr_equal(ctx, NOT_TOUCHED);
	unit_assert_clean();
}

static void test_lookup_failure_is_a_provider_error(void **state)
{
	(void)state;
	struct ibv_context *ctx = NOT_TOUCHED;
	/* the fake knows no host names: EAI_NONAME, explained by gai_strerror() */
	assert_int_equal(
		rpma_utils_get_ibv_context("no.such.host", RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx),
		RPMA_E_PROVIDER);
	assert_ptr_equal(ctx, NOT_TOUCHED);
	assert_true(log_has("rdma_getaddrinfo(no.such.host", gai_strerror(EAI_NONAME), NULL));

	/* -1: the reason is errno */
	fake_fail(FAKE_RDMA_GETADDRINFO, 1, -1);
	expect_provider_error(RPMA_UTIL_IBV_CONTEXT_LOCAL);
	assert_true(log_has("rdma_getaddrinfo(", strerror(ENODEV), NULL));
	assert_int_equal(fake_calls(FAKE_RDMA_CREATE_ID), 0);
}

static void test_create_id_failure_is_a_provider_error(void **state)
{
	(void)state;
	fake_fail(FAKE_RDMA_CREATE_ID, 1, ENOMEM);
	expect_provider_error(RPMA_UTIL_IBV_CONTEXT_LOCAL);
	assert_true(log_has("rdma_create_id()", strerror(ENOMEM), NULL));
}

static void test_bind_failure_is_a_provider_error(void **state)
{
	(void)state;
	fake_fail(FAKE_RDMA_BIND_ADDR, 1, EADDRNOTAVAIL);
	expect_provider_error(RPMA_UTIL_IBV_CONTEXT_LOCAL);
	assert_true(log_has("rdma_bind_addr(" UNIT_ADDR ")", strerror(EADDRNOTAVAIL), NULL));
	assert_int_equal(fake_calls(FAKE_RDMA_DESTROY_ID), 1);
}

static void test_resolve_failure_is_a_provider_error(void **state)
{
	(void)state;
	fake_fail(FAKE_RDMA_RESOLVE_ADDR, 1, ETIMEDOUT);
	expect_provider_error(RPMA_UTIL_IBV_CONTEXT_REMOTE);
	assert_true(log_has("rdma_resolve_addr(" UNIT_ADDR, strerror(ETIMEDOUT), NULL));
}

static void test_address_without_device_is_a_provider_error(void **state)
{
	(void)state;
	struct ibv_context *ctx = NOT_TOUCHED;
	assert_int_equal(rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
		RPMA_E_PROVIDER);
	assert_ptr_equal(ctx, NOT_TOUCHED);
	assert_true(log_has("no RDMA device serves 127.0.0.1", NULL));
}

static int get_local(void *arg)
{
	return rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, arg);
}

static void test_allocates_nothing(void **state)
{
	(void)state;
	struct ibv_context *ctx;
	struct alloc_sweep sweep = {.op = get_local};
	assert_int_equal(unit_alloc_sweep(&sweep, &ctx), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_event_names),
		rpma_unit_test(test_event_values_keep_librpma_values),
		rpma_unit_test(test_get_ibv_context_rejects_bad_arguments),
		rpma_unit_test(test_local_binds_the_address),
		rpma_unit_test(test_remote_resolves_the_address),
		rpma_unit_test(test_lookup_failure_is_a_provider_error),
		rpma_unit_test(test_create_id_failure_is_a_provider_error),
		rpma_unit_test(test_bind_failure_is_a_provider_error),
		rpma_unit_test(test_resolve_failure_is_a_provider_error),
		rpma_unit_test(test_address_without_device_is_a_provider_error),
		rpma_unit_test(test_allocates_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
