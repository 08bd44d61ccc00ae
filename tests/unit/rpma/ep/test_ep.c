// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_ep.c -- listening endpoints and incoming connection requests: rpma_ep_listen(),
 * _shutdown(), _get_fd(), _next_conn_req(), the peer's address of a request
 * (rpma_conn_req_get_peer_addr(), librpma_ext.h), and accepting or rejecting what they return
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "librpma_ext.h"
#include "unit.h"

#define NOT_TOUCHED_EP ((struct rpma_ep *)0x1234)
#define NOT_TOUCHED_REQ ((struct rpma_conn_req *)0x5678)
#define NOT_TOUCHED_CONN ((struct rpma_conn *)0x9abc)

static int ep_fd(struct rpma_ep *ep)
{
	int fd = -1;
	assert_int_equal(rpma_ep_get_fd(ep, &fd), 0);
	return fd;
}

static void test_listen_rejects_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = NOT_TOUCHED_EP;
	assert_int_equal(rpma_ep_listen(NULL, UNIT_ADDR, UNIT_PORT, &ep), RPMA_E_INVAL);
	assert_int_equal(rpma_ep_listen(peer, NULL, UNIT_PORT, &ep), RPMA_E_INVAL);
	assert_int_equal(rpma_ep_listen(peer, UNIT_ADDR, NULL, &ep), RPMA_E_INVAL);
	assert_int_equal(rpma_ep_listen(peer, UNIT_ADDR, UNIT_PORT, NULL), RPMA_E_INVAL);
	assert_ptr_equal(ep, NOT_TOUCHED_EP);
	assert_int_equal(fake_calls(FAKE_RDMA_CREATE_EVENT_CHANNEL), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_listen_get_fd_and_shutdown(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);

	struct rdma_addrinfo hints = fake_last_hints();
	assert_true(hints.ai_flags & RAI_PASSIVE);
	assert_int_equal(hints.ai_qp_type, IBV_QPT_RC);
	assert_int_equal(hints.ai_port_space, RDMA_PS_TCP);
	assert_string_equal(fake_last_node(), UNIT_ADDR);
	assert_string_equal(fake_last_service(), UNIT_PORT);
	assert_int_equal(fake_last_port_space(), RDMA_PS_TCP);
	assert_int_equal(fake_calls(FAKE_RDMA_BIND_ADDR), 1);
	assert_int_equal(fake_calls(FAKE_RDMA_LISTEN), 1);
	assert_int_equal(fake_last_listen_backlog(), 0);
	assert_int_equal(fake_live(FAKE_ADDRINFO), 0);

	/* the fd is the listening ID's event channel */
	int fd = ep_fd(ep);
	assert_non_null(fake_cm_id_by_channel_fd(fd));
	assert_true(log_has("listening on " UNIT_ADDR ":" UNIT_PORT, NULL));

	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_null(ep);
	assert_int_equal(rpma_ep_shutdown(&ep), 0); /* NULL: nothing to do */
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_get_fd_and_shutdown_reject_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	int fd = -1;
	assert_int_equal(rpma_ep_get_fd(NULL, &fd), RPMA_E_INVAL);
	assert_int_equal(rpma_ep_get_fd(ep, NULL), RPMA_E_INVAL);
	assert_int_equal(fd, -1);
	assert_int_equal(rpma_ep_shutdown(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_listen_provider_failures_release_everything(void **state)
{
	(void)state;
	static const struct {
		enum fake_fn fn;
		int err;
		const char *logged;
	} table[] = {
		{FAKE_RDMA_CREATE_EVENT_CHANNEL, EMFILE, "rdma_create_event_channel()"},
		{FAKE_RDMA_CREATE_ID, ENOMEM, "rdma_create_id()"},
		{FAKE_RDMA_GETADDRINFO, -1,
			"rdma_getaddrinfo(" UNIT_ADDR ", " UNIT_PORT ", passive)"},
		{FAKE_RDMA_BIND_ADDR, EADDRINUSE, "rdma_bind_addr(" UNIT_ADDR ")"},
		{FAKE_RDMA_LISTEN, EADDRINUSE, "rdma_listen(" UNIT_ADDR ":" UNIT_PORT ")"},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct rpma_peer *peer = fx_peer();
		struct rpma_ep *ep = NOT_TOUCHED_EP;
		log_clear();
		fake_fail(table[i].fn, 1, table[i].err);
		assert_int_equal(rpma_ep_listen(peer, UNIT_ADDR, UNIT_PORT, &ep), RPMA_E_PROVIDER);
		assert_ptr_equal(ep, NOT_TOUCHED_EP);
		assert_true(log_has(table[i].logged, NULL));
		if (table[i].err > 0)
			assert_true(log_has(strerror(table[i].err), NULL));
		assert_int_equal(rpma_peer_delete(&peer), 0);
		unit_assert_clean();
		fake_reset();
	}
}

static int listen_op(void *p)
{
	struct rpma_peer **peer = p;
	return rpma_ep_listen(*peer, UNIT_ADDR, UNIT_PORT, (struct rpma_ep **)(peer + 1));
}

static void listen_undo(void *p)
{
	struct rpma_peer **peer = p;
	assert_int_equal(rpma_ep_shutdown((struct rpma_ep **)(peer + 1)), 0);
}

static void test_listen_out_of_memory(void **state)
{
	(void)state;
	struct {
		struct rpma_peer *peer;
		struct rpma_ep *ep;
	} a = {fx_peer(), NULL};
	struct alloc_sweep sweep = {.op = listen_op, .undo = listen_undo};
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 1);
	assert_int_equal(rpma_peer_delete(&a.peer), 0);
}

static void test_failed_shutdown_keeps_the_endpoint(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_ep *kept = ep;

	fake_fail(FAKE_RDMA_DESTROY_ID, 1, EBUSY);
	assert_int_equal(rpma_ep_shutdown(&ep), RPMA_E_PROVIDER);
	assert_ptr_equal(ep, kept);
	assert_true(log_has("rdma_destroy_id()", strerror(EBUSY), NULL));
	assert_true(ep_fd(ep) >= 0); /* still a valid endpoint */

	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_next_conn_req_rejects_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = NOT_TOUCHED_REQ;
	assert_int_equal(rpma_ep_next_conn_req(NULL, NULL, &req), RPMA_E_INVAL);
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, NULL), RPMA_E_INVAL);
	assert_ptr_equal(req, NOT_TOUCHED_REQ);
	assert_int_equal(fake_calls(FAKE_RDMA_GET_CM_EVENT), 0);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_no_request_waiting(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = NOT_TOUCHED_REQ;

	/* a non-blocking fd with nothing on it: EAGAIN from the kernel */
	fx_set_nonblock(ep_fd(ep));
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_NO_EVENT);

	/* ENODATA, librdmacm's word for a short read */
	fake_fail(FAKE_RDMA_GET_CM_EVENT, 1, ENODATA);
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_NO_EVENT);

	/* anything else is a provider error */
	fake_fail(FAKE_RDMA_GET_CM_EVENT, 1, EBADF);
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_PROVIDER);
	assert_true(log_has("rdma_get_cm_event()", strerror(EBADF), NULL));

	assert_ptr_equal(req, NOT_TOUCHED_REQ);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_other_event_is_acknowledged_and_refused(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = NOT_TOUCHED_REQ;
	int fd = ep_fd(ep);

	fake_cm_push_event(
		fd, fake_cm_id_by_channel_fd(fd), RDMA_CM_EVENT_DEVICE_REMOVAL, 0, NULL, 0);
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_INVAL);
	assert_ptr_equal(req, NOT_TOUCHED_REQ);
	assert_true(log_has("unexpected event", "RDMA_CM_EVENT_DEVICE_REMOVAL", NULL));
	assert_int_equal(fake_live(FAKE_CM_EVENT), 0); /* acknowledged */

	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_request_is_set_up_from_the_event(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	int fd = ep_fd(ep);

	uint8_t data[FAKE_CONNECT_PDATA_MAX];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(0xa0 + i);

	/* the fd becomes readable when a request arrives */
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 0), 0);
	struct rdma_cm_id *id = fake_cm_push_connect_request(fd, data, sizeof(data));
	assert_int_equal(poll(&pfd, 1, 0), 1);

	struct rpma_conn_cfg *cfg = fx_cfg(11, 12, 13, 14, false);
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, cfg, &req), 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_non_null(req);

	/* acknowledged, and the ID moved to a channel of its own */
	assert_int_equal(fake_live(FAKE_CM_EVENT), 0);
	assert_int_not_equal(id->channel->fd, fd);
	assert_int_equal(fake_live(FAKE_EVENT_CHANNEL), 2);

	/* queue pair and CQs as configured */
	struct ibv_qp_init_attr attr = fake_qp_attr(id->qp);
	assert_int_equal(attr.send_cq->cqe, 11);
	assert_int_equal(attr.recv_cq->cqe, 12);
	assert_int_equal(attr.cap.max_send_wr, 13);
	assert_int_equal(attr.cap.max_recv_wr, 14);
	assert_int_equal(attr.qp_type, IBV_QPT_RC);

	/* the private data is a copy owned by the request */
	struct rpma_conn_private_data pdata = {NULL, 0};
	assert_int_equal(rpma_conn_req_get_private_data(req, &pdata), 0);
	assert_int_equal(pdata.len, sizeof(data));
	assert_memory_equal(pdata.ptr, data, sizeof(data));

	/* rejecting it */
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 1);
	assert_int_equal(fake_live(FAKE_CM_ID), 1); /* the listening one */

	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_request_without_private_data(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = fx_req_passive(ep, NULL, NULL, 0);

	struct rpma_conn_private_data pdata = {(void *)1, 1};
	assert_int_equal(rpma_conn_req_get_private_data(req, &pdata), 0);
	assert_null(pdata.ptr);
	assert_int_equal(pdata.len, 0);
	assert_int_equal(fake_last_cqe(), 10); /* cfg NULL: the defaults */

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* found on Soft-RoCE: the endpoint went before the request it gave was accepted */
static void test_request_outlives_its_endpoint(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = fx_req_passive(ep, NULL, "hi", 3);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);

	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_non_null(conn);
	assert_int_equal(rpma_conn_disconnect(conn), 0);
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_setup_failures_reject_the_request(void **state)
{
	(void)state;
	static const struct {
		enum fake_fn fn;
		unsigned int nth;
		int err;
		const char *logged;
	} table[] = {
		{FAKE_RDMA_ACK_CM_EVENT, 1, EINVAL, "rdma_ack_cm_event(CONNECT_REQUEST)"},
		{FAKE_RDMA_CREATE_EVENT_CHANNEL, 1, EMFILE, "rdma_create_event_channel()"},
		{FAKE_RDMA_MIGRATE_ID, 1, EINVAL, "rdma_migrate_id()"},
		{FAKE_IBV_CREATE_COMP_CHANNEL, 1, EMFILE, "ibv_create_comp_channel()"},
		{FAKE_IBV_CREATE_CQ, 1, ENOMEM, "ibv_create_cq(cqe=10)"},
		{FAKE_IBV_CREATE_CQ, 2, ENOMEM, "ibv_create_cq(cqe=10)"},
		{FAKE_IBV_REQ_NOTIFY_CQ, 1, EIO, "ibv_req_notify_cq()"},
		{FAKE_RDMA_CREATE_QP, 1, ENOMEM, "rdma_create_qp("},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct rpma_peer *peer = fx_peer();
		struct rpma_ep *ep = fx_ep(peer);
		struct rpma_conn_cfg *cfg = fx_cfg(10, 10, 10, 10, true);
		assert_non_null(fake_cm_push_connect_request(ep_fd(ep), "x", 1));
		log_clear();

		struct rpma_conn_req *req = NOT_TOUCHED_REQ;
		fake_fail(table[i].fn, table[i].nth, table[i].err);
		assert_int_equal(rpma_ep_next_conn_req(ep, cfg, &req), RPMA_E_PROVIDER);
		assert_ptr_equal(req, NOT_TOUCHED_REQ);
		if (!log_has(table[i].logged, strerror(table[i].err), NULL))
			fail_msg("row %zu: \"%s\" not logged", i, table[i].logged);

		/* the other side hears "rejected"; only the endpoint is left */
		assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 1);
		assert_int_equal(fake_live(FAKE_CM_ID), 1);
		assert_int_equal(fake_live(FAKE_CM_EVENT), 0);
		assert_int_equal(fake_live(FAKE_CQ), 0);

		assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
		assert_int_equal(rpma_ep_shutdown(&ep), 0);
		assert_int_equal(rpma_peer_delete(&peer), 0);
		unit_assert_clean();
		fake_reset();
	}
}

struct next_arg {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_conn_cfg *cfg;
	struct rpma_conn_req *req;
	unsigned int rejects;
};

static void next_setup(void *p)
{
	struct next_arg *a = p;
	assert_non_null(fake_cm_push_connect_request(ep_fd(a->ep), "pdata", 6));
	a->rejects = fake_calls(FAKE_RDMA_REJECT);
}

static int next_op(void *p)
{
	struct next_arg *a = p;
	return rpma_ep_next_conn_req(a->ep, a->cfg, &a->req);
}

static void next_check_failed(void *p)
{
	struct next_arg *a = p;
	assert_null(a->req);
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), a->rejects + 1);
	assert_int_equal(fake_live(FAKE_CM_ID), 1);
	assert_int_equal(fake_live(FAKE_CQ), 0);
	assert_int_equal(fake_live(FAKE_CM_EVENT), 0);
}

static void next_undo(void *p)
{
	struct next_arg *a = p;
	assert_int_equal(rpma_conn_req_delete(&a->req), 0);
}

static void test_next_conn_req_out_of_memory(void **state)
{
	(void)state;
	struct next_arg a = {fx_peer(), NULL, NULL, NULL, 0};
	a.ep = fx_ep(a.peer);
	a.cfg = fx_cfg(10, 10, 10, 10, false);
	struct alloc_sweep sweep = {
		.setup = next_setup,
		.op = next_op,
		.check_failed = next_check_failed,
		.undo = next_undo,
	};
	/* the private data copy, the request, the CQ and the receive CQ */
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 4);
	assert_int_equal(rpma_conn_cfg_delete(&a.cfg), 0);
	assert_int_equal(rpma_ep_shutdown(&a.ep), 0);
	assert_int_equal(rpma_peer_delete(&a.peer), 0);
}

static void test_accept_sends_librpma_parameters(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = fx_req_passive(ep, NULL, "from client", 12);

	uint8_t reply[FAKE_ACCEPT_PDATA_MAX];
	memset(reply, 0x5a, sizeof(reply));
	struct rpma_conn_private_data pdata = {reply, sizeof(reply)};
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), 0);
	assert_null(req);
	assert_int_equal(fake_calls(FAKE_RDMA_CONNECT), 0);

	struct fake_conn_param p = fake_last_accept();
	assert_int_equal(p.param.retry_count, 7);
	assert_int_equal(p.param.rnr_retry_count, 7);
	assert_int_equal(p.param.flow_control, 1);
	assert_int_equal(p.param.responder_resources, RDMA_MAX_RESP_RES);
	assert_int_equal(p.param.initiator_depth, RDMA_MAX_INIT_DEPTH);
	assert_int_equal(p.param.private_data_len, sizeof(reply));
	assert_memory_equal(p.pdata, reply, sizeof(reply));

	/* the request's private data went over to the connection */
	struct rpma_conn_private_data got = {NULL, 0};
	assert_int_equal(rpma_conn_get_private_data(conn, &got), 0);
	assert_int_equal(got.len, 12);
	assert_string_equal(got.ptr, "from client");

	/* the connection's events come on its own fd, not the endpoint's */
	int fd;
	assert_int_equal(rpma_conn_get_event_fd(conn, &fd), 0);
	assert_int_not_equal(fd, ep_fd(ep));

	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_accept_failure_rejects_and_releases(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);

	/* the provider refuses */
	struct rpma_conn_req *req = fx_req_passive(ep, NULL, "x", 1);
	struct rpma_conn *conn = NOT_TOUCHED_CONN;
	fake_fail(FAKE_RDMA_ACCEPT, 1, ENOMEM);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	assert_null(req);
	assert_ptr_equal(conn, NOT_TOUCHED_CONN);
	assert_true(log_has("rdma_accept(private_data_len=0)", strerror(ENOMEM), NULL));
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 1);
	assert_int_equal(fake_live(FAKE_CM_ID), 1); /* the listening one */
	assert_int_equal(fake_live(FAKE_QP), 0);

	/* the kernel refuses more private data than an accept carries */
	uint8_t reply[FAKE_ACCEPT_PDATA_MAX + 1] = {0};
	struct rpma_conn_private_data pdata = {reply, sizeof(reply)};
	req = fx_req_passive(ep, NULL, "x", 1);
	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), RPMA_E_PROVIDER);
	assert_true(log_has("rdma_accept(private_data_len=197)", strerror(EINVAL), NULL));
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 2);
	assert_int_equal(fake_live(FAKE_CM_ID), 1);

	/* no queue pair was left to tune */
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 0);

	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

struct accept_arg {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	unsigned int rejects;
};

static void accept_setup(void *p)
{
	struct accept_arg *a = p;
	a->req = fx_req_passive(a->ep, NULL, "pdata", 6);
	a->rejects = fake_calls(FAKE_RDMA_REJECT);
}

static int accept_op(void *p)
{
	struct accept_arg *a = p;
	return rpma_conn_req_connect(&a->req, NULL, &a->conn);
}

static void accept_check_failed(void *p)
{
	struct accept_arg *a = p;
	assert_null(a->req);
	assert_null(a->conn);
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), a->rejects + 1);
	assert_int_equal(fake_live(FAKE_CM_ID), 1);
	assert_int_equal(fake_live(FAKE_CQ), 0);
	assert_int_equal(fake_live(FAKE_QP), 0);
}

static void accept_undo(void *p)
{
	struct accept_arg *a = p;
	assert_int_equal(rpma_conn_delete(&a->conn), 0);
}

static void test_accept_out_of_memory_rejects(void **state)
{
	(void)state;
	struct accept_arg a = {fx_peer(), NULL, NULL, NULL, 0};
	a.ep = fx_ep(a.peer);
	struct alloc_sweep sweep = {
		.setup = accept_setup,
		.op = accept_op,
		.check_failed = accept_check_failed,
		.undo = accept_undo,
	};
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 1);
	assert_int_equal(rpma_ep_shutdown(&a.ep), 0);
	assert_int_equal(rpma_peer_delete(&a.peer), 0);
}

static void test_rejecting_a_request_that_fails_to_reject(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = fx_req_passive(ep, NULL, NULL, 0);

	fake_fail(FAKE_RDMA_REJECT, 1, EIO);
	assert_int_equal(rpma_conn_req_delete(&req), RPMA_E_PROVIDER);
	assert_null(req);
	assert_true(log_has("rdma_reject()", strerror(EIO), NULL));
	/* the ID is destroyed all the same */
	assert_int_equal(fake_live(FAKE_CM_ID), 1);

	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* a request from peer, taken from ep */
static struct rpma_conn_req *req_from(struct rpma_ep *ep, const struct sockaddr *peer)
{
	assert_non_null(fake_cm_push_connect_request_from(ep_fd(ep), peer, NULL, 0));
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	assert_non_null(req);
	return req;
}

/* whether the bytes of ss from offset on are all zero */
static bool zero_from(const struct sockaddr_storage *ss, size_t offset)
{
	const unsigned char *b = (const unsigned char *)ss;
	for (size_t i = offset; i < sizeof(*ss); i++)
		if (b[i] != 0)
			return false;
	return true;
}

static void test_peer_addr_of_an_ipv4_request(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);

	struct sockaddr_in from = {.sin_family = AF_INET, .sin_port = htons(40001)};
	assert_int_equal(inet_pton(AF_INET, "192.168.77.1", &from.sin_addr), 1);
	struct rpma_conn_req *req = req_from(ep, (const struct sockaddr *)&from);

	struct sockaddr_storage ss;
	memset(&ss, 0xa5, sizeof(ss));
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &ss), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	const struct sockaddr_in *got = (const struct sockaddr_in *)&ss;
	assert_int_equal(ntohs(got->sin_port), 40001);
	assert_int_equal(got->sin_addr.s_addr, from.sin_addr.s_addr);
	assert_memory_equal(got, &from, sizeof(from));
	assert_true(zero_from(&ss, sizeof(from)));

	/* asking does not consume the request: it is accepted as usual */
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_peer_addr_of_an_ipv6_request(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);

	struct sockaddr_in6 from = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(50002),
		.sin6_flowinfo = htonl(0x12345),
		.sin6_scope_id = 3,
	};
	assert_int_equal(inet_pton(AF_INET6, "fe80::2:77", &from.sin6_addr), 1);
	struct rpma_conn_req *req = req_from(ep, (const struct sockaddr *)&from);

	struct sockaddr_storage ss;
	memset(&ss, 0xa5, sizeof(ss));
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &ss), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	const struct sockaddr_in6 *got = (const struct sockaddr_in6 *)&ss;
	assert_int_equal(ntohs(got->sin6_port), 50002);
	assert_memory_equal(&got->sin6_addr, &from.sin6_addr, sizeof(from.sin6_addr));
	assert_int_equal(got->sin6_scope_id, 3);
	assert_memory_equal(got, &from, sizeof(from));
	assert_true(zero_from(&ss, sizeof(from)));

	/* the address lives in the request, not in the endpoint */
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	memset(&ss, 0, sizeof(ss));
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &ss), 0);
	assert_memory_equal(&ss, &from, sizeof(from));

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_peer_addr_rejects_null_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct sockaddr_in from = {.sin_family = AF_INET, .sin_port = htons(1)};
	struct rpma_conn_req *req = req_from(ep, (const struct sockaddr *)&from);

	struct sockaddr_storage ss;
	memset(&ss, 0xa5, sizeof(ss));
	assert_int_equal(rpma_conn_req_get_peer_addr(NULL, &ss), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_get_peer_addr(req, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_req_get_peer_addr(NULL, NULL), RPMA_E_INVAL);
	for (size_t i = 0; i < sizeof(ss); i++)
		assert_int_equal(((unsigned char *)&ss)[i], 0xa5);

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_peer_addr_of_an_outgoing_request_is_refused(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	/* its ID has a destination (UNIT_ADDR, set by rdma_resolve_addr() as in librdmacm) */
	struct rpma_conn_req *req = fx_req_active(peer, NULL);

	struct sockaddr_storage ss;
	memset(&ss, 0xa5, sizeof(ss));
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &ss), RPMA_E_INVAL);
	assert_int_equal(ss.ss_family, (sa_family_t)0xa5a5);

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_peer_addr_of_another_family_is_refused(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);

	/* AF_IB (a listener bound to an InfiniBand address), and no address at all */
	struct sockaddr ib = {.sa_family = AF_IB};
	struct rpma_conn_req *req_ib = req_from(ep, &ib);
	struct rpma_conn_req *req_none = req_from(ep, NULL);

	struct sockaddr_storage ss;
	memset(&ss, 0xa5, sizeof(ss));
	log_clear();
	assert_int_equal(rpma_conn_req_get_peer_addr(req_ib, &ss), RPMA_E_INVAL);
	assert_true(log_has("family 27", "neither AF_INET nor AF_INET6", NULL));
	assert_int_equal(rpma_conn_req_get_peer_addr(req_none, &ss), RPMA_E_INVAL);
	assert_true(log_has("family 0", NULL));
	assert_int_equal(ss.ss_family, (sa_family_t)0xa5a5);

	assert_int_equal(rpma_conn_req_delete(&req_ib), 0);
	assert_int_equal(rpma_conn_req_delete(&req_none), 0);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* min_rnr_timer 12 encodes 0.64 ms; the kernel CM leaves 0, which encodes 655.36 ms */
#define SHORT_RNR_TIMER 12

static void test_accept_shortens_the_rnr_nak_timer(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = fx_req_passive(ep, NULL, NULL, 0);
	log_clear();

	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	struct ibv_qp *qp = fx_qp(conn);

	/* one RTS -> RTS change of that one attribute, after the accept put the QP in RTS */
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 1);
	struct fake_modify_qp m = fake_last_modify_qp();
	assert_int_equal(m.qp_num, qp->qp_num);
	assert_int_equal(m.attr_mask, IBV_QP_MIN_RNR_TIMER);
	assert_int_equal(m.attr.min_rnr_timer, SHORT_RNR_TIMER);
	assert_int_equal(qp->state, IBV_QPS_RTS);
	assert_int_equal(fake_qp_min_rnr_timer(qp), SHORT_RNR_TIMER);
	assert_false(log_has("ibv_modify_qp", NULL));

	/* done at the accept: its ESTABLISHED changes nothing more */
	int evfd;
	assert_int_equal(rpma_conn_get_event_fd(conn, &evfd), 0);
	fake_cm_push_event(
		evfd, fake_cm_id_by_channel_fd(evfd), RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_ESTABLISHED);
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 1);
	assert_int_equal(fake_qp_min_rnr_timer(qp), SHORT_RNR_TIMER);

	assert_int_equal(rpma_conn_disconnect(conn), 0);
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_failed_rnr_timer_change_keeps_the_connection(void **state)
{
	(void)state;
	static const int errs[] = {EINVAL, EOPNOTSUPP, EIO};
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		struct rpma_peer *peer = fx_peer();
		struct rpma_ep *ep = fx_ep(peer);
		struct rpma_conn_req *req = fx_req_passive(ep, NULL, "x", 1);
		log_clear();

		fake_fail(FAKE_IBV_MODIFY_QP, 1, errs[i]);
		struct rpma_conn *conn = NULL;
		assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
		assert_null(req);
		assert_non_null(conn);

		/* a warning with the errno, and the connection as it was: accepted, not rejected */
		char errno_text[32];
		snprintf(errno_text, sizeof(errno_text), "(errno %d)", errs[i]);
		assert_true(log_has(
			"ibv_modify_qp(min_rnr_timer=12)", strerror(errs[i]), errno_text, NULL));
		assert_int_equal(log_last_level(), RPMA_LOG_LEVEL_WARNING);
		assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 1);
		assert_int_equal(fake_calls(FAKE_RDMA_ACCEPT), 1);
		assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 0);
		struct ibv_qp *qp = fx_qp(conn);
		assert_int_equal(fake_qp_min_rnr_timer(qp), 0);

		/* it works and goes away like any other; teardown finds nothing left */
		struct rpma_conn_private_data got = {NULL, 0};
		assert_int_equal(rpma_conn_get_private_data(conn, &got), 0);
		assert_int_equal(got.len, 1);
		assert_int_equal(rpma_conn_disconnect(conn), 0);
		assert_int_equal(rpma_conn_delete(&conn), 0);
		assert_int_equal(rpma_ep_shutdown(&ep), 0);
		assert_int_equal(rpma_peer_delete(&peer), 0);
		unit_assert_clean();
		fake_reset();
	}
}

static void test_iwarp_accept_leaves_the_rnr_timer_alone(void **state)
{
	(void)state;
	fake_set_transport(IBV_TRANSPORT_IWARP); /* no RNR NAK there */
	struct rpma_peer *peer = fx_peer();
	struct rpma_ep *ep = fx_ep(peer);
	struct rpma_conn_req *req = fx_req_passive(ep, NULL, NULL, 0);

	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_int_equal(fake_calls(FAKE_RDMA_ACCEPT), 1);
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 0);

	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_listen_rejects_bad_arguments),
		rpma_unit_test(test_listen_get_fd_and_shutdown),
		rpma_unit_test(test_get_fd_and_shutdown_reject_bad_arguments),
		rpma_unit_test(test_listen_provider_failures_release_everything),
		rpma_unit_test(test_listen_out_of_memory),
		rpma_unit_test(test_failed_shutdown_keeps_the_endpoint),
		rpma_unit_test(test_next_conn_req_rejects_bad_arguments),
		rpma_unit_test(test_no_request_waiting),
		rpma_unit_test(test_other_event_is_acknowledged_and_refused),
		rpma_unit_test(test_request_is_set_up_from_the_event),
		rpma_unit_test(test_request_without_private_data),
		rpma_unit_test(test_request_outlives_its_endpoint),
		rpma_unit_test(test_setup_failures_reject_the_request),
		rpma_unit_test(test_next_conn_req_out_of_memory),
		rpma_unit_test(test_accept_sends_librpma_parameters),
		rpma_unit_test(test_accept_failure_rejects_and_releases),
		rpma_unit_test(test_accept_out_of_memory_rejects),
		rpma_unit_test(test_rejecting_a_request_that_fails_to_reject),
		rpma_unit_test(test_peer_addr_of_an_ipv4_request),
		rpma_unit_test(test_peer_addr_of_an_ipv6_request),
		rpma_unit_test(test_peer_addr_rejects_null_arguments),
		rpma_unit_test(test_peer_addr_of_an_outgoing_request_is_refused),
		rpma_unit_test(test_peer_addr_of_another_family_is_refused),
		rpma_unit_test(test_accept_shortens_the_rnr_nak_timer),
		rpma_unit_test(test_failed_rnr_timer_change_keeps_the_connection),
		rpma_unit_test(test_iwarp_accept_leaves_the_rnr_timer_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
