// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_batch.c -- rpma_send_batch() and rpma_recv_batch() (librpma_ext.h): a chain of sends, with and
 * without immediate data, posted with one ibv_post_send(); every descriptor checked
 * before anything is posted; a chain the queue takes only part of says how much
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <librpma_ext.h>

#include "unit.h"

#define SIZE 1024

static char Buf[SIZE];

struct fixture {
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct ibv_qp *qp;
	struct rpma_mr_local *mr;  /* Buf, SEND */
	struct rpma_mr_local *rmr; /* Buf, RECV */
};

static void fixture_up(struct fixture *f)
{
	f->peer = fx_peer();
	f->conn = fx_conn_active(f->peer, NULL);
	f->qp = fx_qp(f->conn);
	assert_int_equal(rpma_mr_reg(f->peer, Buf, SIZE, RPMA_MR_USAGE_SEND, &f->mr), 0);
	assert_int_equal(rpma_mr_reg(f->peer, Buf, SIZE, RPMA_MR_USAGE_RECV, &f->rmr), 0);
}

static void fixture_down(struct fixture *f)
{
	assert_int_equal(rpma_mr_dereg(&f->mr), 0);
	assert_int_equal(rpma_mr_dereg(&f->rmr), 0);
	assert_int_equal(rpma_conn_delete(&f->conn), 0);
	assert_int_equal(rpma_peer_delete(&f->peer), 0);
}

static struct rpma_send_desc desc(const struct rpma_mr_local *src, size_t offset, size_t len,
	int flags, bool with_imm, uint32_t imm, uintptr_t ctx)
{
	return (struct rpma_send_desc){.src = src,
		.offset = offset,
		.len = len,
		.flags = flags,
		.with_imm = with_imm,
		.imm = imm,
		.op_context = (const void *)ctx};
}

/* a chain mixing plain sends, sends with imm and a 0-byte one: one call, in order */
static void test_chain_is_one_post_in_order(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	struct rpma_send_desc d[4] = {
		desc(f.mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR, true, 1, 11),
		desc(f.mr, 64, 8, RPMA_F_COMPLETION_ON_ERROR, true, 0x80000002u, 12),
		desc(NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR, true, 3, 13),
		desc(f.mr, 512, 100, RPMA_F_COMPLETION_ALWAYS, false, 0xdead, 14),
	};
	unsigned int calls = fake_calls(FAKE_IBV_POST_SEND), posted = 99;

	assert_int_equal(rpma_send_batch(f.conn, d, 4, &posted), 0);
	assert_int_equal(posted, 4);
	assert_int_equal(fake_calls(FAKE_IBV_POST_SEND), calls + 1);
	assert_int_equal(fake_send_count(f.qp), 4);
	for (unsigned int i = 0; i < 4; i++) {
		struct fake_send_wr w = fake_send_get(f.qp, i);

		assert_int_equal(w.wr_id, 11 + i);
		assert_int_equal(w.opcode, d[i].with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND);
		/* network order, as rpma_send_with_imm(); a plain send carries none */
		assert_int_equal(w.imm_data, d[i].with_imm ? htonl(d[i].imm) : 0);
		assert_int_equal(!!(w.send_flags & IBV_SEND_SIGNALED), i == 3);
		if (d[i].len) {
			assert_int_equal(w.num_sge, 1);
			assert_int_equal(w.sge.addr, (uintptr_t)Buf + d[i].offset);
			assert_int_equal(w.sge.length, d[i].len);
		} else {
			/* a 0-byte message goes without an SGE */
			assert_int_equal(w.num_sge, 0);
		}
	}
	fixture_down(&f);
}

/* the same sends one by one with rpma_send_with_imm post the same requests */
static void test_chain_equals_sends_one_by_one(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	struct rpma_send_desc d[2] = {
		desc(f.mr, 16, 32, RPMA_F_COMPLETION_ON_ERROR, true, 7, 1),
		desc(f.mr, 48, 32, RPMA_F_COMPLETION_ALWAYS, true, 8, 2),
	};
	unsigned int posted;

	assert_int_equal(rpma_send_batch(f.conn, d, 2, &posted), 0);
	for (unsigned int i = 0; i < 2; i++)
		assert_int_equal(rpma_send_with_imm(f.conn, d[i].src, d[i].offset, d[i].len,
					 d[i].flags, d[i].imm, d[i].op_context),
			0);
	for (unsigned int i = 0; i < 2; i++) {
		struct fake_send_wr a = fake_send_get(f.qp, i), b = fake_send_get(f.qp, i + 2);

		assert_int_equal(a.opcode, b.opcode);
		assert_int_equal(a.imm_data, b.imm_data);
		assert_int_equal(a.send_flags, b.send_flags);
		assert_int_equal(a.sge.addr, b.sge.addr);
		assert_int_equal(a.sge.length, b.sge.length);
		assert_int_equal(a.sge.lkey, b.sge.lkey);
		assert_int_equal(a.wr_id, b.wr_id);
	}
	fixture_down(&f);
}

/* every descriptor is checked first: one bad one and nothing is posted */
static void test_bad_descriptor_posts_nothing(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	struct rpma_send_desc d[3] = {
		desc(f.mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, true, 1, 1),
		desc(f.mr, 8, 8, RPMA_F_COMPLETION_ALWAYS, true, 2, 2),
		desc(f.mr, 16, 8, RPMA_F_COMPLETION_ALWAYS, true, 3, 3),
	};
	unsigned int posted = 99;

	d[2].offset = SIZE; /* past the registration */
	assert_int_equal(rpma_send_batch(f.conn, d, 3, &posted), RPMA_E_INVAL);
	assert_int_equal(posted, 0);
	d[2].offset = 16;
	d[1].flags = 0;
	assert_int_equal(rpma_send_batch(f.conn, d, 3, &posted), RPMA_E_INVAL);
	d[1].flags = RPMA_F_COMPLETION_ALWAYS;
	d[1].src = NULL; /* no memory, yet a length */
	assert_int_equal(rpma_send_batch(f.conn, d, 3, &posted), RPMA_E_INVAL);
	assert_int_equal(fake_send_count(f.qp), 0);
	fixture_down(&f);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	struct rpma_send_desc d[RPMA_SEND_BATCH_MAX + 1];
	unsigned int posted = 99;

	for (unsigned int i = 0; i <= RPMA_SEND_BATCH_MAX; i++)
		d[i] = desc(f.mr, 0, 1, RPMA_F_COMPLETION_ON_ERROR, true, i + 1, i);
	assert_int_equal(rpma_send_batch(NULL, d, 1, &posted), RPMA_E_INVAL);
	assert_int_equal(posted, 0);
	assert_int_equal(rpma_send_batch(f.conn, NULL, 1, &posted), RPMA_E_INVAL);
	assert_int_equal(rpma_send_batch(f.conn, d, 0, &posted), RPMA_E_INVAL);
	assert_int_equal(
		rpma_send_batch(f.conn, d, RPMA_SEND_BATCH_MAX + 1, &posted), RPMA_E_INVAL);
	assert_int_equal(fake_send_count(f.qp), 0);
	/* the limit itself is fine, and posted may be NULL */
	assert_int_equal(rpma_send_batch(f.conn, d, RPMA_SEND_BATCH_MAX, NULL), 0);
	assert_int_equal(fake_send_count(f.qp), RPMA_SEND_BATCH_MAX);
	assert_int_equal(
		ntohl(fake_send_get(f.qp, RPMA_SEND_BATCH_MAX - 1).imm_data), RPMA_SEND_BATCH_MAX);
	fixture_down(&f);
}

/* the queue takes the first two, then is full: a provider error, and posted says 2 */
static void test_chain_cut_short_says_how_much_went(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	struct rpma_send_desc d[4];
	unsigned int posted = 99;

	for (unsigned int i = 0; i < 4; i++)
		d[i] = desc(f.mr, 8 * i, 8, RPMA_F_COMPLETION_ON_ERROR, true, i + 1, i + 1);
	fake_fail_send_chain(2, ENOMEM);
	assert_int_equal(rpma_send_batch(f.conn, d, 4, &posted), RPMA_E_PROVIDER);
	assert_int_equal(posted, 2);
	assert_int_equal(fake_send_count(f.qp), 2);
	assert_int_equal(ntohl(fake_send_get(f.qp, 1).imm_data), 2);
	/* refused whole: nothing went */
	fake_fail(FAKE_IBV_POST_SEND, 1, EIO);
	assert_int_equal(rpma_send_batch(f.conn, d, 4, &posted), RPMA_E_PROVIDER);
	assert_int_equal(posted, 0);
	assert_int_equal(fake_send_count(f.qp), 2);
	fixture_down(&f);
}

/* rpma_recv_batch(): receives posted again as one chain on the connection's own queue */
static void test_recv_chain_is_one_post_in_order(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	struct rpma_recv_desc d[3] = {
		{f.rmr, 0, 128, (void *)7}, {f.rmr, 128, 128, (void *)8}, {NULL, 0, 0, (void *)9}};
	unsigned int calls = fake_calls(FAKE_IBV_POST_RECV), posted = 99, base;

	base = fake_recv_count(f.qp);
	assert_int_equal(rpma_recv_batch(f.conn, d, 3, &posted), 0);
	assert_int_equal(posted, 3);
	assert_int_equal(fake_calls(FAKE_IBV_POST_RECV), calls + 1);
	assert_int_equal(fake_recv_count(f.qp), base + 3);
	for (unsigned int i = 0; i < 3; i++) {
		struct fake_recv_wr r = fake_recv_get(f.qp, base + i);

		assert_int_equal(r.wr_id, 7 + i);
		assert_int_equal(r.num_sge, i < 2 ? 1 : 0);
		if (i < 2)
			assert_int_equal(r.sge.addr, (uintptr_t)Buf + 128 * i);
	}
	/* checked first: one bad descriptor and nothing is posted */
	d[1].offset = SIZE;
	assert_int_equal(rpma_recv_batch(f.conn, d, 3, &posted), RPMA_E_INVAL);
	assert_int_equal(posted, 0);
	d[1].offset = 128;
	assert_int_equal(rpma_recv_batch(f.conn, d, 0, &posted), RPMA_E_INVAL);
	assert_int_equal(rpma_recv_batch(NULL, d, 1, &posted), RPMA_E_INVAL);
	assert_int_equal(fake_recv_count(f.qp), base + 3);
	/* refused by the provider: nothing went */
	fake_fail(FAKE_IBV_POST_RECV, 1, ENOMEM);
	assert_int_equal(rpma_recv_batch(f.conn, d, 3, &posted), RPMA_E_PROVIDER);
	assert_int_equal(posted, 0);
	fixture_down(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_chain_is_one_post_in_order),
		rpma_unit_test(test_chain_equals_sends_one_by_one),
		rpma_unit_test(test_bad_descriptor_posts_nothing),
		rpma_unit_test(test_bad_arguments),
		rpma_unit_test(test_chain_cut_short_says_how_much_went),
		rpma_unit_test(test_recv_chain_is_one_post_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
