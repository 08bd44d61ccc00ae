// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_conn_req.c -- outgoing connection requests: rpma_conn_req_new(), _connect(),
 * _delete(), _recv(), _get_private_data()
 *
 * (Incoming requests, made by an endpoint, are tested in tests/unit/rpma/ep.)
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "unit.h"

#define NOT_TOUCHED_REQ ((struct rpma_conn_req *)0x1234)
#define NOT_TOUCHED_CONN ((struct rpma_conn *)0x5678)

static char Buf[256];

/* the QP of a request: the only one alive */
static struct ibv_qp *only_qp(void)
{
	assert_int_equal(fake_live(FAKE_QP), 1);
	for (uint32_t n = 0x100; n < 0x100 + 1000; n++)
		if (fake_qp_by_num(n) != NULL)
			return fake_qp_by_num(n);
	fail();
	return NULL;
}

static void test_new_rejects_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_req *req = NOT_TOUCHED_REQ;
	assert_int_equal(rpma_conn_req_new(NULL, UNIT_ADDR, UNIT_PORT, NULL, &req), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_new(peer, NULL, UNIT_PORT, NULL, &req), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_new(peer, UNIT_ADDR, NULL, NULL, &req), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, NULL, NULL), RPMA_E_INVAL);
	assert_ptr_equal(req, NOT_TOUCHED_REQ);
	assert_int_equal(fake_calls(FAKE_RDMA_GETADDRINFO), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_new_with_defaults(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_req *req = fx_req_active(peer, NULL);

	/* looked up as an active RC/TCP address, resolved synchronously with 1000 ms */
	struct rdma_addrinfo hints = fake_last_hints();
	assert_false(hints.ai_flags & RAI_PASSIVE);
	assert_int_equal(hints.ai_qp_type, IBV_QPT_RC);
	assert_int_equal(hints.ai_port_space, RDMA_PS_TCP);
	assert_string_equal(fake_last_node(), UNIT_ADDR);
	assert_string_equal(fake_last_service(), UNIT_PORT);
	assert_int_equal(fake_last_port_space(), RDMA_PS_TCP);
	assert_int_equal(fake_last_resolve_addr_timeout(), 1000);
	assert_int_equal(fake_last_resolve_route_timeout(), 1000);
	assert_int_equal(fake_live(FAKE_ADDRINFO), 0);

	/* one CQ of 10 on its own channel, an RC QP 10/10 with one SGE, no signal-all */
	assert_int_equal(fake_live(FAKE_CQ), 1);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 1);
	assert_int_equal(fake_last_cqe(), 10);
	struct ibv_qp *qp = only_qp();
	struct ibv_qp_init_attr attr = fake_qp_attr(qp);
	assert_int_equal(attr.qp_type, IBV_QPT_RC);
	assert_int_equal(attr.sq_sig_all, 0);
	assert_int_equal(attr.cap.max_send_wr, 10);
	assert_int_equal(attr.cap.max_recv_wr, 10);
	assert_int_equal(attr.cap.max_send_sge, 1);
	assert_int_equal(attr.cap.max_recv_sge, 1);
	assert_ptr_equal(attr.send_cq, attr.recv_cq);
	assert_true(fake_cq_armed(attr.send_cq));
	assert_null(attr.srq);

	/* the request has its own CM event channel: one made, the ID on it */
	assert_int_equal(fake_live(FAKE_EVENT_CHANNEL), 1);
	assert_int_equal(fake_live(FAKE_CM_ID), 1);

	struct rpma_conn_private_data pdata = {(void *)1, 1};
	assert_int_equal(rpma_conn_req_get_private_data(req, &pdata), 0);
	assert_null(pdata.ptr);
	assert_int_equal(pdata.len, 0);

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_null(req);
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 0); /* outgoing: nothing to reject */
	assert_int_equal(fake_calls(FAKE_RDMA_DESTROY_ID), 1);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_new_follows_the_configuration(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_cfg *cfg = fx_cfg(20, 30, 40, 50, false);
	assert_int_equal(rpma_conn_cfg_set_timeout(cfg, 1234), 0);
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);

	assert_int_equal(fake_last_resolve_addr_timeout(), 1234);
	assert_int_equal(fake_last_resolve_route_timeout(), 1234);
	assert_int_equal(fake_live(FAKE_CQ), 2);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 2); /* one each */
	assert_int_equal(fake_last_cqe(), 30);		   /* the receive CQ came last */

	struct ibv_qp_init_attr attr = fake_qp_attr(only_qp());
	assert_ptr_not_equal(attr.send_cq, attr.recv_cq);
	assert_int_equal(attr.send_cq->cqe, 20);
	assert_int_equal(attr.recv_cq->cqe, 30);
	assert_ptr_not_equal(attr.send_cq->channel, attr.recv_cq->channel);
	assert_true(fake_cq_armed(attr.send_cq));
	assert_true(fake_cq_armed(attr.recv_cq));
	assert_int_equal(attr.cap.max_send_wr, 40);
	assert_int_equal(attr.cap.max_recv_wr, 50);

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_receive_cq_of_one_entry(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_cfg *cfg = fx_cfg(10, 1, 10, 10, false);
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(fake_live(FAKE_CQ), 2);
	assert_int_equal(fake_qp_attr(only_qp()).recv_cq->cqe, 1);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_shared_channel_serves_both_cqs(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_cfg *cfg = fx_cfg(20, 30, 40, 50, true);
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);

	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 1);
	struct ibv_qp_init_attr attr = fake_qp_attr(only_qp());
	assert_ptr_equal(attr.send_cq->channel, attr.recv_cq->channel);

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_shared_channel_without_receive_cq(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_cfg *cfg = fx_cfg(20, 0, 10, 10, true);
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(fake_live(FAKE_CQ), 1);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 1);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_huge_cq_size_is_clipped_to_int_max(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_cfg *cfg = fx_cfg(UINT32_MAX, 0, 10, 10, false);
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	assert_int_equal(fake_last_cqe(), INT_MAX);
	assert_int_equal(rpma_conn_req_delete(&req), 0);

	/* and a zero size is left for the provider to refuse */
	assert_int_equal(rpma_conn_cfg_set_cq_size(cfg, 0), 0);
	assert_int_equal(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), RPMA_E_PROVIDER);
	assert_true(log_has("ibv_create_cq(cqe=0)", strerror(EINVAL), NULL));
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* every provider call of rpma_conn_req_new() failing in turn */
static void test_new_provider_failures_release_everything(void **state)
{
	(void)state;
	static const struct {
		enum fake_fn fn;
		unsigned int nth;
		int err;
		const char *logged;
	} table[] = {
		{FAKE_RDMA_GETADDRINFO, 1, -1, "rdma_getaddrinfo(" UNIT_ADDR ", " UNIT_PORT},
		{FAKE_RDMA_CREATE_ID, 1, ENOMEM, "rdma_create_id()"},
		{FAKE_RDMA_RESOLVE_ADDR, 1, ETIMEDOUT, "rdma_resolve_addr(" UNIT_ADDR},
		{FAKE_RDMA_RESOLVE_ROUTE, 1, EHOSTUNREACH, "rdma_resolve_route(" UNIT_ADDR},
		{FAKE_RDMA_CREATE_EVENT_CHANNEL, 1, EMFILE, "rdma_create_event_channel()"},
		{FAKE_RDMA_MIGRATE_ID, 1, EINVAL, "rdma_migrate_id()"},
		{FAKE_IBV_CREATE_COMP_CHANNEL, 1, EMFILE, "ibv_create_comp_channel()"}, /* shared */
		{FAKE_IBV_CREATE_COMP_CHANNEL, 2, EMFILE, "ibv_create_comp_channel()"}, /* rcq */
		{FAKE_IBV_CREATE_CQ, 1, ENOMEM, "ibv_create_cq(cqe=20)"},
		{FAKE_IBV_CREATE_CQ, 2, ENOMEM, "ibv_create_cq(cqe=30)"},
		{FAKE_IBV_REQ_NOTIFY_CQ, 1, EIO, "ibv_req_notify_cq()"},
		{FAKE_IBV_REQ_NOTIFY_CQ, 2, EIO, "ibv_req_notify_cq()"},
		{FAKE_RDMA_CREATE_QP, 1, ENOMEM, "rdma_create_qp(max_send_wr=40, max_recv_wr=50"},
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct rpma_peer *peer = fx_peer();
		/* own channels for the rows that count comp channels past the first */
		bool shared = i == 6;
		struct rpma_conn_cfg *cfg = fx_cfg(20, 30, 40, 50, shared);
		struct rpma_conn_req *req = NOT_TOUCHED_REQ;
		log_clear();

		fake_fail(table[i].fn, table[i].nth, table[i].err);
		assert_int_equal(
			rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), RPMA_E_PROVIDER);
		assert_ptr_equal(req, NOT_TOUCHED_REQ);
		if (!log_has(table[i].logged, NULL))
			fail_msg("row %zu: no \"%s\" in the log", i, table[i].logged);
		if (table[i].err > 0 && !log_has(strerror(table[i].err), NULL))
			fail_msg("row %zu: errno not logged", i);

		assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
		assert_int_equal(rpma_peer_delete(&peer), 0);
		unit_assert_clean();
		fake_reset();
	}
}

struct new_arg {
	struct rpma_peer *peer;
	struct rpma_conn_cfg *cfg;
	struct rpma_conn_req *req;
};

static int new_req(void *p)
{
	struct new_arg *a = p;
	return rpma_conn_req_new(a->peer, UNIT_ADDR, UNIT_PORT, a->cfg, &a->req);
}

static void delete_req(void *p)
{
	struct new_arg *a = p;
	assert_int_equal(rpma_conn_req_delete(&a->req), 0);
}

static void test_new_out_of_memory(void **state)
{
	(void)state;
	struct new_arg a = {fx_peer(), NULL, NULL};
	struct alloc_sweep sweep = {.op = new_req, .undo = delete_req};
	/* the request and its CQ */
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 2);

	/* with a receive CQ: one more */
	a.cfg = fx_cfg(10, 10, 10, 10, true);
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 3);
	assert_int_equal(rpma_conn_cfg_delete(&a.cfg), 0);
	assert_int_equal(rpma_peer_delete(&a.peer), 0);
}

static void test_delete_rejects_null(void **state)
{
	(void)state;
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_conn_req_delete(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

static void test_delete_failures_still_release_the_rest(void **state)
{
	(void)state;
	/* what a failed destroy leaves: the object, and the channel it still uses */
	static const struct {
		enum fake_fn fn;
		const char *logged;
		enum fake_obj_type left;
		int left_total;
	} table[] = {
		{FAKE_IBV_DESTROY_CQ, "ibv_destroy_cq()", FAKE_CQ, 2},
		{FAKE_IBV_DESTROY_COMP_CHANNEL, "ibv_destroy_comp_channel()", FAKE_COMP_CHANNEL, 1},
		{FAKE_RDMA_DESTROY_ID, "rdma_destroy_id()", FAKE_CM_ID, 2},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct rpma_peer *peer = fx_peer();
		struct rpma_conn_cfg *cfg = fx_cfg(10, 0, 10, 10, true);
		struct rpma_conn_req *req = fx_req_active(peer, cfg);
		assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
		long alloc_before_delete = alloc_live();

		fake_fail(table[i].fn, 1, EIO);
		assert_int_equal(rpma_conn_req_delete(&req), RPMA_E_PROVIDER);
		assert_null(req);
		assert_true(log_has(table[i].logged, strerror(EIO), NULL));
		assert_true(alloc_live() < alloc_before_delete); /* the library's memory is freed */
		assert_int_equal(rpma_peer_delete(&peer), 0);

		assert_int_equal(fake_live(table[i].left), 1);
		assert_int_equal(fake_live_total(), table[i].left_total);
		assert_int_equal(fake_violations(), 0);
		fake_free_all();
		unit_assert_clean();
		fake_reset();
	}
}

static void test_connect_rejects_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn *conn = NOT_TOUCHED_CONN;
	struct rpma_conn_req *req = NULL;

	/* nothing to consume */
	assert_int_equal(rpma_conn_req_connect(NULL, NULL, &conn), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_INVAL);

	/* the request is consumed, as librpma 1.3 does */
	req = fx_req_active(peer, NULL);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, NULL), RPMA_E_INVAL);
	assert_null(req);
	assert_int_equal(fake_live(FAKE_CM_ID), 0);

	struct rpma_conn_private_data no_ptr = {NULL, 4};
	req = fx_req_active(peer, NULL);
	assert_int_equal(rpma_conn_req_connect(&req, &no_ptr, &conn), RPMA_E_INVAL);
	assert_null(req);

	struct rpma_conn_private_data no_len = {Buf, 0};
	req = fx_req_active(peer, NULL);
	assert_int_equal(rpma_conn_req_connect(&req, &no_len, &conn), RPMA_E_INVAL);
	assert_null(req);

	assert_ptr_equal(conn, NOT_TOUCHED_CONN);
	assert_int_equal(fake_calls(FAKE_RDMA_CONNECT), 0);
	assert_int_equal(fake_live(FAKE_CQ), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_connect_sends_librpma_parameters(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_req *req = fx_req_active(peer, NULL);
	struct rpma_conn *conn = NULL;

	const char hello[] = "hello, peer";
	struct rpma_conn_private_data pdata = {(void *)hello, sizeof(hello)};
	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), 0);
	assert_null(req);
	assert_non_null(conn);

	struct fake_conn_param p = fake_last_connect();
	assert_int_equal(p.param.retry_count, 7);
	assert_int_equal(p.param.rnr_retry_count, 7);
	assert_int_equal(p.param.flow_control, 1);
	assert_int_equal(p.param.responder_resources, RDMA_MAX_RESP_RES);
	assert_int_equal(p.param.initiator_depth, RDMA_MAX_INIT_DEPTH);
	assert_int_equal(p.param.private_data_len, sizeof(hello));
	assert_memory_equal(p.pdata, hello, sizeof(hello));
	assert_int_equal(fake_calls(FAKE_RDMA_ACCEPT), 0);
	/* the RNR NAK timer is the receiving side's: an outgoing connection leaves it alone */
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 0);

	/* our own data is not what the other side sent: nothing yet */
	struct rpma_conn_private_data got = {(void *)1, 1};
	assert_int_equal(rpma_conn_get_private_data(conn, &got), 0);
	assert_null(got.ptr);
	assert_int_equal(got.len, 0);

	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_connect_without_private_data(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn *conn = fx_conn_active(peer, NULL);
	struct fake_conn_param p = fake_last_connect();
	assert_null(p.param.private_data);
	assert_int_equal(p.param.private_data_len, 0);
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_private_data_up_to_255_reaches_the_kernel(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	uint8_t data[255];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;

	/* 56 bytes: the most a connect carries over InfiniBand/RoCE */
	struct rpma_conn_req *req = fx_req_active(peer, NULL);
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data pdata = {data, FAKE_CONNECT_PDATA_MAX};
	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), 0);
	assert_memory_equal(fake_last_connect().pdata, data, FAKE_CONNECT_PDATA_MAX);
	assert_int_equal(rpma_conn_delete(&conn), 0);

	/* 255 bytes go to the kernel as they are; it refuses them, and that is the answer */
	req = fx_req_active(peer, NULL);
	conn = NOT_TOUCHED_CONN;
	pdata.len = 255;
	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), RPMA_E_PROVIDER);
	assert_null(req);
	assert_ptr_equal(conn, NOT_TOUCHED_CONN);
	assert_int_equal(fake_last_connect().param.private_data_len, 255);
	assert_memory_equal(fake_last_connect().pdata, data, 255);
	assert_true(log_has("rdma_connect(private_data_len=255)", strerror(EINVAL), NULL));

	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_connect_provider_failures_release_everything(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, 10, 10, true);
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	struct rpma_conn *conn = NOT_TOUCHED_CONN;

	fake_fail(FAKE_RDMA_CONNECT, 1, ECONNREFUSED);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	assert_null(req);
	assert_ptr_equal(conn, NOT_TOUCHED_CONN);
	assert_true(log_has("rdma_connect(private_data_len=0)", strerror(ECONNREFUSED), NULL));
	assert_int_equal(fake_live_total(), 1); /* the peer's PD */

	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

struct connect_arg {
	struct rpma_peer *peer;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
};

static void connect_setup(void *p)
{
	struct connect_arg *a = p;
	a->req = fx_req_active(a->peer, NULL);
}

static int connect_op(void *p)
{
	struct connect_arg *a = p;
	return rpma_conn_req_connect(&a->req, NULL, &a->conn);
}

static void connect_check_failed(void *p)
{
	struct connect_arg *a = p;
	assert_null(a->req);
	assert_null(a->conn);
	assert_int_equal(fake_live_total(), 1); /* only the peer's PD */
	assert_int_equal(fake_calls(FAKE_RDMA_CONNECT), 0);
}

static void connect_undo(void *p)
{
	struct connect_arg *a = p;
	assert_int_equal(rpma_conn_delete(&a->conn), 0);
}

static void test_connect_out_of_memory_releases_everything(void **state)
{
	(void)state;
	struct connect_arg a = {fx_peer(), NULL, NULL};
	struct alloc_sweep sweep = {
		.setup = connect_setup,
		.op = connect_op,
		.check_failed = connect_check_failed,
		.undo = connect_undo,
	};
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 1);
	assert_int_equal(rpma_peer_delete(&a.peer), 0);
}

static void test_recv_before_connecting(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_req *req = fx_req_active(peer, NULL);
	struct rpma_mr_local *mr;
	assert_int_equal(rpma_mr_reg(peer, Buf, sizeof(Buf), RPMA_MR_USAGE_RECV, &mr), 0);
	struct ibv_qp *qp = only_qp();

	assert_int_equal(rpma_conn_req_recv(NULL, mr, 0, 8, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_recv(req, NULL, 0, 0, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_recv(req, mr, 1, sizeof(Buf), NULL), RPMA_E_INVAL);
	assert_int_equal(fake_recv_count(qp), 0);

	assert_int_equal(rpma_conn_req_recv(req, mr, 16, 32, (void *)0xfeed), 0);
	assert_int_equal(fake_recv_count(qp), 1);
	struct fake_recv_wr wr = fake_recv_get(qp, 0);
	assert_int_equal(wr.wr_id, 0xfeed);
	assert_int_equal(wr.num_sge, 1);
	assert_int_equal(wr.sge.addr, (uintptr_t)Buf + 16);
	assert_int_equal(wr.sge.length, 32);

	fake_fail(FAKE_IBV_POST_RECV, 1, ENOMEM);
	assert_int_equal(rpma_conn_req_recv(req, mr, 0, 8, NULL), RPMA_E_PROVIDER);
	assert_true(log_has("ibv_post_recv(", strerror(ENOMEM), NULL));

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_get_private_data_rejects_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_conn_req *req = fx_req_active(peer, NULL);
	struct rpma_conn_private_data pdata = {(void *)1, 1};
	assert_int_equal(rpma_conn_req_get_private_data(NULL, &pdata), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_get_private_data(req, NULL), RPMA_E_INVAL);
	assert_ptr_equal(pdata.ptr, (void *)1);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_new_rejects_bad_arguments),
		rpma_unit_test(test_new_with_defaults),
		rpma_unit_test(test_new_follows_the_configuration),
		rpma_unit_test(test_receive_cq_of_one_entry),
		rpma_unit_test(test_shared_channel_serves_both_cqs),
		rpma_unit_test(test_shared_channel_without_receive_cq),
		rpma_unit_test(test_huge_cq_size_is_clipped_to_int_max),
		rpma_unit_test(test_new_provider_failures_release_everything),
		rpma_unit_test(test_new_out_of_memory),
		rpma_unit_test(test_delete_rejects_null),
		rpma_unit_test(test_delete_failures_still_release_the_rest),
		rpma_unit_test(test_connect_rejects_bad_arguments),
		rpma_unit_test(test_connect_sends_librpma_parameters),
		rpma_unit_test(test_connect_without_private_data),
		rpma_unit_test(test_private_data_up_to_255_reaches_the_kernel),
		rpma_unit_test(test_connect_provider_failures_release_everything),
		rpma_unit_test(test_connect_out_of_memory_releases_everything),
		rpma_unit_test(test_recv_before_connecting),
		rpma_unit_test(test_get_private_data_rejects_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
