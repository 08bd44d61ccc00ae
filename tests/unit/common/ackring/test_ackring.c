// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_ackring.c -- common/ackring.c: the buffers acknowledgements go out
 * from, one registered region for all lanes, at most RPMAFS_ACKRING_DEPTH
 * in flight per lane, a buffer reused only after its completion
 */

#include <errno.h>
#include <string.h>

#include "unit.h"

#include "ack.h"
#include "ackring.h"

#define TAG (1ull << 63)

static struct {
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpmafs_ackring *ring;
} F;

static int setup(void **state)
{
	unit_setup(state);
	memset(&F, 0, sizeof(F));
	F.peer = fx_peer();
	F.conn = fx_conn_active(F.peer, NULL);
	return 0;
}

static int teardown(void **state)
{
	rpmafs_ackring_delete(&F.ring);
	assert_null(F.ring);
	assert_int_equal(rpma_conn_delete(&F.conn), 0);
	assert_int_equal(rpma_peer_delete(&F.peer), 0);
	return unit_teardown(state);
}

/* the acknowledgement in the nth send posted on the connection */
static struct rpmafs_ack sent_ack(unsigned n, struct fake_send_wr *wr)
{
	struct rpmafs_ack ack;
	const char *why = NULL;

	*wr = fake_send_get(fx_qp(F.conn), n);
	assert_int_equal(wr->opcode, IBV_WR_SEND);
	assert_true(wr->send_flags & IBV_SEND_SIGNALED);
	assert_int_equal(wr->num_sge, 1);
	assert_int_equal(wr->sge.length, RPMAFS_ACK_LEN);
	assert_int_equal(
		rpmafs_ack_parse((void *)(uintptr_t)wr->sge.addr, wr->sge.length, &ack, &why), 0);
	return ack;
}

static void test_new_delete(void **state)
{
	struct rpmafs_ackring *r = NULL;

	(void)state;
	assert_int_equal(rpmafs_ackring_new(F.peer, 0, TAG, &r), -EINVAL); /* no lane */
	/* a tag over the buffer index could not be told from it */
	for (uint64_t t = 1; t < RPMAFS_ACKRING_DEPTH; t++)
		assert_int_equal(rpmafs_ackring_new(F.peer, 1, t, &r), -EINVAL);
	assert_int_equal(rpmafs_ackring_new(NULL, 1, 0, &r), -EINVAL);
	assert_int_equal(rpmafs_ackring_new(F.peer, 1, 0, NULL), -EINVAL);
	assert_null(r);
	assert_int_equal(fake_live(FAKE_MR), 0);
	/* one region for every lane */
	assert_int_equal(rpmafs_ackring_new(F.peer, 1024, TAG, &F.ring), 0);
	assert_non_null(F.ring);
	assert_int_equal(fake_live(FAKE_MR), 1);
	rpmafs_ackring_delete(&F.ring);
	assert_null(F.ring);
	assert_int_equal(fake_live(FAKE_MR), 0);
	rpmafs_ackring_delete(&F.ring); /* NULL: nothing */
}

static int sweep_op(void *arg)
{
	int ret = rpmafs_ackring_new(F.peer, 4, TAG, arg);

	/* the ring's own allocations say -ENOMEM, the registration's RPMA_E_NOMEM */
	return ret == -ENOMEM ? RPMA_E_NOMEM : ret;
}

static void sweep_undo(void *arg)
{
	rpmafs_ackring_delete(arg);
}

/* every allocation that fails leaves nothing behind; the registration failing neither */
static void test_new_failures(void **state)
{
	struct alloc_sweep sweep = {.op = sweep_op, .undo = sweep_undo};
	struct rpmafs_ackring *r = NULL;
	long live = alloc_live();

	(void)state;
	assert_true(unit_alloc_sweep(&sweep, &r) >= 3); /* the ring, its buffers, rpma's MR */
	assert_null(r);
	fake_fail(FAKE_IBV_REG_MR, 1, EFAULT);
	assert_int_equal(rpmafs_ackring_new(F.peer, 4, TAG, &r), RPMA_E_PROVIDER);
	assert_null(r);
	assert_int_equal(fake_live(FAKE_MR), 0);
	assert_int_equal(alloc_live(), live);
}

/* four in flight on a lane, each in its own buffer, tagged; a fifth waits */
static void test_send_depth(void **state)
{
	struct fake_send_wr wr[RPMAFS_ACKRING_DEPTH];
	const char *why = NULL;
	unsigned busy = 0;

	(void)state;
	assert_int_equal(rpmafs_ackring_new(F.peer, 3, TAG, &F.ring), 0);
	for (unsigned i = 0; i < RPMAFS_ACKRING_DEPTH; i++) {
		struct rpmafs_ack in = {.acked = 100 + i, .credits = 7, .requests = (uint16_t)i};
		struct rpmafs_ack out;

		assert_int_equal(rpmafs_ackring_send(F.ring, 1, &busy, F.conn, &in, NULL, &why), 0);
		assert_int_equal(busy, (2u << i) - 1);
		out = sent_ack(i, &wr[i]);
		assert_int_equal(wr[i].wr_id, TAG | i);
		assert_int_equal(out.acked, in.acked);
		assert_int_equal(out.credits, 7);
		assert_int_equal(out.requests, i);
	}
	/* side by side in the region: nothing overwritten while in flight */
	for (unsigned i = 1; i < RPMAFS_ACKRING_DEPTH; i++)
		assert_int_equal(wr[i].sge.addr, wr[0].sge.addr + i * RPMAFS_ACKRING_BUF_LEN);
	for (unsigned i = 0; i < RPMAFS_ACKRING_DEPTH; i++)
		assert_int_equal(sent_ack(i, &wr[i]).acked, 100 + i);
	assert_int_equal(rpmafs_ackring_send(F.ring, 1, &busy, F.conn,
				 &(struct rpmafs_ack){.acked = 200}, NULL, &why),
		1);
	assert_int_equal(busy, (1u << RPMAFS_ACKRING_DEPTH) - 1);
	assert_int_equal(fake_send_count(fx_qp(F.conn)), RPMAFS_ACKRING_DEPTH);
}

/* lanes do not share buffers: lane 0's first and lane 2's first are a lane apart from lane 1's */
static void test_lanes(void **state)
{
	struct fake_send_wr w0, w1, w2;
	const char *why = NULL;
	unsigned busy[3] = {0, 0, 0};

	(void)state;
	assert_int_equal(rpmafs_ackring_new(F.peer, 3, 0, &F.ring), 0);
	for (uint32_t lane = 0; lane < 3; lane++)
		assert_int_equal(rpmafs_ackring_send(F.ring, lane, &busy[lane], F.conn,
					 &(struct rpmafs_ack){.acked = 10 + lane}, NULL, &why),
			0);
	assert_int_equal(sent_ack(0, &w0).acked, 10);
	assert_int_equal(sent_ack(1, &w1).acked, 11);
	assert_int_equal(sent_ack(2, &w2).acked, 12);
	/* tag 0: the wr_id is the buffer's index in its lane */
	assert_int_equal(w0.wr_id, 0);
	assert_int_equal(w1.wr_id, 0);
	assert_int_equal(w2.wr_id, 0);
	assert_int_equal(w1.sge.addr, w0.sge.addr + RPMAFS_ACKRING_DEPTH * RPMAFS_ACKRING_BUF_LEN);
	assert_int_equal(w2.sge.addr, w1.sge.addr + RPMAFS_ACKRING_DEPTH * RPMAFS_ACKRING_BUF_LEN);
	assert_int_equal(w0.sge.lkey, w2.sge.lkey); /* one registration */
	for (uint32_t lane = 0; lane < 3; lane++)
		assert_int_equal(busy[lane], 1);
	/* no fourth lane */
	why = NULL;
	assert_int_equal(rpmafs_ackring_send(F.ring, 3, &busy[0], F.conn,
				 &(struct rpmafs_ack){.acked = 13}, NULL, &why),
		-1);
	assert_string_equal(why, "no such acknowledgement lane");
	assert_int_equal(busy[0], 1);
	assert_int_equal(fake_send_count(fx_qp(F.conn)), 3);
}

/* a completion frees its buffer, which the next send takes; a failed one too, and says so */
static void test_sent(void **state)
{
	struct fake_send_wr wr;
	struct ibv_wc wc;
	const char *why = NULL;
	unsigned busy = 0;

	(void)state;
	assert_int_equal(rpmafs_ackring_new(F.peer, 1, TAG, &F.ring), 0);
	for (unsigned i = 0; i < RPMAFS_ACKRING_DEPTH; i++)
		assert_int_equal(rpmafs_ackring_send(F.ring, 0, &busy, F.conn,
					 &(struct rpmafs_ack){.acked = i}, NULL, &why),
			0);
	wc = fx_wc(TAG | 2, IBV_WC_SEND, IBV_WC_SUCCESS);
	assert_int_equal(rpmafs_ackring_sent(F.ring, &busy, &wc), 0);
	assert_int_equal(busy, 0xb);
	assert_int_equal(rpmafs_ackring_send(F.ring, 0, &busy, F.conn,
				 &(struct rpmafs_ack){.acked = 50, .requests = 3}, NULL, &why),
		0);
	assert_int_equal(busy, 0xf);
	assert_int_equal(sent_ack(4, &wr).acked, 50);
	assert_int_equal(wr.wr_id, TAG | 2);
	assert_int_equal(wr.sge.addr, fake_send_get(fx_qp(F.conn), 2).sge.addr);
	/* failed (flushed): the buffer is free all the same */
	wc = fx_wc(TAG | 0, IBV_WC_SEND, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(rpmafs_ackring_sent(F.ring, &busy, &wc), -1);
	assert_int_equal(busy, 0xe);
	/* a wr_id that names no buffer frees none */
	wc = fx_wc(TAG | RPMAFS_ACKRING_DEPTH, IBV_WC_SEND, IBV_WC_SUCCESS);
	assert_int_equal(rpmafs_ackring_sent(F.ring, &busy, &wc), 0);
	assert_int_equal(busy, 0xe);
}

/* the send refused: -1, why from rpma, no buffer taken */
static void test_send_fails(void **state)
{
	const char *why = NULL;
	unsigned busy = 0;

	(void)state;
	assert_int_equal(rpmafs_ackring_new(F.peer, 1, TAG, &F.ring), 0);
	fake_fail(FAKE_IBV_POST_SEND, 1, ENOMEM);
	assert_int_equal(rpmafs_ackring_send(
				 F.ring, 0, &busy, F.conn, &(struct rpmafs_ack){.acked = 1}, NULL, &why),
		-1);
	assert_non_null(why);
	assert_int_equal(busy, 0);
	assert_int_equal(rpmafs_ackring_send(
				 F.ring, 0, &busy, F.conn, &(struct rpmafs_ack){.acked = 1}, NULL, &why),
		0);
	assert_int_equal(busy, 1);
	assert_int_equal(fake_send_get(fx_qp(F.conn), 0).wr_id, TAG);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_new_delete),
		T(test_new_failures),
		T(test_send_depth),
		T(test_lanes),
		T(test_sent),
		T(test_send_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
