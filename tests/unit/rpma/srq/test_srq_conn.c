// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_srq_conn.c -- connections on a shared receive queue: how a request with
 * rpma_conn_cfg_set_srq() builds its queue pair, where receive completions land (as in
 * librpma: the SRQ's receive CQ, else the connection's receive CQ, else its main CQ), the
 * configurations refused, and what the SRQ's life has to do with its connections'
 */
#include <errno.h>
#include <string.h>

#include "unit.h"

#define SIZE 1024
#define CTX ((void *)0xc0ffee)
#define NOT_TOUCHED_REQ ((struct rpma_conn_req *)0x1234)

static char Buf[SIZE];

static struct rpma_srq *new_srq(struct rpma_peer *peer, uint32_t rq_size, uint32_t rcq_size)
{
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_new(&cfg), 0);
	assert_int_equal(rpma_srq_cfg_set_rq_size(cfg, rq_size), 0);
	assert_int_equal(rpma_srq_cfg_set_rcq_size(cfg, rcq_size), 0);
	struct rpma_srq *srq = NULL;
	assert_int_equal(rpma_srq_new(peer, cfg, &srq), 0);
	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
	return srq;
}

/* a connection configuration on srq with the given receive CQ size and channel sharing */
static struct rpma_conn_cfg *srq_cfg(struct rpma_srq *srq, uint32_t rcq_size, bool shared)
{
	struct rpma_conn_cfg *cfg = fx_cfg(10, rcq_size, 10, 10, shared);
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, srq), 0);
	return cfg;
}

static struct rpma_cq *srq_rcq(const struct rpma_srq *srq)
{
	struct rpma_cq *rcq = NULL;
	assert_int_equal(rpma_srq_get_rcq(srq, &rcq), 0);
	return rcq;
}

/* reap exactly one completion from cq, which must have one */
static struct ibv_wc reap_one(struct rpma_cq *cq)
{
	struct ibv_wc wc;
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, &got), 0);
	assert_int_equal(got, 1);
	return wc;
}

static void assert_empty(struct rpma_cq *cq)
{
	struct ibv_wc wc;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, NULL), RPMA_E_NO_COMPLETION);
}

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

static uint32_t qp_num_of(const struct rpma_conn *conn)
{
	uint32_t qp_num = 0;
	assert_int_equal(rpma_conn_get_qp_num(conn, &qp_num), 0);
	return qp_num;
}

static void conn_down(struct rpma_conn **conn)
{
	assert_int_equal(rpma_conn_disconnect(*conn), 0);
	assert_int_equal(rpma_conn_delete(conn), 0);
}

/*
 * an SRQ with a receive CQ: the QP is attached to the SRQ with no receive queue of its own,
 * receives complete on the SRQ's CQ (no receive CQ of the connection even when rcq_size asks
 * for one, as librpma), sends on the connection's main CQ
 */
static void test_srq_with_receive_cq_takes_the_receives(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 5, false);
	struct rpma_conn *conn = fx_conn_active(peer, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);

	struct ibv_qp *qp = fx_qp(conn);
	struct ibv_qp_init_attr attr = fake_qp_attr(qp);
	assert_ptr_equal(attr.srq, fake_srq_nth(0));
	assert_int_equal(attr.cap.max_recv_wr, 0);
	assert_int_equal(attr.cap.max_send_wr, 10);
	assert_ptr_not_equal(attr.send_cq, attr.recv_cq);
	assert_int_equal(fake_live(FAKE_CQ), 2); /* the SRQ's and the main one */

	struct rpma_cq *rcq = (struct rpma_cq *)1;
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_null(rcq);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);

	struct rpma_mr_local *mr;
	assert_int_equal(rpma_mr_reg(peer, Buf, SIZE, RPMA_MR_USAGE_RECV, &mr), 0);
	assert_int_equal(rpma_srq_recv(srq, mr, 0, SIZE, CTX), 0);
	assert_true(fake_srq_deliver(qp, 5, false, 0));

	assert_int_equal(rpma_cq_wait(srq_rcq(srq)), 0);
	struct ibv_wc wc = reap_one(srq_rcq(srq));
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.wr_id, (uint64_t)(uintptr_t)CTX);
	assert_int_equal(wc.byte_len, 5);
	assert_int_equal(wc.qp_num, qp_num_of(conn));
	assert_empty(cq);

	/* the connection goes, the SRQ and its CQ stay */
	conn_down(&conn);
	assert_int_equal(fake_live(FAKE_SRQ), 1);
	assert_int_equal(fake_live(FAKE_CQ), 1);
	assert_empty(srq_rcq(srq));

	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* an SRQ without a receive CQ and rcq_size 0: receives complete on the main CQ */
static void test_srq_without_receive_cq_uses_the_main_cq(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 0);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, false);
	struct rpma_conn *conn = fx_conn_active(peer, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);

	struct ibv_qp *qp = fx_qp(conn);
	struct ibv_qp_init_attr attr = fake_qp_attr(qp);
	assert_ptr_equal(attr.send_cq, attr.recv_cq);
	assert_int_equal(fake_live(FAKE_CQ), 1);

	assert_int_equal(rpma_srq_recv(srq, NULL, 0, 0, CTX), 0);
	assert_true(fake_srq_deliver(qp, 0, true, 0x01020304));
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct ibv_wc wc = reap_one(cq);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.byte_len, 0);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(wc.imm_data, 0x01020304);

	conn_down(&conn);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* an SRQ without a receive CQ and rcq_size > 0: the connection's own receive CQ */
static void test_srq_without_receive_cq_uses_the_connections(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 0);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 7, false);
	struct rpma_conn *conn = fx_conn_active(peer, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);

	struct rpma_cq *rcq = NULL, *cq = NULL;
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_non_null(rcq);
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct ibv_qp *qp = fx_qp(conn);
	assert_int_equal(fake_qp_attr(qp).recv_cq->cqe, 7);

	assert_int_equal(rpma_srq_recv(srq, NULL, 0, 0, CTX), 0);
	assert_true(fake_srq_deliver(qp, 0, false, 0));
	assert_int_equal(rpma_cq_wait(rcq), 0);
	assert_int_equal(reap_one(rcq).wr_id, (uint64_t)(uintptr_t)CTX);
	assert_empty(cq);

	conn_down(&conn);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/*
 * ... and with a shared completion channel: both CQs of the connection on one channel, and
 * rpma_conn_wait() tells the receive CQ apart
 */
static void test_srq_without_receive_cq_and_shared_channel(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 0);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 7, true);
	struct rpma_conn *conn = fx_conn_active(peer, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 1);

	assert_int_equal(rpma_srq_recv(srq, NULL, 0, 0, CTX), 0);
	assert_true(fake_srq_deliver(fx_qp(conn), 0, false, 0));
	struct rpma_cq *cq = NULL;
	bool is_rcq = false;
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, &is_rcq), 0);
	assert_true(is_rcq);
	assert_int_equal(reap_one(cq).opcode, IBV_WC_RECV);

	conn_down(&conn);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/*
 * librpma: "connection shared completion channel cannot be used when the shared RQ has its
 * own RCQ" -- RPMA_E_INVAL from rpma_conn_req_new(), logged, nothing made
 */
static void test_shared_channel_with_srq_receive_cq_is_refused(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, true);
	int before = fake_live_total();

	struct rpma_conn_req *req = NOT_TOUCHED_REQ;
	assert_int_equal(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), RPMA_E_INVAL);
	assert_ptr_equal(req, NOT_TOUCHED_REQ);
	assert_true(log_has("shared completion channel", "shared RQ", "receive CQ", NULL));
	assert_int_equal(fake_live_total(), before);
	assert_int_equal(fake_calls(FAKE_RDMA_CREATE_QP), 0);

	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* the same for an incoming request: refused, and the request rejected so the peer knows */
static void test_incoming_request_refused_is_rejected(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_peer *other = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_srq *foreign = new_srq(other, 10, 0);
	struct rpma_ep *ep = fx_ep(peer);
	int fd;
	assert_int_equal(rpma_ep_get_fd(ep, &fd), 0);

	struct rpma_conn_cfg *shared = srq_cfg(srq, 0, true);
	struct rpma_conn_cfg *wrong_peer = srq_cfg(foreign, 0, false);
	struct rpma_conn_cfg *cfgs[] = {shared, wrong_peer};
	for (size_t i = 0; i < 2; i++) {
		unsigned int rejects = fake_calls(FAKE_RDMA_REJECT);
		assert_non_null(fake_cm_push_connect_request(fd, NULL, 0));
		struct rpma_conn_req *req = NOT_TOUCHED_REQ;
		assert_int_equal(rpma_ep_next_conn_req(ep, cfgs[i], &req), RPMA_E_INVAL);
		assert_ptr_equal(req, NOT_TOUCHED_REQ);
		assert_int_equal(fake_calls(FAKE_RDMA_REJECT), rejects + 1);
		assert_int_equal(fake_live(FAKE_QP), 0);
		assert_int_equal(fake_live(FAKE_CM_ID), 1); /* the listening one */
	}

	/* and a good configuration on the same endpoint works */
	struct rpma_conn_cfg *good = srq_cfg(srq, 0, false);
	struct rpma_conn_req *req = fx_req_passive(ep, good, NULL, 0);
	assert_ptr_equal(fake_qp_attr(only_qp()).srq, fake_srq_nth(0));
	assert_int_equal(rpma_conn_req_delete(&req), 0);

	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_conn_cfg_delete(&shared), 0);
	assert_int_equal(rpma_conn_cfg_delete(&wrong_peer), 0);
	assert_int_equal(rpma_conn_cfg_delete(&good), 0);
	assert_int_equal(rpma_srq_delete(&foreign), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&other), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* beyond librpma: an SRQ of another peer (another protection domain) is refused, logged */
static void test_srq_of_another_peer_is_refused(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_peer *other = fx_peer();
	struct rpma_srq *foreign = new_srq(other, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(foreign, 0, false);

	struct rpma_conn_req *req = NOT_TOUCHED_REQ;
	assert_int_equal(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), RPMA_E_INVAL);
	assert_ptr_equal(req, NOT_TOUCHED_REQ);
	assert_true(log_has("shared RQ was made with another peer", NULL));
	assert_int_equal(fake_calls(FAKE_RDMA_CREATE_QP), 0);
	assert_int_equal(fake_live(FAKE_CM_ID), 0);

	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_srq_delete(&foreign), 0);
	assert_int_equal(rpma_peer_delete(&other), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/*
 * several connections, outgoing and incoming, on one SRQ: every message takes one receive of
 * the pool whichever connection it arrives on, and every completion lands on the one receive
 * CQ with the number of the connection it arrived on
 */
static void test_several_connections_share_the_receives(void **state)
{
	(void)state;
	enum { N_CONNS = 4, N_MSGS = 3 };
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, N_CONNS * N_MSGS, 64);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, false);
	struct rpma_ep *ep = fx_ep(peer);

	struct rpma_conn *conns[N_CONNS];
	for (int c = 0; c < N_CONNS; c++) {
		if (c % 2 == 0) {
			conns[c] = fx_conn_active(peer, cfg);
		} else {
			struct rpma_conn_req *req = fx_req_passive(ep, cfg, NULL, 0);
			assert_int_equal(rpma_conn_req_connect(&req, NULL, &conns[c]), 0);
		}
		assert_ptr_equal(fake_qp_attr(fx_qp(conns[c])).srq, fake_srq_nth(0));
	}

	struct rpma_mr_local *mr;
	assert_int_equal(rpma_mr_reg(peer, Buf, SIZE, RPMA_MR_USAGE_RECV, &mr), 0);
	const size_t slot = SIZE / (N_CONNS * N_MSGS);
	for (size_t i = 0; i < N_CONNS * N_MSGS; i++)
		assert_int_equal(
			rpma_srq_recv(srq, mr, i * slot, slot, (void *)(uintptr_t)(i + 1)), 0);
	assert_int_equal(fake_srq_recv_count(fake_srq_nth(0)), N_CONNS * N_MSGS);

	/* messages interleave: connection 0, 1, 2, 3, 0, 1, ... */
	for (int m = 0; m < N_MSGS; m++)
		for (int c = 0; c < N_CONNS; c++)
			assert_true(fake_srq_deliver(fx_qp(conns[c]), (uint32_t)(c + 1), false, 0));
	assert_int_equal(fake_srq_recv_count(fake_srq_nth(0)), 0);

	/* the pool is empty: the next message finds no receive (its sender is told RNR) */
	assert_false(fake_srq_deliver(fx_qp(conns[0]), 1, false, 0));

	struct ibv_wc wc[N_CONNS * N_MSGS];
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(srq_rcq(srq), N_CONNS * N_MSGS, wc, &got), 0);
	assert_int_equal(got, N_CONNS * N_MSGS);
	bool seen[N_CONNS * N_MSGS] = {false};
	for (int i = 0; i < got; i++) {
		int c = i % N_CONNS;
		assert_int_equal(wc[i].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[i].qp_num, qp_num_of(conns[c]));
		assert_int_equal(wc[i].byte_len, (uint32_t)(c + 1));
		assert_true(wc[i].wr_id >= 1 && wc[i].wr_id <= N_CONNS * N_MSGS);
		assert_false(seen[wc[i].wr_id - 1]); /* each receive used once */
		seen[wc[i].wr_id - 1] = true;
	}

	/* a re-posted receive takes the message that waited */
	assert_int_equal(rpma_srq_recv(srq, mr, 0, slot, CTX), 0);
	assert_true(fake_srq_deliver(fx_qp(conns[0]), 1, false, 0));
	assert_int_equal(reap_one(srq_rcq(srq)).wr_id, (uint64_t)(uintptr_t)CTX);

	for (int c = 0; c < N_CONNS; c++)
		conn_down(&conns[c]);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* a 0-byte message takes a receive with no SGE; a longer one would not fit it */
static void test_zero_byte_message_through_the_srq(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, false);
	struct rpma_conn *conn = fx_conn_active(peer, cfg);

	assert_int_equal(rpma_srq_recv(srq, NULL, 0, 0, (void *)1), 0);
	assert_int_equal(rpma_srq_recv(srq, NULL, 0, 0, (void *)2), 0);
	assert_true(fake_srq_deliver(fx_qp(conn), 0, false, 0));
	assert_true(fake_srq_deliver(fx_qp(conn), 1, false, 0));
	struct ibv_wc wc = reap_one(srq_rcq(srq));
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 0);
	assert_int_equal(wc.wr_id, 1);
	wc = reap_one(srq_rcq(srq));
	assert_int_equal(wc.status, IBV_WC_LOC_LEN_ERR);
	assert_int_equal(wc.wr_id, 2);

	conn_down(&conn);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* beyond librpma: rpma_recv() and rpma_conn_req_recv() on an SRQ connection say what to use */
static void test_connection_receives_go_through_the_srq(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, false);
	struct rpma_mr_local *mr;
	assert_int_equal(rpma_mr_reg(peer, Buf, SIZE, RPMA_MR_USAGE_RECV, &mr), 0);

	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	assert_int_equal(rpma_conn_req_recv(req, mr, 0, 8, CTX), RPMA_E_INVAL);
	assert_true(log_has("shared RQ", "rpma_srq_recv()", NULL));
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	log_clear();
	assert_int_equal(rpma_recv(conn, mr, 0, 8, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_recv(conn, NULL, 0, 0, CTX), RPMA_E_INVAL);
	assert_true(log_has("shared RQ", "rpma_srq_recv()", NULL));
	assert_int_equal(fake_calls(FAKE_IBV_POST_RECV), 0);

	/* sending is the connection's own business */
	struct rpma_mr_local *src;
	assert_int_equal(rpma_mr_reg(peer, Buf, SIZE, RPMA_MR_USAGE_SEND, &src), 0);
	assert_int_equal(rpma_send(conn, src, 0, 8, RPMA_F_COMPLETION_ALWAYS, CTX), 0);
	assert_int_equal(fake_send_count(fx_qp(conn)), 1);

	conn_down(&conn);
	assert_int_equal(rpma_mr_dereg(&src), 0);
	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/*
 * the SRQ outlives its connections: deleting it while one is alive is the provider's EBUSY,
 * logged; beyond librpma it is kept so the delete can be repeated after the connection went
 */
static void test_srq_delete_while_a_connection_uses_it(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, false);
	struct rpma_conn *conn = fx_conn_active(peer, cfg);
	struct rpma_srq *kept = srq;

	assert_int_equal(rpma_srq_delete(&srq), RPMA_E_PROVIDER);
	assert_ptr_equal(srq, kept);
	assert_true(log_has("ibv_destroy_srq()", strerror(EBUSY), NULL));
	assert_int_equal(fake_live(FAKE_SRQ), 1);
	assert_int_equal(fake_live(FAKE_CQ), 2); /* the SRQ's receive CQ was not touched */

	/* the connection still works on it */
	assert_int_equal(rpma_srq_recv(srq, NULL, 0, 0, CTX), 0);
	assert_true(fake_srq_deliver(fx_qp(conn), 0, false, 0));
	assert_int_equal(reap_one(srq_rcq(srq)).wr_id, (uint64_t)(uintptr_t)CTX);

	conn_down(&conn);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_null(srq);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* an abandoned request on an SRQ leaves the SRQ and its receive CQ alone */
static void test_request_delete_leaves_the_srq(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, false);
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(fake_live(FAKE_SRQ), 1);
	assert_int_equal(fake_live(FAKE_CQ), 1);
	assert_int_equal(fake_violations(), 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
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

/* out of memory at every allocation of a request on an SRQ: the request and its main CQ only */
static void test_request_on_srq_out_of_memory(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct new_arg a = {peer, srq_cfg(srq, 10, false), NULL};
	struct alloc_sweep sweep = {.op = new_req, .undo = delete_req};
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 2);
	assert_int_equal(rpma_conn_cfg_delete(&a.cfg), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* the QP's creation failing on an SRQ: logged as such, and nothing left but the SRQ */
static void test_create_qp_failure_on_srq(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, false);
	int before = fake_live_total();

	fake_fail(FAKE_RDMA_CREATE_QP, 1, ENOMEM);
	struct rpma_conn_req *req = NOT_TOUCHED_REQ;
	assert_int_equal(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), RPMA_E_PROVIDER);
	assert_ptr_equal(req, NOT_TOUCHED_REQ);
	assert_true(log_has("rdma_create_qp(max_send_wr=10, max_recv_wr=0", "with a shared RQ",
		strerror(ENOMEM), NULL));
	assert_int_equal(fake_live_total(), before);

	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* the configuration points at the SRQ, it does not copy it: setting NULL detaches it */
static void test_configuration_without_srq_again(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_conn_cfg *cfg = srq_cfg(srq, 0, false);
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, NULL), 0);
	struct rpma_conn_req *req = fx_req_active(peer, cfg);
	struct ibv_qp_init_attr attr = fake_qp_attr(only_qp());
	assert_null(attr.srq);
	assert_int_equal(attr.cap.max_recv_wr, 10);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_srq_with_receive_cq_takes_the_receives),
		rpma_unit_test(test_srq_without_receive_cq_uses_the_main_cq),
		rpma_unit_test(test_srq_without_receive_cq_uses_the_connections),
		rpma_unit_test(test_srq_without_receive_cq_and_shared_channel),
		rpma_unit_test(test_shared_channel_with_srq_receive_cq_is_refused),
		rpma_unit_test(test_incoming_request_refused_is_rejected),
		rpma_unit_test(test_srq_of_another_peer_is_refused),
		rpma_unit_test(test_several_connections_share_the_receives),
		rpma_unit_test(test_zero_byte_message_through_the_srq),
		rpma_unit_test(test_connection_receives_go_through_the_srq),
		rpma_unit_test(test_srq_delete_while_a_connection_uses_it),
		rpma_unit_test(test_request_delete_leaves_the_srq),
		rpma_unit_test(test_request_on_srq_out_of_memory),
		rpma_unit_test(test_create_qp_failure_on_srq),
		rpma_unit_test(test_configuration_without_srq_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
