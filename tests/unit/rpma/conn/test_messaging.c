// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_messaging.c -- rpma_send(), rpma_send_with_imm(), rpma_recv() and the 0-byte
 * rpma_write(): every row of rpma_send(3)'s ERRORS, the checks beyond librpma (range,
 * 32-bit length, protection domain), and exactly what is posted to the queue pair
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "unit.h"

#define SIZE 1024
#define CTX ((void *)0xc0ffee)

static char Buf[SIZE];

struct fixture {
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct ibv_qp *qp;
	struct rpma_mr_local *mr; /* Buf, SEND | RECV */
};

static void fixture_up(struct fixture *f)
{
	f->peer = fx_peer();
	f->conn = fx_conn_active(f->peer, NULL);
	f->qp = fx_qp(f->conn);
	assert_int_equal(
		rpma_mr_reg(f->peer, Buf, SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &f->mr),
		0);
}

static void fixture_down(struct fixture *f)
{
	assert_int_equal(rpma_mr_dereg(&f->mr), 0);
	assert_int_equal(rpma_conn_delete(&f->conn), 0);
	assert_int_equal(rpma_peer_delete(&f->peer), 0);
}

static struct fake_send_wr last_send(const struct fixture *f)
{
	unsigned int n = fake_send_count(f->qp);
	assert_true(n > 0);
	return fake_send_get(f->qp, n - 1);
}

static struct fake_recv_wr last_recv(const struct fixture *f)
{
	unsigned int n = fake_recv_count(f->qp);
	assert_true(n > 0);
	return fake_recv_get(f->qp, n - 1);
}

/* a send variant under test: rpma_send or rpma_send_with_imm */
typedef int (*send_fn)(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
	size_t len, int flags, const void *op_context);

static int send_with_imm_0x01020304(struct rpma_conn *conn, const struct rpma_mr_local *src,
	size_t offset, size_t len, int flags, const void *op_context)
{
	return rpma_send_with_imm(conn, src, offset, len, flags, 0x01020304, op_context);
}

static const struct {
	send_fn fn;
	enum ibv_wr_opcode opcode;
	const char *name;
} Senders[] = {
	{rpma_send, IBV_WR_SEND, "rpma_send"},
	{send_with_imm_0x01020304, IBV_WR_SEND_WITH_IMM, "rpma_send_with_imm"},
};
#define N_SENDERS (sizeof(Senders) / sizeof(Senders[0]))

static void test_flag_values_keep_librpma_values(void **state)
{
	(void)state;
	assert_int_equal(RPMA_F_COMPLETION_ON_ERROR, 1);
	assert_int_equal(RPMA_F_COMPLETION_ALWAYS, 3);
}

/* rpma_send(3) ERRORS: RPMA_E_INVAL - conn == NULL || flags == 0 */
static void test_send_rejects_null_conn_and_zero_flags(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	for (size_t s = 0; s < N_SENDERS; s++) {
		send_fn send = Senders[s].fn;
		assert_int_equal(
			send(NULL, f.mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, CTX), RPMA_E_INVAL);
		assert_int_equal(
			send(NULL, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, CTX), RPMA_E_INVAL);
		assert_int_equal(send(f.conn, f.mr, 0, 8, 0, CTX), RPMA_E_INVAL);
		assert_int_equal(send(f.conn, NULL, 0, 0, 0, CTX), RPMA_E_INVAL);
	}
	assert_int_equal(fake_send_count(f.qp), 0);
	fixture_down(&f);
}

/* rpma_send(3) ERRORS: RPMA_E_INVAL - src == NULL && (offset != 0 || len != 0) */
static void test_send_rejects_offset_or_length_without_src(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	for (size_t s = 0; s < N_SENDERS; s++) {
		send_fn send = Senders[s].fn;
		assert_int_equal(
			send(f.conn, NULL, 1, 0, RPMA_F_COMPLETION_ALWAYS, CTX), RPMA_E_INVAL);
		assert_int_equal(
			send(f.conn, NULL, 0, 1, RPMA_F_COMPLETION_ALWAYS, CTX), RPMA_E_INVAL);
		assert_int_equal(
			send(f.conn, NULL, 8, 8, RPMA_F_COMPLETION_ON_ERROR, CTX), RPMA_E_INVAL);
	}
	assert_int_equal(fake_send_count(f.qp), 0);
	fixture_down(&f);
}

/* src == NULL, offset == 0, len == 0: a 0-byte message, a work request with no SGE */
static void test_send_of_zero_bytes_has_no_sge(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	for (size_t s = 0; s < N_SENDERS; s++) {
		assert_int_equal(
			Senders[s].fn(f.conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, CTX), 0);
		struct fake_send_wr wr = last_send(&f);
		assert_int_equal(wr.opcode, Senders[s].opcode);
		assert_int_equal(wr.num_sge, 0);
		assert_true(wr.sg_list_null);
		assert_int_equal(wr.wr_id, (uintptr_t)CTX);
		assert_int_equal(wr.send_flags, IBV_SEND_SIGNALED);

		/* a registered buffer with len 0 is posted the same way */
		assert_int_equal(
			Senders[s].fn(f.conn, f.mr, 100, 0, RPMA_F_COMPLETION_ALWAYS, CTX), 0);
		wr = last_send(&f);
		assert_int_equal(wr.num_sge, 0);
		assert_true(wr.sg_list_null);
	}
	fixture_down(&f);
}

static void test_send_posts_the_range(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	for (size_t s = 0; s < N_SENDERS; s++) {
		assert_int_equal(Senders[s].fn(f.conn, f.mr, 100, 200, RPMA_F_COMPLETION_ALWAYS,
					 (void *)(uintptr_t)(s + 1)),
			0);
		struct fake_send_wr wr = last_send(&f);
		assert_int_equal(wr.opcode, Senders[s].opcode);
		assert_int_equal(wr.num_sge, 1);
		assert_int_equal(wr.sge.addr, (uintptr_t)Buf + 100);
		assert_int_equal(wr.sge.length, 200);
		assert_int_equal(wr.wr_id, s + 1);
	}
	/* the lkey is the registration's (the fake's keys are 0x1000 + handle) */
	assert_true(last_send(&f).sge.lkey >= 0x1000);
	fixture_down(&f);
}

/* RPMA_F_COMPLETION_ALWAYS -> signaled; RPMA_F_COMPLETION_ON_ERROR -> unsignaled */
static void test_send_flags_decide_signaling(void **state)
{
	(void)state;
	static const struct {
		int flags;
		unsigned int send_flags;
	} table[] = {
		{RPMA_F_COMPLETION_ALWAYS, IBV_SEND_SIGNALED}, {RPMA_F_COMPLETION_ON_ERROR, 0},
		{RPMA_F_COMPLETION_ALWAYS | (1 << 4), IBV_SEND_SIGNALED}, /* other bits ignored */
		{1 << 1, 0}, /* (flags & ALWAYS) != ALWAYS: unsignaled */
		{1 << 4, 0}, /* not zero: accepted, as librpma does */
	};
	struct fixture f;
	fixture_up(&f);
	for (size_t s = 0; s < N_SENDERS; s++) {
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
			assert_int_equal(Senders[s].fn(f.conn, f.mr, 0, 8, table[i].flags, CTX), 0);
			assert_int_equal(last_send(&f).send_flags, table[i].send_flags);
		}
	}
	fixture_down(&f);
}

static void test_op_context_comes_back_as_wr_id(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	void *contexts[] = {NULL, (void *)1, (void *)UINTPTR_MAX, &f};
	for (size_t i = 0; i < sizeof(contexts) / sizeof(contexts[0]); i++) {
		assert_int_equal(
			rpma_send(f.conn, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR, contexts[i]), 0);
		assert_int_equal(last_send(&f).wr_id, (uintptr_t)contexts[i]);
		assert_int_equal(rpma_recv(f.conn, NULL, 0, 0, contexts[i]), 0);
		assert_int_equal(last_recv(&f).wr_id, (uintptr_t)contexts[i]);
		assert_int_equal(rpma_write(f.conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS,
					 contexts[i]),
			0);
		assert_int_equal(last_send(&f).wr_id, (uintptr_t)contexts[i]);
	}
	fixture_down(&f);
}

static void test_send_with_imm_puts_imm_in_network_order(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	const uint32_t values[] = {0, 1, 0x01020304, 0xdeadbeef, UINT32_MAX};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		assert_int_equal(rpma_send_with_imm(f.conn, f.mr, 0, 4, RPMA_F_COMPLETION_ALWAYS,
					 values[i], CTX),
			0);
		struct fake_send_wr wr = last_send(&f);
		assert_int_equal(wr.opcode, IBV_WR_SEND_WITH_IMM);
		assert_int_equal(wr.imm_data, htonl(values[i]));
		assert_int_equal(ntohl(wr.imm_data), values[i]);
	}
	/* a plain send carries none */
	assert_int_equal(rpma_send(f.conn, f.mr, 0, 4, RPMA_F_COMPLETION_ALWAYS, CTX), 0);
	assert_int_equal(last_send(&f).imm_data, 0);
	fixture_down(&f);
}

/* beyond librpma: the range must lie in the registration, computed without overflow */
static void test_send_range_beyond_the_registration(void **state)
{
	(void)state;
	static const struct {
		size_t offset, len;
		int ret;
	} table[] = {
		{0, SIZE, 0},
		{SIZE - 1, 1, 0},
		{SIZE, 0, 0},
		{0, SIZE + 1, RPMA_E_INVAL},
		{1, SIZE, RPMA_E_INVAL},
		{SIZE, 1, RPMA_E_INVAL},
		{SIZE + 1, 0, RPMA_E_INVAL},
		{SIZE_MAX, 2, RPMA_E_INVAL}, /* offset + len wraps to 1 */
		{2, SIZE_MAX, RPMA_E_INVAL}, /* so does this one */
		{SIZE_MAX, SIZE_MAX, RPMA_E_INVAL},
	};
	struct fixture f;
	fixture_up(&f);
	for (size_t s = 0; s < N_SENDERS; s++) {
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
			unsigned int before = fake_send_count(f.qp);
			log_clear();
			int ret = Senders[s].fn(f.conn, f.mr, table[i].offset, table[i].len,
				RPMA_F_COMPLETION_ALWAYS, CTX);
			if (ret != table[i].ret)
				fail_msg("%s row %zu: %d", Senders[s].name, i, ret);
			if (ret) {
				assert_int_equal(fake_send_count(f.qp), before);
				assert_true(log_has("beyond the registered 1024 bytes", NULL));
			} else {
				assert_int_equal(fake_send_count(f.qp), before + 1);
			}
		}
	}
	fixture_down(&f);
}

/* beyond librpma: a length must fit the 32-bit SGE length */
static void test_send_length_over_4_gib(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	/* the fake registers without touching the memory: a 5 GiB registration is fine */
	const size_t huge = (size_t)5 << 30;
	struct rpma_mr_local *big;
	assert_int_equal(rpma_mr_reg(f.peer, Buf, huge, RPMA_MR_USAGE_SEND, &big), 0);

	assert_int_equal(rpma_send(f.conn, big, 0, UINT32_MAX, RPMA_F_COMPLETION_ALWAYS, CTX), 0);
	assert_int_equal(last_send(&f).sge.length, UINT32_MAX);

	unsigned int before = fake_send_count(f.qp);
	assert_int_equal(
		rpma_send(f.conn, big, 0, (size_t)UINT32_MAX + 1, RPMA_F_COMPLETION_ALWAYS, CTX),
		RPMA_E_INVAL);
	assert_true(log_has("does not fit a work request", NULL));
	assert_int_equal(rpma_send_with_imm(
				 f.conn, big, 1, (size_t)4 << 30, RPMA_F_COMPLETION_ALWAYS, 7, CTX),
		RPMA_E_INVAL);
	assert_int_equal(rpma_recv(f.conn, big, 0, (size_t)UINT32_MAX + 1, CTX), RPMA_E_INVAL);
	assert_int_equal(fake_send_count(f.qp), before);
	assert_int_equal(fake_recv_count(f.qp), 0);

	assert_int_equal(rpma_mr_dereg(&big), 0);
	fixture_down(&f);
}

/* beyond librpma: memory of another peer (another protection domain) is refused */
static void test_memory_of_another_peer_is_refused(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	struct rpma_peer *other = fx_peer();
	struct rpma_mr_local *foreign;
	assert_int_equal(
		rpma_mr_reg(other, Buf, SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &foreign),
		0);

	for (size_t s = 0; s < N_SENDERS; s++)
		assert_int_equal(
			Senders[s].fn(f.conn, foreign, 0, 8, RPMA_F_COMPLETION_ALWAYS, CTX),
			RPMA_E_INVAL);
	assert_int_equal(rpma_recv(f.conn, foreign, 0, 8, CTX), RPMA_E_INVAL);
	assert_true(log_has("registered with another peer", NULL));
	assert_int_equal(fake_send_count(f.qp), 0);
	assert_int_equal(fake_recv_count(f.qp), 0);

	assert_int_equal(rpma_mr_dereg(&foreign), 0);
	assert_int_equal(rpma_peer_delete(&other), 0);
	fixture_down(&f);
}

/* rpma_send(3) ERRORS: RPMA_E_PROVIDER - ibv_post_send(3) failed (returning the errno) */
static void test_send_post_failure_is_provider_error(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	for (size_t s = 0; s < N_SENDERS; s++) {
		log_clear();
		fake_fail(FAKE_IBV_POST_SEND, 1, ENOMEM);
		assert_int_equal(
			Senders[s].fn(f.conn, f.mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR, CTX),
			RPMA_E_PROVIDER);
		assert_true(log_has("ibv_post_send(qp_num=",
			Senders[s].opcode == IBV_WR_SEND ? "opcode=IBV_WR_SEND,"
							 : "opcode=IBV_WR_SEND_WITH_IMM",
			"length=64", "wr_id=0xc0ffee", strerror(ENOMEM), "(errno 12)", NULL));
	}
	assert_int_equal(fake_send_count(f.qp), 0);
	fixture_down(&f);
}

/* ---- rpma_recv ------------------------------------------------------------------------- */

static void test_recv_rejects_bad_arguments(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	assert_int_equal(rpma_recv(NULL, f.mr, 0, 8, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_recv(NULL, NULL, 0, 0, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_recv(f.conn, NULL, 1, 0, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_recv(f.conn, NULL, 0, 1, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_recv(f.conn, f.mr, SIZE, 1, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_recv(f.conn, f.mr, SIZE_MAX, 2, CTX), RPMA_E_INVAL);
	assert_int_equal(fake_recv_count(f.qp), 0);
	fixture_down(&f);
}

static void test_recv_posts_the_range_or_no_sge(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);

	assert_int_equal(rpma_recv(f.conn, f.mr, 24, 1000, CTX), 0);
	struct fake_recv_wr wr = last_recv(&f);
	assert_int_equal(wr.num_sge, 1);
	assert_int_equal(wr.sge.addr, (uintptr_t)Buf + 24);
	assert_int_equal(wr.sge.length, 1000);
	assert_int_equal(wr.wr_id, (uintptr_t)CTX);

	/* NULL/0/0: a receive with no SGE, for 0-byte messages only */
	assert_int_equal(rpma_recv(f.conn, NULL, 0, 0, NULL), 0);
	wr = last_recv(&f);
	assert_int_equal(wr.num_sge, 0);
	assert_true(wr.sg_list_null);

	assert_int_equal(rpma_recv(f.conn, f.mr, SIZE, 0, NULL), 0);
	assert_int_equal(last_recv(&f).num_sge, 0);
	assert_int_equal(fake_send_count(f.qp), 0);
	fixture_down(&f);
}

static void test_recv_post_failure_is_provider_error(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	fake_fail(FAKE_IBV_POST_RECV, 1, ENOMEM);
	assert_int_equal(rpma_recv(f.conn, f.mr, 0, 16, CTX), RPMA_E_PROVIDER);
	assert_true(log_has("ibv_post_recv(qp_num=", "length=16", strerror(ENOMEM), NULL));
	assert_int_equal(fake_recv_count(f.qp), 0);
	fixture_down(&f);
}

/* ---- rpma_write, 0-byte form only ------------------------------------------------------- */

static void test_write_of_zero_bytes(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	assert_int_equal(rpma_write(f.conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, CTX), 0);
	struct fake_send_wr wr = last_send(&f);
	assert_int_equal(wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(wr.num_sge, 0);
	assert_true(wr.sg_list_null);
	assert_int_equal(wr.remote_addr, 0);
	assert_int_equal(wr.rkey, 0);
	assert_int_equal(wr.send_flags, IBV_SEND_SIGNALED);
	assert_int_equal(wr.wr_id, (uintptr_t)CTX);

	assert_int_equal(
		rpma_write(f.conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR, CTX), 0);
	assert_int_equal(last_send(&f).send_flags, 0);
	fixture_down(&f);
}

static void test_write_rejects_every_other_form(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	struct rpma_mr_remote *dst = (struct rpma_mr_remote *)Buf; /* never dereferenced */
	const int A = RPMA_F_COMPLETION_ALWAYS;

	assert_int_equal(rpma_write(NULL, NULL, 0, NULL, 0, 0, A, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_write(f.conn, NULL, 0, NULL, 0, 0, 0, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_write(f.conn, dst, 0, NULL, 0, 0, A, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_write(f.conn, NULL, 0, f.mr, 0, 0, A, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_write(f.conn, NULL, 1, NULL, 0, 0, A, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_write(f.conn, NULL, 0, NULL, 1, 0, A, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_write(f.conn, NULL, 0, NULL, 0, 1, A, CTX), RPMA_E_INVAL);
	assert_int_equal(rpma_write(f.conn, dst, 0, f.mr, 0, 8, A, CTX), RPMA_E_INVAL);
	assert_int_equal(fake_send_count(f.qp), 0);

	fake_fail(FAKE_IBV_POST_SEND, 1, EINVAL);
	assert_int_equal(rpma_write(f.conn, NULL, 0, NULL, 0, 0, A, CTX), RPMA_E_PROVIDER);
	assert_true(log_has("opcode=IBV_WR_RDMA_WRITE", strerror(EINVAL), NULL));
	fixture_down(&f);
}

/* ---- several threads sending on one connection ------------------------------------------ */

#define THREADS 4
#define PER_THREAD 200

struct sender {
	struct fixture *f;
	unsigned int id;
	int failures;
};

static void *send_many(void *p)
{
	struct sender *s = p;
	for (unsigned int i = 0; i < PER_THREAD; i++) {
		uintptr_t ctx = (uintptr_t)s->id << 16 | i;
		if (rpma_send(s->f->conn, s->f->mr, i % SIZE, 1, RPMA_F_COMPLETION_ON_ERROR,
			    (void *)ctx))
			s->failures++;
	}
	return NULL;
}

static void test_concurrent_sends_on_one_connection(void **state)
{
	(void)state;
	struct fixture f;
	fixture_up(&f);
	pthread_t threads[THREADS];
	struct sender senders[THREADS];
	for (unsigned int t = 0; t < THREADS; t++) {
		senders[t] = (struct sender){&f, t + 1, 0};
		assert_int_equal(pthread_create(&threads[t], NULL, send_many, &senders[t]), 0);
	}
	for (unsigned int t = 0; t < THREADS; t++) {
		assert_int_equal(pthread_join(threads[t], NULL), 0);
		assert_int_equal(senders[t].failures, 0);
	}

	/* every request posted once, with its own context and range */
	assert_int_equal(fake_send_count(f.qp), THREADS * PER_THREAD);
	unsigned int seen[THREADS] = {0};
	for (unsigned int i = 0; i < THREADS * PER_THREAD; i++) {
		struct fake_send_wr wr = fake_send_get(f.qp, i);
		unsigned int t = (unsigned int)(wr.wr_id >> 16) - 1;
		unsigned int n = (unsigned int)(wr.wr_id & 0xffff);
		assert_true(t < THREADS);
		assert_int_equal(n, seen[t]); /* in order within each thread */
		assert_int_equal(wr.sge.addr, (uintptr_t)Buf + n % SIZE);
		seen[t]++;
	}
	fixture_down(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(test_flag_values_keep_librpma_values),
		rpma_unit_test(test_send_rejects_null_conn_and_zero_flags),
		rpma_unit_test(test_send_rejects_offset_or_length_without_src),
		rpma_unit_test(test_send_of_zero_bytes_has_no_sge),
		rpma_unit_test(test_send_posts_the_range),
		rpma_unit_test(test_send_flags_decide_signaling),
		rpma_unit_test(test_op_context_comes_back_as_wr_id),
		rpma_unit_test(test_send_with_imm_puts_imm_in_network_order),
		rpma_unit_test(test_send_range_beyond_the_registration),
		rpma_unit_test(test_send_length_over_4_gib),
		rpma_unit_test(test_memory_of_another_peer_is_refused),
		rpma_unit_test(test_send_post_failure_is_provider_error),
		rpma_unit_test(test_recv_rejects_bad_arguments),
		rpma_unit_test(test_recv_posts_the_range_or_no_sge),
		rpma_unit_test(test_recv_post_failure_is_provider_error),
		rpma_unit_test(test_write_of_zero_bytes),
		rpma_unit_test(test_write_rejects_every_other_form),
		rpma_unit_test(test_concurrent_sends_on_one_connection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
