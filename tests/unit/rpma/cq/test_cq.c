// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cq.c -- rpma_cq_get_fd(), rpma_cq_wait(), rpma_cq_get_wc() on a connection's CQs
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "unit.h"

#include <librpma_ext.h>

struct fixture {
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpma_cq *cq, *rcq;
	struct ibv_cq *ibv_cq, *ibv_rcq;
};

/* a connection with cfg (NULL: defaults) and its CQs, rpma and verbs */
static void fixture_up(struct fixture *f, struct rpma_conn_cfg *cfg)
{
	f->peer = fx_peer();
	f->conn = fx_conn_active(f->peer, cfg);
	assert_int_equal(rpma_conn_get_cq(f->conn, &f->cq), 0);
	assert_int_equal(rpma_conn_get_rcq(f->conn, &f->rcq), 0);
	struct ibv_qp *qp = fx_qp(f->conn);
	f->ibv_cq = qp->send_cq;
	f->ibv_rcq = qp->recv_cq;
}

static void fixture_down(struct fixture *f)
{
	assert_int_equal(rpma_conn_delete(&f->conn), 0);
	assert_int_equal(rpma_peer_delete(&f->peer), 0);
}

static void push(struct ibv_cq *cq, uint64_t wr_id)
{
	struct ibv_wc wc = fx_wc(wr_id, IBV_WC_SEND, IBV_WC_SUCCESS);
	fake_cq_push_wc(cq, &wc);
}

static void test_get_fd(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	int fd = -1;

	assert_int_equal(rpma_cq_get_fd(NULL, &fd), RPMA_E_INVAL);
	assert_int_equal(rpma_cq_get_fd(f.cq, NULL), RPMA_E_INVAL);
	assert_int_equal(fd, -1);

	assert_int_equal(rpma_cq_get_fd(f.cq, &fd), 0);
	assert_ptr_equal(fake_cq_by_channel_fd(fd, 0), f.ibv_cq);
	assert_null(fake_cq_by_channel_fd(fd, 1)); /* its own channel */
	fixture_down(&f);
}

static void test_wait_and_get_wc_reject_bad_arguments(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	struct ibv_wc wc[2];
	int got = 42;

	assert_int_equal(rpma_cq_wait(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_cq_get_wc(NULL, 1, wc, &got), RPMA_E_INVAL);
	assert_int_equal(rpma_cq_get_wc(f.cq, 1, NULL, &got), RPMA_E_INVAL);
	assert_int_equal(rpma_cq_get_wc(f.cq, 0, wc, &got), RPMA_E_INVAL);
	assert_int_equal(rpma_cq_get_wc(f.cq, -1, wc, &got), RPMA_E_INVAL);
	assert_int_equal(rpma_cq_get_wc(f.cq, 2, wc, NULL), RPMA_E_INVAL);
	assert_int_equal(got, 42);
	assert_int_equal(fake_calls(FAKE_IBV_POLL_CQ), 0);
	fixture_down(&f);
}

static void test_cq_is_armed_at_creation(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	assert_true(fake_cq_armed(f.ibv_cq));

	/* a completion before the first wait raises the event the wait then gets */
	push(f.ibv_cq, 7);
	assert_false(fake_cq_armed(f.ibv_cq));
	assert_int_equal(rpma_cq_wait(f.cq), 0);
	assert_int_equal(fake_cq_events_got(f.ibv_cq), 1);
	assert_int_equal(fake_cq_events_acked(f.ibv_cq), 1);
	assert_true(fake_cq_armed(f.ibv_cq)); /* re-armed */

	struct ibv_wc wc;
	assert_int_equal(rpma_cq_get_wc(f.cq, 1, &wc, NULL), 0);
	assert_int_equal(wc.wr_id, 7);
	fixture_down(&f);
}

static void test_fd_works_with_poll_and_epoll(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	int fd;
	assert_int_equal(rpma_cq_get_fd(f.cq, &fd), 0);
	fx_set_nonblock(fd);

	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 0), 0);

	int ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 99};
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	assert_int_equal(epoll_wait(ep, &ev, 1, 0), 0);

	push(f.ibv_cq, 1);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_true(pfd.revents & POLLIN);
	assert_int_equal(epoll_wait(ep, &ev, 1, 0), 1);
	assert_int_equal(ev.data.u64, 99);

	assert_int_equal(rpma_cq_wait(f.cq), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0); /* consumed */
	close(ep);

	struct ibv_wc wc;
	assert_int_equal(rpma_cq_get_wc(f.cq, 1, &wc, NULL), 0);
	fixture_down(&f);
}

static void test_wait_without_event_on_nonblocking_fd(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	int fd;
	assert_int_equal(rpma_cq_get_fd(f.cq, &fd), 0);
	fx_set_nonblock(fd);

	assert_int_equal(rpma_cq_wait(f.cq), RPMA_E_NO_COMPLETION);
	/* not a failure: nothing at error level */
	assert_true(log_has("ibv_get_cq_event()", strerror(EAGAIN), NULL));
	assert_int_equal(log_last_level(), RPMA_LOG_LEVEL_DEBUG);
	assert_int_equal(fake_calls(FAKE_IBV_ACK_CQ_EVENTS), 0);
	fixture_down(&f);
}

static void test_interrupted_wait_is_no_completion(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	fake_fail(FAKE_IBV_GET_CQ_EVENT, 1, EINTR);
	assert_int_equal(rpma_cq_wait(f.cq), RPMA_E_NO_COMPLETION);
	fixture_down(&f);
}

static void test_rearm_failure_is_provider_error(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	push(f.ibv_cq, 1);
	fake_fail(FAKE_IBV_REQ_NOTIFY_CQ, 1, EIO);
	assert_int_equal(rpma_cq_wait(f.cq), RPMA_E_PROVIDER);
	assert_true(log_has("ibv_req_notify_cq()", strerror(EIO), NULL));
	/* the event was acknowledged all the same (else destroying the CQ would hang) */
	assert_int_equal(fake_cq_events_acked(f.ibv_cq), 1);

	struct ibv_wc wc;
	assert_int_equal(rpma_cq_get_wc(f.cq, 1, &wc, NULL), 0);
	fixture_down(&f);
}

static void test_spurious_wake_up_is_no_completion(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	fake_channel_raise(f.ibv_cq->channel, f.ibv_cq);
	assert_int_equal(rpma_cq_wait(f.cq), 0);

	struct ibv_wc wc;
	int got = 5;
	assert_int_equal(rpma_cq_get_wc(f.cq, 1, &wc, &got), RPMA_E_NO_COMPLETION);
	assert_int_equal(got, 5);
	fixture_down(&f);
}

static void test_get_wc_reaps_up_to_num_entries(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	for (uint64_t i = 1; i <= 3; i++)
		push(f.ibv_cq, i);

	struct ibv_wc wc[4];
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(f.cq, 2, wc, &got), 0);
	assert_int_equal(got, 2);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(rpma_cq_get_wc(f.cq, 4, wc, &got), 0);
	assert_int_equal(got, 1);
	assert_int_equal(wc[0].wr_id, 3);
	assert_int_equal(rpma_cq_get_wc(f.cq, 4, wc, &got), RPMA_E_NO_COMPLETION);

	/* one event stood for all three */
	assert_int_equal(rpma_cq_wait(f.cq), 0);
	fixture_down(&f);
}

static void test_get_wc_passes_failed_completions_on(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	struct ibv_wc in = fx_wc(9, IBV_WC_SEND, IBV_WC_RETRY_EXC_ERR);
	in.vendor_err = 0x81;
	fake_cq_push_wc(f.ibv_cq, &in);

	struct ibv_wc out;
	assert_int_equal(rpma_cq_get_wc(f.cq, 1, &out, NULL), 0);
	assert_int_equal(out.wr_id, 9);
	assert_int_equal(out.status, IBV_WC_RETRY_EXC_ERR);
	assert_int_equal(out.vendor_err, 0x81);
	assert_int_equal(rpma_cq_wait(f.cq), 0);
	fixture_down(&f);
}

static void test_poll_failure_is_provider_error(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	struct ibv_wc wc;
	int got = 5;
	fake_fail(FAKE_IBV_POLL_CQ, 1, -1);
	assert_int_equal(rpma_cq_get_wc(f.cq, 1, &wc, &got), RPMA_E_PROVIDER);
	assert_true(log_has("ibv_poll_cq(num_entries=1) failed with -1", NULL));
	assert_int_equal(got, 5);
	fixture_down(&f);
}

static void test_poll_returning_too_many_is_unknown(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	struct ibv_wc wc[2];
	int got = 5;
	fake_fail(FAKE_IBV_POLL_CQ, 1, 3);
	assert_int_equal(rpma_cq_get_wc(f.cq, 2, wc, &got), RPMA_E_UNKNOWN);
	assert_true(log_has("returned 3 completions", NULL));
	assert_int_equal(got, 5);
	fixture_down(&f);
}

static void test_receive_cq_is_separate(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, 10, 10, false);
	struct fixture f;
	fixture_up(&f, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_non_null(f.rcq);
	assert_ptr_not_equal(f.ibv_cq, f.ibv_rcq);

	int fd, rfd;
	assert_int_equal(rpma_cq_get_fd(f.cq, &fd), 0);
	assert_int_equal(rpma_cq_get_fd(f.rcq, &rfd), 0);
	assert_int_not_equal(fd, rfd);
	assert_true(fake_cq_armed(f.ibv_rcq));

	struct ibv_wc wc = fx_wc(5, IBV_WC_RECV, IBV_WC_SUCCESS);
	fake_cq_push_wc(f.ibv_rcq, &wc);
	fx_set_nonblock(fd);
	assert_int_equal(rpma_cq_wait(f.cq), RPMA_E_NO_COMPLETION);
	assert_int_equal(rpma_cq_get_wc(f.cq, 1, &wc, NULL), RPMA_E_NO_COMPLETION);
	assert_int_equal(rpma_cq_wait(f.rcq), 0);
	assert_int_equal(rpma_cq_get_wc(f.rcq, 1, &wc, NULL), 0);
	assert_int_equal(wc.wr_id, 5);
	fixture_down(&f);
}

static void test_wait_on_shared_channel_is_refused(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, 10, 10, true);
	struct fixture f;
	fixture_up(&f, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);

	assert_int_equal(rpma_cq_wait(f.cq), RPMA_E_SHARED_CHANNEL);
	assert_int_equal(rpma_cq_wait(f.rcq), RPMA_E_SHARED_CHANNEL);
	assert_int_equal(fake_calls(FAKE_IBV_GET_CQ_EVENT), 0);

	/* both CQs report to the one channel */
	int fd, rfd;
	assert_int_equal(rpma_cq_get_fd(f.cq, &fd), 0);
	assert_int_equal(rpma_cq_get_fd(f.rcq, &rfd), 0);
	assert_int_equal(fd, rfd);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 1);
	fixture_down(&f);
}

/* a CQ's own channel that fails to go: reported, and nothing else is kept */
static void test_channel_destroy_failure_is_reported(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	fake_fail(FAKE_IBV_DESTROY_COMP_CHANNEL, 1, EIO);
	assert_int_equal(rpma_conn_delete(&f.conn), RPMA_E_PROVIDER);
	assert_null(f.conn);
	assert_true(log_has("ibv_destroy_comp_channel()", strerror(EIO), NULL));
	assert_int_equal(rpma_peer_delete(&f.peer), 0);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 1);
	assert_int_equal(fake_live_total(), 1);
	fake_free_all();
}

/* rpma_cq_take_event (librpma_ext.h): the event taken and acknowledged, the CQ left unarmed */
static void test_take_event_leaves_the_cq_unarmed(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	int fd;
	assert_int_equal(rpma_cq_get_fd(f.cq, &fd), 0);
	fx_set_nonblock(fd);
	assert_int_equal(rpma_cq_take_event(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_cq_take_event(f.cq), RPMA_E_NO_COMPLETION);

	push(f.ibv_cq, 1);
	unsigned arms = fake_calls(FAKE_IBV_REQ_NOTIFY_CQ);
	assert_int_equal(rpma_cq_take_event(f.cq), 0);
	assert_int_equal(fake_cq_events_acked(f.ibv_cq), 1);
	assert_false(fake_cq_armed(f.ibv_cq));
	assert_int_equal(fake_calls(FAKE_IBV_REQ_NOTIFY_CQ), arms);

	/* unarmed: the next completion raises no event */
	push(f.ibv_cq, 2);
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(rpma_cq_take_event(f.cq), RPMA_E_NO_COMPLETION);

	/* armed again: the one after does */
	assert_int_equal(rpma_cq_arm(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_cq_arm(f.cq), 0);
	assert_true(fake_cq_armed(f.ibv_cq));
	push(f.ibv_cq, 3);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(rpma_cq_take_event(f.cq), 0);

	struct ibv_wc wc[4];
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(f.cq, 4, wc, &got), 0);
	assert_int_equal(got, 3);
	fixture_down(&f);
}

static void test_arm_failure_is_provider_error(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, NULL);
	fake_fail(FAKE_IBV_REQ_NOTIFY_CQ, 1, EIO);
	assert_int_equal(rpma_cq_arm(f.cq), RPMA_E_PROVIDER);
	assert_true(log_has("ibv_req_notify_cq()", strerror(EIO), NULL));
	fixture_down(&f);
}

static void test_take_event_on_shared_channel_is_refused(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, 10, 10, true);
	struct fixture f;
	fixture_up(&f, cfg);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_cq_take_event(f.cq), RPMA_E_SHARED_CHANNEL);
	assert_int_equal(fake_calls(FAKE_IBV_GET_CQ_EVENT), 0);
	fixture_down(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_get_fd),
		rpma_unit_test(test_wait_and_get_wc_reject_bad_arguments),
		rpma_unit_test(test_cq_is_armed_at_creation),
		rpma_unit_test(test_fd_works_with_poll_and_epoll),
		rpma_unit_test(test_wait_without_event_on_nonblocking_fd),
		rpma_unit_test(test_interrupted_wait_is_no_completion),
		rpma_unit_test(test_rearm_failure_is_provider_error),
		rpma_unit_test(test_spurious_wake_up_is_no_completion),
		rpma_unit_test(test_get_wc_reaps_up_to_num_entries),
		rpma_unit_test(test_get_wc_passes_failed_completions_on),
		rpma_unit_test(test_poll_failure_is_provider_error),
		rpma_unit_test(test_poll_returning_too_many_is_unknown),
		rpma_unit_test(test_receive_cq_is_separate),
		rpma_unit_test(test_wait_on_shared_channel_is_refused),
		rpma_unit_test(test_channel_destroy_failure_is_reported),
		rpma_unit_test(test_take_event_leaves_the_cq_unarmed),
		rpma_unit_test(test_arm_failure_is_provider_error),
		rpma_unit_test(test_take_event_on_shared_channel_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
