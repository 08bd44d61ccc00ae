// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_workers.c -- fs/runtime/workers.c with real threads and a real pool
 * on a fake FUSE session (libfuse's four calls wrapped at link time): one
 * worker keeps the turn from request to request, and hands it on only to
 * wait for a buffer, so that another worker reads the next request. The
 * test waits on what the fake records (a condition variable), never on a
 * guessed time.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include "runtime/pool.h"
#include "runtime/workers.h"

#define SLOT_SIZE 4096
#define MAX_REQ 256

void log_msg(int prio, const char *fmt, ...)
{
	(void)prio;
	(void)fmt;
}

/* ---- the fake session: requests the test queues, handled in order ---- */

static pthread_mutex_t Lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t Cond = PTHREAD_COND_INITIALIZER;
static struct {
	bool exited;
	unsigned queued, read, handled;
	bool take[MAX_REQ];	 /* request i's payload is taken for a message */
	pthread_t by[MAX_REQ];	 /* the thread that handled request i */
	unsigned taken[MAX_REQ]; /* its slot, when taken */
} S;

int __wrap_fuse_session_exited(struct fuse_session *se);
int __wrap_fuse_session_exited(struct fuse_session *se)
{
	bool e;

	(void)se;
	pthread_mutex_lock(&Lock);
	e = S.exited;
	pthread_mutex_unlock(&Lock);
	return e;
}

void __wrap_fuse_session_exit(struct fuse_session *se);
void __wrap_fuse_session_exit(struct fuse_session *se)
{
	(void)se;
	pthread_mutex_lock(&Lock);
	S.exited = true;
	pthread_cond_broadcast(&Cond);
	pthread_mutex_unlock(&Lock);
}

/* the next request queued, its number in the first bytes of the buffer; 0 once exited */
int __wrap_fuse_session_receive_buf(struct fuse_session *se, struct fuse_buf *buf);
int __wrap_fuse_session_receive_buf(struct fuse_session *se, struct fuse_buf *buf)
{
	unsigned n;

	(void)se;
	pthread_mutex_lock(&Lock);
	while (!S.exited && S.read == S.queued)
		pthread_cond_wait(&Cond, &Lock);
	if (S.exited) {
		pthread_mutex_unlock(&Lock);
		return 0;
	}
	n = S.read++;
	pthread_mutex_unlock(&Lock);
	memcpy(buf->mem, &n, sizeof(n));
	return 64;
}

void __wrap_fuse_session_process_buf(struct fuse_session *se, const struct fuse_buf *buf);
void __wrap_fuse_session_process_buf(struct fuse_session *se, const struct fuse_buf *buf)
{
	unsigned n, slot = POOL_NO_SLOT;

	(void)se;
	memcpy(&n, buf->mem, sizeof(n));
	pthread_mutex_lock(&Lock);
	if (S.take[n]) {
		pthread_mutex_unlock(&Lock);
		/* a WRITE whose payload becomes a message: its buffer is the message's now */
		assert_int_equal(workers_take_buffer(buf->mem, false, &slot), 0);
		pthread_mutex_lock(&Lock);
	}
	S.by[n] = pthread_self();
	S.taken[n] = slot;
	S.handled++;
	pthread_cond_broadcast(&Cond);
	pthread_mutex_unlock(&Lock);
}

static void queue(bool take)
{
	pthread_mutex_lock(&Lock);
	S.take[S.queued++] = take;
	pthread_cond_broadcast(&Cond);
	pthread_mutex_unlock(&Lock);
}

static void wait_handled(unsigned n)
{
	pthread_mutex_lock(&Lock);
	while (S.handled < n)
		pthread_cond_wait(&Cond, &Lock);
	pthread_mutex_unlock(&Lock);
}

/* ---- the workers under test ---- */

static struct {
	struct pool *pool;
	struct workers *ws;
	int done_fd;
} F;

static void start(unsigned slots, unsigned n)
{
	memset(&S, 0, sizeof(S));
	assert_int_equal(pool_new(slots, SLOT_SIZE, &F.pool), 0);
	F.done_fd = eventfd(0, 0);
	assert_true(F.done_fd >= 0);
	assert_int_equal(workers_start(F.pool, (struct fuse_session *)&S, n, F.done_fd, &F.ws), 0);
}

static int teardown(void **state)
{
	(void)state;
	workers_stop(&F.ws);
	assert_null(F.ws);
	pool_delete(&F.pool);
	close(F.done_fd);
	return 0;
}

/* requests one at a time, none taking a buffer: one worker reads and handles them all */
static void one_worker_keeps_the_turn(void **state)
{
	(void)state;
	start(4, 4);
	for (unsigned i = 0; i < 200; i++) {
		queue(false);
		wait_handled(i + 1);
		/* the others had the whole time to take the turn, had it been handed on */
		sched_yield();
	}
	for (unsigned i = 1; i < 200; i++)
		assert_true(pthread_equal(S.by[i], S.by[0]));
}

/*
 * A WRITE takes the buffer and no other is free: its worker hands the turn
 * on and waits for one, and another worker reads the next request; the
 * buffer given back, the first worker goes on
 */
static void waiting_for_a_buffer_hands_the_turn_on(void **state)
{
	unsigned waiting;

	(void)state;
	start(5, 4); /* a buffer each, one free */
	queue(true); /* takes it, swaps in the free one */
	wait_handled(1);
	queue(true); /* takes it: none free, its worker must wait */
	wait_handled(2);
	assert_true(pthread_equal(S.by[0], S.by[1]));
	waiting = S.taken[1];
	queue(false);
	wait_handled(3);
	assert_false(pthread_equal(S.by[2], S.by[1]));
	/* the first worker gets a buffer back; the turn stays with the one that has it */
	pool_put(F.pool, S.taken[0]);
	queue(false);
	wait_handled(4);
	assert_true(pthread_equal(S.by[3], S.by[2]));
	pool_put(F.pool, waiting);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(one_worker_keeps_the_turn, teardown),
		cmocka_unit_test_teardown(waiting_for_a_buffer_hands_the_turn_on, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
