// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_conn.c -- connections: events and their mapping, private data, getters, the shared
 * completion channel (rpma_conn_get_compl_fd, rpma_conn_wait), disconnect and delete
 *
 * (rpma_send, rpma_send_with_imm, rpma_recv and rpma_write are in test_messaging.c.)
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "unit.h"

#include "librpma_ext.h"

struct fixture {
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	int evfd;
	struct rdma_cm_id *id;
};

static void fixture_up(struct fixture *f, struct rpma_conn_cfg *cfg)
{
	f->peer = fx_peer();
	f->conn = fx_conn_active(f->peer, cfg);
	assert_int_equal(rpma_conn_get_event_fd(f->conn, &f->evfd), 0);
	f->id = fake_cm_id_by_channel_fd(f->evfd);
	assert_non_null(f->id);
}

static void fixture_down(struct fixture *f)
{
	assert_int_equal(rpma_conn_delete(&f->conn), 0);
	assert_null(f->conn);
	assert_int_equal(rpma_peer_delete(&f->peer), 0);
}

static void push_event(
	struct fixture *f, enum rdma_cm_event_type type, const void *pdata, uint8_t len)
{
	fake_cm_push_event(f->evfd, f->id, type, 0, pdata, len);
}

static void test_get_event_fd(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	int fd = -1;
	assert_int_equal(rpma_conn_get_event_fd(NULL, &fd), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_event_fd(f.conn, NULL), RPMA_E_INVAL);
	assert_int_equal(fd, -1);

	/* the connection's own channel: its ID's events, and readable when one waits */
	assert_ptr_equal(fake_cm_id_by_channel_fd(f.evfd)->qp, fx_qp(f.conn));
	struct pollfd pfd = {.fd = f.evfd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 0), 0);
	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	enum rpma_conn_event ev;
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	fixture_down(&f);
}

static void test_next_event_rejects_bad_arguments(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(NULL, &ev), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_next_event(f.conn, NULL), RPMA_E_INVAL);
	assert_int_equal(ev, RPMA_CONN_UNDEFINED);
	assert_int_equal(fake_calls(FAKE_RDMA_GET_CM_EVENT), 0);
	fixture_down(&f);
}

static void test_events_map_like_librpma(void **state)
{
	(void)state;
	static const struct {
		enum rdma_cm_event_type cm;
		enum rpma_conn_event rpma;
	} table[] = {
		{RDMA_CM_EVENT_ESTABLISHED, RPMA_CONN_ESTABLISHED},
		{RDMA_CM_EVENT_DISCONNECTED, RPMA_CONN_CLOSED},
		{RDMA_CM_EVENT_TIMEWAIT_EXIT, RPMA_CONN_CLOSED},
		{RDMA_CM_EVENT_CONNECT_ERROR, RPMA_CONN_LOST},
		{RDMA_CM_EVENT_DEVICE_REMOVAL, RPMA_CONN_LOST},
		{RDMA_CM_EVENT_REJECTED, RPMA_CONN_REJECTED},
		{RDMA_CM_EVENT_UNREACHABLE, RPMA_CONN_UNREACHABLE},
		/* beyond librpma: the resolution errors are unreachability too */
		{RDMA_CM_EVENT_ADDR_ERROR, RPMA_CONN_UNREACHABLE},
		{RDMA_CM_EVENT_ROUTE_ERROR, RPMA_CONN_UNREACHABLE},
	};
	struct fixture f;
	fixture_up(&f, NULL);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		push_event(&f, table[i].cm, NULL, 0);
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
		assert_int_equal(ev, table[i].rpma);
		assert_int_equal(fake_live(FAKE_CM_EVENT), 0); /* acknowledged */
	}
	assert_true(log_has("Connection established", "RDMA_CM_EVENT_ESTABLISHED", NULL));
	fixture_down(&f);
}

/* the status of the last event read: a REJECTED's reason tells a listener's reject from none */
static void test_event_status_is_the_last_events(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	int status = -1;
	assert_int_equal(rpma_conn_get_event_status(NULL, &status), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_event_status(f.conn, NULL), RPMA_E_INVAL);
	assert_int_equal(status, -1);
	assert_int_equal(rpma_conn_get_event_status(f.conn, &status), 0);
	assert_int_equal(status, 0); /* no event yet */
	static const int statuses[] = {28, 8, -ECONNREFUSED, 0};
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		fake_cm_push_event(f.evfd, f.id, RDMA_CM_EVENT_REJECTED, statuses[i], NULL, 0);
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
		assert_int_equal(ev, RPMA_CONN_REJECTED);
		assert_int_equal(rpma_conn_get_event_status(f.conn, &status), 0);
		assert_int_equal(status, statuses[i]);
	}
	fixture_down(&f);
}

static void test_other_events_are_unknown(void **state)
{
	(void)state;
	static const enum rdma_cm_event_type others[] = {
		RDMA_CM_EVENT_ADDR_RESOLVED,
		RDMA_CM_EVENT_ROUTE_RESOLVED,
		RDMA_CM_EVENT_CONNECT_REQUEST,
		RDMA_CM_EVENT_CONNECT_RESPONSE,
		RDMA_CM_EVENT_MULTICAST_JOIN,
		RDMA_CM_EVENT_MULTICAST_ERROR,
		RDMA_CM_EVENT_ADDR_CHANGE,
	};
	struct fixture f;
	fixture_up(&f, NULL);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		log_clear();
		push_event(&f, others[i], NULL, 0);
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		assert_int_equal(rpma_conn_next_event(f.conn, &ev), RPMA_E_UNKNOWN);
		assert_int_equal(ev, RPMA_CONN_UNDEFINED);
		assert_true(
			log_has("unexpected connection event", rdma_event_str(others[i]), NULL));
		assert_int_equal(fake_live(FAKE_CM_EVENT), 0);
	}
	fixture_down(&f);
}

static void test_no_event_waiting(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;

	fx_set_nonblock(f.evfd);
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), RPMA_E_NO_EVENT);
	fake_fail(FAKE_RDMA_GET_CM_EVENT, 1, ENODATA);
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), RPMA_E_NO_EVENT);
	assert_int_equal(ev, RPMA_CONN_UNDEFINED);
	assert_false(log_has("rdma_get_cm_event()", NULL));

	fake_fail(FAKE_RDMA_GET_CM_EVENT, 1, EBADF);
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), RPMA_E_PROVIDER);
	assert_true(log_has("rdma_get_cm_event()", strerror(EBADF), NULL));
	fixture_down(&f);
}

static void test_ack_failure_is_provider_error(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	push_event(&f, RDMA_CM_EVENT_DISCONNECTED, NULL, 0);
	fake_fail(FAKE_RDMA_ACK_CM_EVENT, 1, EINVAL);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), RPMA_E_PROVIDER);
	assert_true(
		log_has("rdma_ack_cm_event(RDMA_CM_EVENT_DISCONNECTED)", strerror(EINVAL), NULL));
	fixture_down(&f);
}

static void test_established_keeps_the_accept_private_data(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	uint8_t reply[FAKE_ACCEPT_PDATA_MAX];
	for (size_t i = 0; i < sizeof(reply); i++)
		reply[i] = (uint8_t)(i * 3);

	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, reply, sizeof(reply));
	enum rpma_conn_event ev;
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_ESTABLISHED);

	/* a copy: the event's memory is gone with the acknowledgement */
	struct rpma_conn_private_data pdata = {NULL, 0};
	assert_int_equal(rpma_conn_get_private_data(f.conn, &pdata), 0);
	assert_int_equal(pdata.len, sizeof(reply));
	assert_memory_equal(pdata.ptr, reply, sizeof(reply));

	/* a later event does not replace it */
	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, "other", 6);
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	struct rpma_conn_private_data again;
	assert_int_equal(rpma_conn_get_private_data(f.conn, &again), 0);
	assert_ptr_equal(again.ptr, pdata.ptr);
	assert_int_equal(again.len, sizeof(reply));

	/* events other than ESTABLISHED carry nothing the connection keeps */
	assert_int_equal(rpma_conn_get_private_data(NULL, &pdata), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_private_data(f.conn, NULL), RPMA_E_INVAL);
	fixture_down(&f);
}

static void test_established_without_private_data(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	push_event(&f, RDMA_CM_EVENT_DISCONNECTED, "ignored", 8);
	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	enum rpma_conn_event ev;
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	struct rpma_conn_private_data pdata = {(void *)1, 1};
	assert_int_equal(rpma_conn_get_private_data(f.conn, &pdata), 0);
	assert_null(pdata.ptr);
	assert_int_equal(pdata.len, 0);
	fixture_down(&f);
}

struct event_arg {
	struct fixture f;
	enum rpma_conn_event ev;
};

static void event_setup(void *p)
{
	struct event_arg *a = p;
	push_event(&a->f, RDMA_CM_EVENT_ESTABLISHED, "reply", 6);
}

static int event_op(void *p)
{
	struct event_arg *a = p;
	return rpma_conn_next_event(a->f.conn, &a->ev);
}

static void event_check_failed(void *p)
{
	struct event_arg *a = p;
	struct rpma_conn_private_data pdata;
	assert_int_equal(rpma_conn_get_private_data(a->f.conn, &pdata), 0);
	assert_null(pdata.ptr);
	assert_int_equal(fake_live(FAKE_CM_EVENT), 0); /* acknowledged anyway */
}

static void test_out_of_memory_keeping_private_data(void **state)
{
	(void)state;
	struct event_arg a;
	fixture_up(&a.f, NULL);
	struct alloc_sweep sweep = {
		.setup = event_setup,
		.op = event_op,
		.check_failed = event_check_failed,
	};
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 1);
	assert_int_equal(a.ev, RPMA_CONN_ESTABLISHED);
	fixture_down(&a.f);
}

/* min_rnr_timer 12 encodes 0.64 ms; the kernel CM leaves 0, which encodes 655.36 ms */
#define SHORT_RNR_TIMER 12

static void test_established_shortens_the_rnr_nak_timer(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	struct ibv_qp *qp = fx_qp(f.conn);
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 0);

	/* the CONNECT_RESPONSE put the QP in RTS with the kernel's 0: one RTS -> RTS change */
	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_ESTABLISHED);
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 1);
	struct fake_modify_qp m = fake_last_modify_qp();
	assert_int_equal(m.qp_num, qp->qp_num);
	assert_int_equal(m.attr_mask, IBV_QP_MIN_RNR_TIMER);
	assert_int_equal(m.attr.min_rnr_timer, SHORT_RNR_TIMER);
	assert_int_equal(qp->state, IBV_QPS_RTS);
	assert_int_equal(fake_qp_min_rnr_timer(qp), SHORT_RNR_TIMER);
	assert_false(log_has("ibv_modify_qp", NULL));

	/* once per connection: later events change nothing */
	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	push_event(&f, RDMA_CM_EVENT_DISCONNECTED, NULL, 0);
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_CLOSED);
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 1);
	assert_int_equal(fake_violations(), 0);
	fixture_down(&f);
}

static void test_no_rnr_timer_change_before_established(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	struct ibv_qp *qp = fx_qp(f.conn);

	/* a connection that never came up: its QP is not in RTS, nothing to change */
	push_event(&f, RDMA_CM_EVENT_REJECTED, NULL, 0);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_REJECTED);
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 0);
	assert_int_equal(qp->state, IBV_QPS_INIT);
	assert_int_equal(fake_violations(), 0);
	fixture_down(&f);
}

static void test_failed_rnr_timer_change_keeps_the_established_connection(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	struct ibv_qp *qp = fx_qp(f.conn);
	log_clear();

	/* a warning with the errno; the event is still ESTABLISHED, the QP still in RTS */
	fake_fail(FAKE_IBV_MODIFY_QP, 1, EIO);
	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_ESTABLISHED);
	assert_true(log_has("ibv_modify_qp(min_rnr_timer=12)", strerror(EIO), NULL));
	assert_int_equal(qp->state, IBV_QPS_RTS);
	assert_int_equal(fake_qp_min_rnr_timer(qp), 0);

	/* tried once: another event neither retries nor warns again */
	log_clear();
	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	assert_int_equal(fake_calls(FAKE_IBV_MODIFY_QP), 1);
	assert_false(log_has("ibv_modify_qp", NULL));
	fixture_down(&f);
}

static void test_getters(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	uint32_t qp_num = 0;
	struct rpma_cq *cq = NULL, *rcq = (struct rpma_cq *)1;

	assert_int_equal(rpma_conn_get_qp_num(NULL, &qp_num), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_qp_num(f.conn, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_cq(NULL, &cq), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_cq(f.conn, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_rcq(NULL, &rcq), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_rcq(f.conn, NULL), RPMA_E_INVAL);
	assert_int_equal(qp_num, 0);
	assert_null(cq);

	assert_int_equal(rpma_conn_get_qp_num(f.conn, &qp_num), 0);
	assert_int_equal(qp_num, f.id->qp->qp_num);
	assert_int_equal(rpma_conn_get_cq(f.conn, &cq), 0);
	assert_non_null(cq);
	assert_int_equal(rpma_conn_get_rcq(f.conn, &rcq), 0);
	assert_null(rcq); /* no receive CQ configured */

	int fd = -1;
	assert_int_equal(rpma_conn_get_compl_fd(f.conn, &fd), RPMA_E_NOT_SHARED_CHNL);
	assert_int_equal(rpma_conn_get_compl_fd(NULL, &fd), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_get_compl_fd(f.conn, NULL), RPMA_E_INVAL);
	assert_int_equal(fd, -1);
	fixture_down(&f);
}

/* ---- the shared completion channel ---------------------------------------------------- */

static void shared_up(struct fixture *f, struct rpma_cq **cq, struct rpma_cq **rcq)
{
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, 10, 10, true);
	fixture_up(f, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_conn_get_cq(f->conn, cq), 0);
	assert_int_equal(rpma_conn_get_rcq(f->conn, rcq), 0);
	assert_non_null(*rcq);
}

static void test_compl_fd_is_the_shared_channel(void **state)
{
	(void)state;
	struct fixture f;
	struct rpma_cq *cq, *rcq;
	shared_up(&f, &cq, &rcq);

	int fd = -1, cq_fd = -2, rcq_fd = -3;
	assert_int_equal(rpma_conn_get_compl_fd(f.conn, &fd), 0);
	assert_int_equal(rpma_cq_get_fd(cq, &cq_fd), 0);
	assert_int_equal(rpma_cq_get_fd(rcq, &rcq_fd), 0);
	assert_int_equal(fd, cq_fd);
	assert_int_equal(fd, rcq_fd);
	assert_ptr_equal(fake_cq_by_channel_fd(fd, 0), f.id->qp->send_cq);
	assert_ptr_equal(fake_cq_by_channel_fd(fd, 1), f.id->qp->recv_cq);
	fixture_down(&f);
}

static void test_wait_rejects_bad_arguments(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	struct rpma_cq *cq = NULL;
	bool is_rcq = true;
	assert_int_equal(rpma_conn_wait(NULL, 0, &cq, &is_rcq), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_wait(f.conn, 0, NULL, &is_rcq), RPMA_E_INVAL);
	/* not shared: the CQs have their own channels and rpma_cq_wait() */
	assert_int_equal(rpma_conn_wait(f.conn, 0, &cq, &is_rcq), RPMA_E_NOT_SHARED_CHNL);
	assert_null(cq);
	assert_true(is_rcq);
	assert_int_equal(fake_calls(FAKE_IBV_GET_CQ_EVENT), 0);
	fixture_down(&f);
}

static void test_wait_tells_which_cq(void **state)
{
	(void)state;
	struct fixture f;
	struct rpma_cq *cq, *rcq;
	shared_up(&f, &cq, &rcq);
	struct ibv_cq *ibv_cq = f.id->qp->send_cq, *ibv_rcq = f.id->qp->recv_cq;

	struct ibv_wc wc = fx_wc(1, IBV_WC_RECV, IBV_WC_SUCCESS);
	fake_cq_push_wc(ibv_rcq, &wc);
	struct rpma_cq *got = NULL;
	bool is_rcq = false;
	assert_int_equal(rpma_conn_wait(f.conn, RPMA_W_WAIT_FOR_COMPLETION, &got, &is_rcq), 0);
	assert_ptr_equal(got, rcq);
	assert_true(is_rcq);
	assert_int_equal(fake_cq_events_acked(ibv_rcq), 1);
	assert_true(fake_cq_armed(ibv_rcq));
	assert_int_equal(rpma_cq_get_wc(got, 1, &wc, NULL), 0);

	wc = fx_wc(2, IBV_WC_SEND, IBV_WC_SUCCESS);
	fake_cq_push_wc(ibv_cq, &wc);
	assert_int_equal(rpma_conn_wait(f.conn, 0, &got, &is_rcq), 0);
	assert_ptr_equal(got, cq);
	assert_false(is_rcq);
	assert_true(fake_cq_armed(ibv_cq));
	assert_int_equal(rpma_cq_get_wc(got, 1, &wc, NULL), 0);
	assert_int_equal(wc.wr_id, 2);

	/* is_rcq may be NULL */
	fake_cq_push_wc(ibv_cq, &wc);
	assert_int_equal(rpma_conn_wait(f.conn, 0, &got, NULL), 0);
	assert_ptr_equal(got, cq);
	assert_int_equal(rpma_cq_get_wc(got, 1, &wc, NULL), 0);
	fixture_down(&f);
}

static void test_wait_without_event_is_no_completion(void **state)
{
	(void)state;
	struct fixture f;
	struct rpma_cq *cq, *rcq;
	shared_up(&f, &cq, &rcq);
	int fd;
	assert_int_equal(rpma_conn_get_compl_fd(f.conn, &fd), 0);
	fx_set_nonblock(fd);

	struct rpma_cq *got = NULL;
	assert_int_equal(rpma_conn_wait(f.conn, 0, &got, NULL), RPMA_E_NO_COMPLETION);
	assert_null(got);
	assert_int_equal(log_last_level(), RPMA_LOG_LEVEL_DEBUG);
	fixture_down(&f);
}

static void test_wait_rearm_failure(void **state)
{
	(void)state;
	struct fixture f;
	struct rpma_cq *cq, *rcq;
	shared_up(&f, &cq, &rcq);
	struct ibv_wc wc = fx_wc(1, IBV_WC_SEND, IBV_WC_SUCCESS);
	fake_cq_push_wc(f.id->qp->send_cq, &wc);

	struct rpma_cq *got = cq;
	fake_fail(FAKE_IBV_REQ_NOTIFY_CQ, 1, EIO);
	assert_int_equal(rpma_conn_wait(f.conn, 0, &got, NULL), RPMA_E_PROVIDER);
	assert_null(got);
	assert_true(log_has("ibv_req_notify_cq()", strerror(EIO), NULL));
	assert_int_equal(fake_cq_events_acked(f.id->qp->send_cq), 1);
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	fixture_down(&f);
}

static void test_wait_event_of_a_foreign_cq(void **state)
{
	(void)state;
	struct fixture f;
	struct rpma_cq *cq, *rcq;
	shared_up(&f, &cq, &rcq);
	struct ibv_comp_channel *channel = f.id->qp->send_cq->channel;

	/* a CQ someone else put on the same channel */
	struct ibv_cq *foreign = ibv_create_cq(fake_ibv_context(), 1, NULL, channel, 0);
	assert_non_null(foreign);
	fake_channel_raise(channel, foreign);

	struct rpma_cq *got = cq;
	assert_int_equal(rpma_conn_wait(f.conn, 0, &got, NULL), RPMA_E_UNKNOWN);
	assert_ptr_equal(got, cq); /* untouched */
	assert_true(log_has("not the connection's", NULL));
	assert_int_equal(fake_cq_events_acked(foreign), 1); /* acknowledged all the same */
	assert_int_equal(ibv_destroy_cq(foreign), 0);
	fixture_down(&f);
}

/* ---- disconnect and delete --------------------------------------------------------------- */

static void test_disconnect(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	assert_int_equal(rpma_conn_disconnect(NULL), RPMA_E_INVAL);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 0);

	assert_int_equal(rpma_conn_disconnect(f.conn), 0);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 1);

	fake_fail(FAKE_RDMA_DISCONNECT, 1, EINVAL);
	assert_int_equal(rpma_conn_disconnect(f.conn), RPMA_E_PROVIDER);
	assert_true(log_has("rdma_disconnect()", strerror(EINVAL), NULL));
	fixture_down(&f);
}

static void test_delete_rejects_null(void **state)
{
	(void)state;
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_delete(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_delete(&conn), 0);
}

static void test_delete_releases_everything(void **state)
{
	(void)state;
	struct fixture f;
	struct rpma_cq *cq, *rcq;
	shared_up(&f, &cq, &rcq);
	push_event(&f, RDMA_CM_EVENT_ESTABLISHED, "reply", 6);
	enum rpma_conn_event ev;
	assert_int_equal(rpma_conn_next_event(f.conn, &ev), 0);
	/* an event not read yet does not hold the deletion up */
	push_event(&f, RDMA_CM_EVENT_DISCONNECTED, NULL, 0);
	fixture_down(&f); /* the teardown checks that nothing is left */
}

static void test_delete_failures_still_release_the_rest(void **state)
{
	(void)state;
	static const struct {
		enum fake_fn fn;
		unsigned int nth;
		const char *logged;
		int left_total; /* what failed, and the channel it still holds */
	} table[] = {
		{FAKE_IBV_DESTROY_CQ, 1, "ibv_destroy_cq()", 2},
		{FAKE_IBV_DESTROY_CQ, 2, "ibv_destroy_cq()", 2},
		{FAKE_IBV_DESTROY_COMP_CHANNEL, 1, "ibv_destroy_comp_channel()", 1},
		{FAKE_RDMA_DESTROY_ID, 1, "rdma_destroy_id()", 2},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct fixture f;
		struct rpma_cq *cq, *rcq;
		shared_up(&f, &cq, &rcq);
		long alloc_before = alloc_live();

		fake_fail(table[i].fn, table[i].nth, EIO);
		assert_int_equal(rpma_conn_delete(&f.conn), RPMA_E_PROVIDER);
		assert_null(f.conn);
		assert_true(log_has(table[i].logged, strerror(EIO), NULL));
		assert_true(alloc_live() < alloc_before);
		assert_int_equal(rpma_peer_delete(&f.peer), 0);
		assert_int_equal(fake_live_total(), table[i].left_total);
		assert_int_equal(fake_violations(), 0);
		fake_free_all();
		unit_assert_clean();
		fake_reset();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_get_event_fd),
		rpma_unit_test(test_next_event_rejects_bad_arguments),
		rpma_unit_test(test_events_map_like_librpma),
		rpma_unit_test(test_event_status_is_the_last_events),
		rpma_unit_test(test_other_events_are_unknown),
		rpma_unit_test(test_no_event_waiting),
		rpma_unit_test(test_ack_failure_is_provider_error),
		rpma_unit_test(test_established_keeps_the_accept_private_data),
		rpma_unit_test(test_established_without_private_data),
		rpma_unit_test(test_out_of_memory_keeping_private_data),
		rpma_unit_test(test_established_shortens_the_rnr_nak_timer),
		rpma_unit_test(test_no_rnr_timer_change_before_established),
		rpma_unit_test(test_failed_rnr_timer_change_keeps_the_established_connection),
		rpma_unit_test(test_getters),
		rpma_unit_test(test_compl_fd_is_the_shared_channel),
		rpma_unit_test(test_wait_rejects_bad_arguments),
		rpma_unit_test(test_wait_tells_which_cq),
		rpma_unit_test(test_wait_without_event_is_no_completion),
		rpma_unit_test(test_wait_rearm_failure),
		rpma_unit_test(test_wait_event_of_a_foreign_cq),
		rpma_unit_test(test_disconnect),
		rpma_unit_test(test_delete_rejects_null),
		rpma_unit_test(test_delete_releases_everything),
		rpma_unit_test(test_delete_failures_still_release_the_rest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
