// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_srq.c -- shared receive queues: rpma_srq_new(), _delete(), _recv(), _get_rcq(), every
 * row of their ERRORS (arguments and provider failures), what is asked of the provider and
 * what is posted to the SRQ
 *
 * (Connections on an SRQ, and where their completions land, are in test_srq_conn.c.)
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <librpma_ext.h>

#include "unit.h"

#define SIZE 1024
#define CTX ((void *)0xc0ffee)
#define NOT_TOUCHED_SRQ ((struct rpma_srq *)0x1234)
#define NOT_TOUCHED_CQ ((struct rpma_cq *)0x5678)

static char Buf[SIZE];

static struct rpma_srq *new_srq(struct rpma_peer *peer, uint32_t rq_size, uint32_t rcq_size)
{
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_new(&cfg), 0);
	assert_int_equal(rpma_srq_cfg_set_rq_size(cfg, rq_size), 0);
	assert_int_equal(rpma_srq_cfg_set_rcq_size(cfg, rcq_size), 0);
	struct rpma_srq *srq = NULL;
	assert_int_equal(rpma_srq_new(peer, cfg, &srq), 0);
	assert_non_null(srq);
	/* the configuration is read, not kept */
	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
	return srq;
}

static struct rpma_cq *rcq_of(const struct rpma_srq *srq)
{
	struct rpma_cq *rcq = NOT_TOUCHED_CQ;
	assert_int_equal(rpma_srq_get_rcq(srq, &rcq), 0);
	return rcq;
}

/* the verbs SRQ: the only one alive */
static struct ibv_srq *only_ibv_srq(void)
{
	assert_int_equal(fake_live(FAKE_SRQ), 1);
	return fake_srq_nth(0);
}

/* rpma_srq_new(3) ERRORS: RPMA_E_INVAL - peer or srq_ptr is NULL */
static void test_new_rejects_bad_arguments(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = NOT_TOUCHED_SRQ;
	assert_int_equal(rpma_srq_new(NULL, NULL, &srq), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_new(peer, NULL, NULL), RPMA_E_INVAL);
	assert_ptr_equal(srq, NOT_TOUCHED_SRQ);
	assert_int_equal(fake_calls(FAKE_IBV_CREATE_SRQ), 0);
	assert_int_equal(fake_calls(FAKE_IBV_CREATE_CQ), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* cfg == NULL: the defaults of rpma_srq_cfg_new(3), so an SRQ of 100 and a receive CQ of 100 */
static void test_new_with_defaults(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = NULL;
	assert_int_equal(rpma_srq_new(peer, NULL, &srq), 0);
	assert_non_null(srq);

	struct ibv_srq *ibv_srq = only_ibv_srq();
	struct ibv_srq_init_attr attr = fake_srq_attr(ibv_srq);
	assert_int_equal(attr.attr.max_wr, 100);
	assert_int_equal(attr.attr.max_sge, 1);
	assert_int_equal(attr.attr.srq_limit, 0);
	assert_int_equal(fake_live(FAKE_PD), 1);

	/* a receive CQ of 100 with a channel of its own, armed, waitable through its fd */
	assert_int_equal(fake_live(FAKE_CQ), 1);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 1);
	assert_int_equal(fake_last_cqe(), 100);
	struct rpma_cq *rcq = rcq_of(srq);
	assert_non_null(rcq);
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(rcq, &fd), 0);
	struct ibv_cq *ibv_rcq = fake_cq_by_channel_fd(fd, 0);
	assert_non_null(ibv_rcq);
	assert_true(fake_cq_armed(ibv_rcq));

	/* a completion raises an event rpma_cq_wait() reports and rpma_cq_get_wc() reaps */
	struct ibv_wc wc = fx_wc(42, IBV_WC_RECV, IBV_WC_SUCCESS);
	fake_cq_push_wc(ibv_rcq, &wc);
	assert_int_equal(rpma_cq_wait(rcq), 0);
	struct ibv_wc got;
	assert_int_equal(rpma_cq_get_wc(rcq, 1, &got, NULL), 0);
	assert_int_equal(got.wr_id, 42);

	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_null(srq);
	assert_int_equal(fake_live(FAKE_SRQ), 0);
	assert_int_equal(fake_live(FAKE_CQ), 0);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_new_follows_the_configuration(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 7, 9);
	assert_int_equal(fake_srq_attr(only_ibv_srq()).attr.max_wr, 7);
	assert_int_equal(fake_last_cqe(), 9);
	assert_non_null(rcq_of(srq));
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* rpma_srq_new(3): "It does not create the shared receive CQ if the size ... equals 0" */
static void test_new_without_receive_cq(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 0);
	assert_int_equal(fake_live(FAKE_SRQ), 1);
	assert_int_equal(fake_live(FAKE_CQ), 0);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 0);
	assert_int_equal(fake_calls(FAKE_IBV_CREATE_CQ), 0);
	assert_null(rcq_of(srq));
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static void test_huge_receive_cq_size_is_clipped_to_int_max(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, UINT32_MAX);
	assert_int_equal(fake_last_cqe(), INT_MAX);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* beyond librpma: a receive CQ smaller than the SRQ can overrun, and the log says so */
static void test_small_receive_cq_is_warned_about(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG);

	struct rpma_srq *srq = new_srq(peer, 10, 5);
	assert_true(log_has("receive CQ (5) is smaller than the SRQ (10)", NULL));
	assert_int_equal(log_last_level(), RPMA_LOG_LEVEL_WARNING);
	assert_non_null(rcq_of(srq)); /* made all the same */
	assert_int_equal(rpma_srq_delete(&srq), 0);

	/* as large, larger, or none at all: nothing to say */
	const uint32_t rcq_sizes[] = {10, 11, 0};
	for (size_t i = 0; i < sizeof(rcq_sizes) / sizeof(rcq_sizes[0]); i++) {
		log_clear();
		srq = new_srq(peer, 10, rcq_sizes[i]);
		assert_false(log_has("smaller than the SRQ", NULL));
		assert_int_equal(rpma_srq_delete(&srq), 0);
	}
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* sizes the device cannot make are the provider's to refuse, and the log says what was asked */
static void test_sizes_the_provider_refuses(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_new(&cfg), 0);
	struct rpma_srq *srq = NOT_TOUCHED_SRQ;

	const uint32_t sizes[] = {0, FAKE_MAX_SRQ_WR + 1, UINT32_MAX};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char expected[64];
		snprintf(expected, sizeof(expected), "ibv_create_srq(max_wr=%u, max_sge=1)",
			(unsigned)sizes[i]);
		log_clear();
		assert_int_equal(rpma_srq_cfg_set_rq_size(cfg, sizes[i]), 0);
		assert_int_equal(rpma_srq_new(peer, cfg, &srq), RPMA_E_PROVIDER);
		assert_ptr_equal(srq, NOT_TOUCHED_SRQ);
		assert_true(log_has(expected, strerror(EINVAL), NULL));
		assert_int_equal(fake_live(FAKE_SRQ), 0);
		assert_int_equal(fake_live(FAKE_CQ), 0);
	}

	/* the largest the device takes works */
	assert_int_equal(rpma_srq_cfg_set_rq_size(cfg, FAKE_MAX_SRQ_WR), 0);
	assert_int_equal(rpma_srq_new(peer, cfg, &srq), 0);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/*
 * rpma_srq_new(3) ERRORS: RPMA_E_PROVIDER - ibv_create_srq(3), ibv_create_comp_channel(3),
 * ibv_create_cq(3) or ibv_req_notify_cq(3) failed; each failure is logged with its errno,
 * leaves *srq_ptr alone and releases what was made before it
 */
static void test_new_provider_failures_release_everything(void **state)
{
	(void)state;
	static const struct {
		enum fake_fn fn;
		int err;
		const char *logged;
	} table[] = {
		{FAKE_IBV_CREATE_SRQ, ENOMEM, "ibv_create_srq(max_wr=100, max_sge=1)"},
		{FAKE_IBV_CREATE_COMP_CHANNEL, EMFILE, "ibv_create_comp_channel()"},
		{FAKE_IBV_CREATE_CQ, ENOMEM, "ibv_create_cq(cqe=100)"},
		{FAKE_IBV_REQ_NOTIFY_CQ, EIO, "ibv_req_notify_cq()"},
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct rpma_peer *peer = fx_peer();
		struct rpma_srq *srq = NOT_TOUCHED_SRQ;
		log_clear();

		fake_fail(table[i].fn, 1, table[i].err);
		assert_int_equal(rpma_srq_new(peer, NULL, &srq), RPMA_E_PROVIDER);
		assert_ptr_equal(srq, NOT_TOUCHED_SRQ);
		if (!log_has(table[i].logged, strerror(table[i].err), NULL))
			fail_msg(
				"row %zu: no \"%s\" with its errno in the log", i, table[i].logged);
		assert_int_equal(log_last_level(), RPMA_LOG_LEVEL_ERROR);

		assert_int_equal(fake_live_total(), 1); /* the peer's PD, nothing else */
		assert_int_equal(rpma_peer_delete(&peer), 0);
		unit_assert_clean();
		fake_reset();
	}
}

struct new_arg {
	struct rpma_peer *peer;
	struct rpma_srq_cfg *cfg;
	struct rpma_srq *srq;
};

static int new_srq_op(void *p)
{
	struct new_arg *a = p;
	return rpma_srq_new(a->peer, a->cfg, &a->srq);
}

static void delete_srq_op(void *p)
{
	struct new_arg *a = p;
	assert_int_equal(rpma_srq_delete(&a->srq), 0);
}

/* rpma_srq_new(3) ERRORS: RPMA_E_NOMEM - out of memory, at every allocation */
static void test_new_out_of_memory(void **state)
{
	(void)state;
	struct new_arg a = {fx_peer(), NULL, NOT_TOUCHED_SRQ};
	struct alloc_sweep sweep = {.op = new_srq_op, .undo = delete_srq_op};
	/* the SRQ object and its receive CQ */
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 2);

	/* without a receive CQ: the SRQ object only */
	assert_int_equal(rpma_srq_cfg_new(&a.cfg), 0);
	assert_int_equal(rpma_srq_cfg_set_rcq_size(a.cfg, 0), 0);
	a.srq = NOT_TOUCHED_SRQ;
	assert_int_equal(unit_alloc_sweep(&sweep, &a), 1);

	/* and *srq_ptr is not set on failure */
	a.srq = NOT_TOUCHED_SRQ;
	alloc_fail_nth(1);
	assert_int_equal(rpma_srq_new(a.peer, a.cfg, &a.srq), RPMA_E_NOMEM);
	alloc_fail_nth(0);
	assert_ptr_equal(a.srq, NOT_TOUCHED_SRQ);

	assert_int_equal(rpma_srq_cfg_delete(&a.cfg), 0);
	assert_int_equal(rpma_peer_delete(&a.peer), 0);
}

/* rpma_srq_delete(3) ERRORS: RPMA_E_INVAL - srq_ptr is NULL; a NULL object is a no-op */
static void test_delete_rejects_null(void **state)
{
	(void)state;
	struct rpma_srq *srq = NULL;
	assert_int_equal(rpma_srq_delete(NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(fake_calls(FAKE_IBV_DESTROY_SRQ), 0);
}

/*
 * rpma_srq_delete(3) ERRORS: RPMA_E_PROVIDER - ibv_destroy_srq(3) failed: beyond librpma the
 * SRQ is kept whole and *srq_ptr left, so that the call can be repeated
 */
static void test_delete_srq_failure_keeps_everything(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_srq *kept = srq;

	fake_fail(FAKE_IBV_DESTROY_SRQ, 1, EIO);
	assert_int_equal(rpma_srq_delete(&srq), RPMA_E_PROVIDER);
	assert_ptr_equal(srq, kept);
	assert_true(log_has("ibv_destroy_srq()", strerror(EIO), NULL));
	assert_int_equal(fake_live(FAKE_SRQ), 1);
	assert_int_equal(fake_live(FAKE_CQ), 1);
	assert_int_equal(fake_live(FAKE_COMP_CHANNEL), 1);
	assert_non_null(rcq_of(srq)); /* still usable */

	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_null(srq);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/*
 * rpma_srq_delete(3) ERRORS: RPMA_E_PROVIDER - ibv_destroy_cq(3) or ibv_destroy_comp_channel(3)
 * failed (after the SRQ went): *srq_ptr is set to NULL (librpma: "on success and on failure"),
 * the library's memory is freed, and only what failed to go is left
 */
static void test_delete_receive_cq_failures(void **state)
{
	(void)state;
	static const struct {
		enum fake_fn fn;
		const char *logged;
		int left_total; /* besides the peer's PD */
	} table[] = {
		{FAKE_IBV_DESTROY_CQ, "ibv_destroy_cq()", 2}, /* the CQ and the channel it uses */
		{FAKE_IBV_DESTROY_COMP_CHANNEL, "ibv_destroy_comp_channel()", 1},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct rpma_peer *peer = fx_peer();
		struct rpma_srq *srq = new_srq(peer, 10, 10);
		long alloc_before = alloc_live();
		log_clear();

		fake_fail(table[i].fn, 1, EIO);
		assert_int_equal(rpma_srq_delete(&srq), RPMA_E_PROVIDER);
		assert_null(srq);
		if (!log_has(table[i].logged, strerror(EIO), NULL))
			fail_msg("row %zu: no \"%s\" in the log", i, table[i].logged);
		assert_true(alloc_live() < alloc_before);
		assert_int_equal(fake_live(FAKE_SRQ), 0);

		assert_int_equal(rpma_peer_delete(&peer), 0);
		assert_int_equal(fake_live_total(), table[i].left_total);
		assert_int_equal(fake_violations(), 0);
		fake_free_all();
		unit_assert_clean();
		fake_reset();
	}
}

struct fixture {
	struct rpma_peer *peer;
	struct rpma_srq *srq;
	struct ibv_srq *ibv_srq;
	struct rpma_mr_local *mr; /* Buf, RECV */
};

static void fixture_up(struct fixture *f, uint32_t rq_size)
{
	f->peer = fx_peer();
	f->srq = new_srq(f->peer, rq_size, 10);
	f->ibv_srq = only_ibv_srq();
	assert_int_equal(rpma_mr_reg(f->peer, Buf, SIZE, RPMA_MR_USAGE_RECV, &f->mr), 0);
}

static void fixture_down(struct fixture *f)
{
	assert_int_equal(rpma_mr_dereg(&f->mr), 0);
	assert_int_equal(rpma_srq_delete(&f->srq), 0);
	assert_int_equal(rpma_peer_delete(&f->peer), 0);
}

static struct fake_recv_wr last_srq_recv(const struct fixture *f)
{
	unsigned int n = fake_srq_recv_count(f->ibv_srq);
	assert_true(n > 0);
	return fake_srq_recv_get(f->ibv_srq, n - 1);
}

/*
 * rpma_srq_recv(3) ERRORS: RPMA_E_INVAL - srq == NULL; RPMA_E_INVAL - dst == NULL &&
 * (offset != 0 || len != 0); nothing reaches the provider
 */
static void test_recv_rejects_bad_arguments(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, 10);

	assert_int_equal(rpma_srq_recv(NULL, f.mr, 0, 8, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_recv(NULL, NULL, 0, 0, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_recv(f.srq, NULL, 1, 0, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_recv(f.srq, NULL, 0, 1, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_recv(f.srq, NULL, 4, 4, CTX), RPMA_E_INVAL);
	assert_int_equal(fake_calls(FAKE_IBV_POST_SRQ_RECV), 0);
	assert_int_equal(fake_srq_recv_count(f.ibv_srq), 0);

	fixture_down(&f);
}

/* beyond librpma: the range must lie within the registration and fit a 32-bit SGE */
static void test_recv_range_checks(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, 10);

	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 0, SIZE + 1, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, SIZE, 1, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, SIZE + 1, 0, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, SIZE_MAX, 2, CTX), RPMA_E_INVAL);
	assert_true(log_has("recv: offset", "beyond the registered 1024 bytes", NULL));

	/* the fake registers without touching the memory: a 5 GiB registration is fine */
	struct rpma_mr_local *big;
	assert_int_equal(rpma_mr_reg(f.peer, Buf, (size_t)5 << 30, RPMA_MR_USAGE_RECV, &big), 0);
	assert_int_equal(rpma_srq_recv(f.srq, big, 0, (size_t)UINT32_MAX + 1, CTX), RPMA_E_INVAL);
	assert_true(log_has("does not fit a work request", NULL));
	assert_int_equal(fake_calls(FAKE_IBV_POST_SRQ_RECV), 0);

	/* the edges are fine */
	assert_int_equal(rpma_srq_recv(f.srq, big, 0, UINT32_MAX, CTX), 0);
	assert_int_equal(last_srq_recv(&f).sge.length, UINT32_MAX);
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, SIZE - 1, 1, CTX), 0);
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 0, SIZE, CTX), 0);
	assert_int_equal(fake_srq_recv_count(f.ibv_srq), 3);

	assert_int_equal(rpma_mr_dereg(&big), 0);
	fixture_down(&f);
}

/* beyond librpma: memory of another peer (another protection domain) is refused */
static void test_recv_memory_of_another_peer_is_refused(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, 10);
	struct rpma_peer *other = fx_peer();
	struct rpma_mr_local *foreign;
	assert_int_equal(rpma_mr_reg(other, Buf, SIZE, RPMA_MR_USAGE_RECV, &foreign), 0);

	assert_int_equal(rpma_srq_recv(f.srq, foreign, 0, 8, CTX), RPMA_E_INVAL);
	assert_true(log_has("registered with another peer", NULL));
	assert_int_equal(fake_srq_recv_count(f.ibv_srq), 0);

	assert_int_equal(rpma_mr_dereg(&foreign), 0);
	assert_int_equal(rpma_peer_delete(&other), 0);
	fixture_down(&f);
}

/* what reaches the SRQ: one SGE at ptr + offset with the lkey, op_context as wr_id */
static void test_recv_posts_one_sge(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, 10);

	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 100, 200, CTX), 0);
	struct fake_recv_wr wr = last_srq_recv(&f);
	assert_int_equal(wr.wr_id, (uint64_t)(uintptr_t)CTX);
	assert_int_equal(wr.num_sge, 1);
	assert_int_equal(wr.sge.addr, (uint64_t)(uintptr_t)Buf + 100);
	assert_int_equal(wr.sge.length, 200);
	/* the lkey is the registration's (the fake's keys are 0x1000 + handle): another one's differs */
	assert_true(wr.sge.lkey >= 0x1000 && wr.sge.lkey < 0x2000);
	struct rpma_mr_local *second;
	assert_int_equal(rpma_mr_reg(f.peer, Buf, 64, RPMA_MR_USAGE_RECV, &second), 0);
	assert_int_equal(rpma_srq_recv(f.srq, second, 0, 64, CTX), 0);
	assert_int_not_equal(last_srq_recv(&f).sge.lkey, wr.sge.lkey);
	assert_int_equal(rpma_mr_dereg(&second), 0);

	/* op_context NULL is just wr_id 0 */
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 0, 8, NULL), 0);
	assert_int_equal(last_srq_recv(&f).wr_id, 0);
	assert_int_equal(fake_calls(FAKE_IBV_POST_SRQ_RECV), 3);

	fixture_down(&f);
}

/* a receive for 0-byte messages only: no SGE, whether dst is NULL or the length is 0 */
static void test_recv_zero_bytes_has_no_sge(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, 10);

	assert_int_equal(rpma_srq_recv(f.srq, NULL, 0, 0, CTX), 0);
	struct fake_recv_wr wr = last_srq_recv(&f);
	assert_int_equal(wr.num_sge, 0);
	assert_true(wr.sg_list_null);
	assert_int_equal(wr.wr_id, (uint64_t)(uintptr_t)CTX);

	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 16, 0, CTX), 0);
	wr = last_srq_recv(&f);
	assert_int_equal(wr.num_sge, 0);
	assert_true(wr.sg_list_null);

	fixture_down(&f);
}

/*
 * rpma_srq_recv(3) ERRORS: RPMA_E_PROVIDER - ibv_post_srq_recv(3) failed, with its errno in the
 * log; a full SRQ is the provider's ENOMEM
 */
static void test_recv_provider_failures(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, 2);

	fake_fail(FAKE_IBV_POST_SRQ_RECV, 1, EIO);
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 0, 8, CTX), RPMA_E_PROVIDER);
	assert_true(log_has("ibv_post_srq_recv(length=8, wr_id=0xc0ffee)", strerror(EIO), NULL));
	assert_int_equal(fake_srq_recv_count(f.ibv_srq), 0);

	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 0, 8, CTX), 0);
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 8, 8, CTX), 0);
	log_clear();
	assert_int_equal(rpma_srq_recv(f.srq, f.mr, 16, 8, CTX), RPMA_E_PROVIDER);
	assert_true(log_has("ibv_post_srq_recv(", strerror(ENOMEM), NULL));
	assert_int_equal(fake_srq_recv_count(f.ibv_srq), 2);

	fixture_down(&f);
}

/* rpma_srq_get_rcq(3) ERRORS: RPMA_E_INVAL - srq or rcq_ptr is NULL; *rcq_ptr is not set */
static void test_get_rcq_rejects_null(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 10);
	struct rpma_cq *rcq = NOT_TOUCHED_CQ;
	assert_int_equal(rpma_srq_get_rcq(NULL, &rcq), RPMA_E_INVAL);
	assert_int_equal(rpma_srq_get_rcq(srq, NULL), RPMA_E_INVAL);
	assert_ptr_equal(rcq, NOT_TOUCHED_CQ);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* a peer with an SRQ is busy: its PD cannot go before the SRQ */
static void test_peer_is_busy_while_the_srq_lives(void **state)
{
	(void)state;
	struct rpma_peer *peer = fx_peer();
	struct rpma_srq *srq = new_srq(peer, 10, 0);
	assert_int_equal(rpma_peer_delete(&peer), RPMA_E_PROVIDER);
	assert_non_null(peer);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

/* rpma_srq_recv_batch() (librpma_ext.h): one ibv_post_srq_recv for the chain, in order */
static void test_recv_batch_is_one_chain(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, 8);
	struct rpma_recv_desc d[3] = {
		{f.mr, 0, 64, (void *)1}, {f.mr, 64, 64, (void *)2}, {NULL, 0, 0, (void *)3}};
	unsigned int calls = fake_calls(FAKE_IBV_POST_SRQ_RECV), posted = 99;

	assert_int_equal(rpma_srq_recv_batch(f.srq, d, 3, &posted), 0);
	assert_int_equal(posted, 3);
	assert_int_equal(fake_calls(FAKE_IBV_POST_SRQ_RECV), calls + 1);
	assert_int_equal(fake_srq_recv_count(f.ibv_srq), 3);
	for (unsigned int i = 0; i < 3; i++) {
		struct fake_recv_wr r = fake_srq_recv_get(f.ibv_srq, i);

		assert_int_equal(r.wr_id, i + 1);
		assert_int_equal(r.num_sge, i < 2 ? 1 : 0);
		if (i < 2) {
			assert_int_equal(r.sge.addr, (uintptr_t)Buf + 64 * i);
			assert_int_equal(r.sge.length, 64);
		}
	}
	fixture_down(&f);
}

/* checked before posting; a full SRQ takes what fits and says how many */
static void test_recv_batch_checks_and_partial(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f, 2);
	struct rpma_recv_desc d[3] = {
		{f.mr, 0, 8, (void *)1}, {f.mr, 8, 8, (void *)2}, {f.mr, SIZE, 8, (void *)3}};
	unsigned int posted = 99;

	assert_int_equal(rpma_srq_recv_batch(NULL, d, 1, &posted), RPMA_E_INVAL);
	assert_int_equal(posted, 0);
	assert_int_equal(rpma_srq_recv_batch(f.srq, d, 0, &posted), RPMA_E_INVAL);
	assert_int_equal(
		rpma_srq_recv_batch(f.srq, d, RPMA_RECV_BATCH_MAX + 1, &posted), RPMA_E_INVAL);
	/* the third lies past the registration: nothing is posted */
	assert_int_equal(rpma_srq_recv_batch(f.srq, d, 3, &posted), RPMA_E_INVAL);
	assert_int_equal(fake_srq_recv_count(f.ibv_srq), 0);
	/* room for 2 */
	d[2].offset = 16;
	assert_int_equal(rpma_srq_recv_batch(f.srq, d, 3, &posted), RPMA_E_PROVIDER);
	assert_int_equal(posted, 2);
	assert_int_equal(fake_srq_recv_count(f.ibv_srq), 2);
	fixture_down(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_new_rejects_bad_arguments),
		rpma_unit_test(test_new_with_defaults),
		rpma_unit_test(test_new_follows_the_configuration),
		rpma_unit_test(test_new_without_receive_cq),
		rpma_unit_test(test_huge_receive_cq_size_is_clipped_to_int_max),
		rpma_unit_test(test_small_receive_cq_is_warned_about),
		rpma_unit_test(test_sizes_the_provider_refuses),
		rpma_unit_test(test_new_provider_failures_release_everything),
		rpma_unit_test(test_new_out_of_memory),
		rpma_unit_test(test_delete_rejects_null),
		rpma_unit_test(test_delete_srq_failure_keeps_everything),
		rpma_unit_test(test_delete_receive_cq_failures),
		rpma_unit_test(test_recv_rejects_bad_arguments),
		rpma_unit_test(test_recv_range_checks),
		rpma_unit_test(test_recv_memory_of_another_peer_is_refused),
		rpma_unit_test(test_recv_posts_one_sge),
		rpma_unit_test(test_recv_zero_bytes_has_no_sge),
		rpma_unit_test(test_recv_provider_failures),
		rpma_unit_test(test_recv_batch_is_one_chain),
		rpma_unit_test(test_recv_batch_checks_and_partial),
		rpma_unit_test(test_get_rcq_rejects_null),
		rpma_unit_test(test_peer_is_busy_while_the_srq_lives),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
