// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_loop.c -- fs/loop.c: a real loop thread; the test waits on what the
 * callbacks record (a condition variable), never on a guessed time.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtime/clock.h"
#include "runtime/loop.h"

void log_msg(int prio, const char *fmt, ...)
{
	(void)prio;
	(void)fmt;
}

/*
 * write(2) calls of the loop (linked with --wrap=write): its only write is
 * the eventfd's, the wake-up of loop_kick from another thread
 */
static unsigned Writes;
ssize_t __real_write(int fd, const void *buf, size_t count);
ssize_t __wrap_write(int fd, const void *buf, size_t count);
ssize_t __wrap_write(int fd, const void *buf, size_t count)
{
	__atomic_add_fetch(&Writes, 1, __ATOMIC_SEQ_CST);
	return __real_write(fd, buf, count);
}

/* timerfd_settime(2) calls (--wrap=timerfd_settime) */
static unsigned Settimes;
int __real_timerfd_settime(
	int fd, int flags, const struct itimerspec *new_value, struct itimerspec *old_value);
int __wrap_timerfd_settime(
	int fd, int flags, const struct itimerspec *new_value, struct itimerspec *old_value);
int __wrap_timerfd_settime(
	int fd, int flags, const struct itimerspec *new_value, struct itimerspec *old_value)
{
	__atomic_add_fetch(&Settimes, 1, __ATOMIC_SEQ_CST);
	return __real_timerfd_settime(fd, flags, new_value, old_value);
}

/* read(2) calls of a timerfd (--wrap=read): the loop's of its expirations */
static unsigned Timer_reads;
ssize_t __real_read(int fd, void *buf, size_t count);
ssize_t __wrap_read(int fd, void *buf, size_t count);
ssize_t __wrap_read(int fd, void *buf, size_t count)
{
	char path[32], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		if (strcmp(target, "anon_inode:[timerfd]") == 0)
			__atomic_add_fetch(&Timer_reads, 1, __ATOMIC_SEQ_CST);
	}
	return __real_read(fd, buf, count);
}

static pthread_mutex_t Lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t Cond = PTHREAD_COND_INITIALIZER;
static unsigned Ticks, Reads, Tasks, After;
static uint64_t Next;	/* what the tick returns once */
static uint64_t Always; /* what it returns after that */
static pthread_t Loop_thread;
static char Order[16];
static unsigned Norder;
static struct loop *Loop;

static void note(unsigned *counter, char what)
{
	pthread_mutex_lock(&Lock);
	(*counter)++;
	if (Norder < sizeof(Order) - 1)
		Order[Norder++] = what;
	pthread_cond_broadcast(&Cond);
	pthread_mutex_unlock(&Lock);
}

static void wait_for(unsigned *counter, unsigned n)
{
	pthread_mutex_lock(&Lock);
	while (*counter < n)
		pthread_cond_wait(&Cond, &Lock);
	pthread_mutex_unlock(&Lock);
}

static uint64_t tick(void *arg, uint64_t now)
{
	uint64_t next;

	(void)arg;
	(void)now;
	Loop_thread = pthread_self();
	pthread_mutex_lock(&Lock);
	next = Next ? Next : Always;
	Next = 0;
	pthread_mutex_unlock(&Lock);
	note(&Ticks, 't');
	return next;
}

static int setup(void **state)
{
	(void)state;
	Ticks = Reads = Tasks = After = 0;
	Next = Always = 0;
	Norder = 0;
	assert_int_equal(loop_new(tick, NULL, &Loop), 0);
	assert_int_equal(loop_start(Loop, "test-loop"), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	loop_stop(Loop);
	loop_delete(&Loop);
	assert_null(Loop);
	return 0;
}

static void armed_deadline_runs_the_tick(void **state)
{
	(void)state;
	loop_arm(Loop, now_ms() + 5);
	wait_for(&Ticks, 1);
	assert_true(pthread_equal(Loop_thread, pthread_self()) == 0);
}

static void tick_rearms_what_it_returns(void **state)
{
	(void)state;
	pthread_mutex_lock(&Lock);
	Next = now_ms() + 3;
	pthread_mutex_unlock(&Lock);
	loop_kick(Loop);
	wait_for(&Ticks, 2); /* the kick's tick, then the deadline it returned */
}

static void earlier_deadline_wins(void **state)
{
	(void)state;
	/* a far deadline, then an earlier one: the earlier one fires */
	loop_arm(Loop, now_ms() + 3600 * 1000);
	loop_arm(Loop, now_ms() + 2);
	wait_for(&Ticks, 1);
}

struct fd_watch {
	int fd;
	struct loop_watch w;
};

static void on_readable(void *arg)
{
	struct fd_watch *fw = arg;
	uint64_t v;

	if (read(fw->fd, &v, sizeof(v)) == sizeof(v))
		note(&Reads, 'r');
}

static void watched_fd_calls_back(void **state)
{
	struct fd_watch fw = {.fd = eventfd(0, EFD_NONBLOCK)};
	uint64_t one = 1;

	(void)state;
	fw.w = (struct loop_watch){.fn = on_readable, .arg = &fw};
	assert_int_equal(loop_watch(Loop, fw.fd, &fw.w), 0);
	assert_int_equal(write(fw.fd, &one, sizeof(one)), sizeof(one));
	wait_for(&Reads, 1);
	assert_int_equal(write(fw.fd, &one, sizeof(one)), sizeof(one));
	wait_for(&Reads, 2);
	loop_unwatch(Loop, fw.fd);
	close(fw.fd);
}

static void watch_of_a_bad_fd_fails(void **state)
{
	struct loop_watch w = {.fn = on_readable};

	(void)state;
	assert_int_equal(loop_watch(Loop, -1, &w), -EBADF);
}

static void task_fn(void *arg)
{
	(void)arg;
	note(&Tasks, 'k');
}

static char Task_order[4];
static unsigned Ntask_order;

static void numbered_task(void *arg)
{
	pthread_mutex_lock(&Lock);
	Task_order[Ntask_order++] = *(const char *)arg;
	pthread_mutex_unlock(&Lock);
	note(&Tasks, 'k');
}

static void tasks_run_oldest_first_then_the_tick(void **state)
{
	static const char names[] = "012";
	struct loop_task t[3];

	(void)state;
	Ntask_order = 0;
	for (int i = 0; i < 3; i++)
		t[i] = (struct loop_task){.fn = numbered_task, .arg = (void *)&names[i]};
	/* queued before the thread runs: one wake-up finds all three */
	loop_stop(Loop);
	loop_delete(&Loop);
	assert_int_equal(loop_new(tick, NULL, &Loop), 0);
	Norder = Ticks = 0;
	for (int i = 0; i < 3; i++)
		loop_run_soon(Loop, &t[i]);
	assert_int_equal(loop_start(Loop, "test-loop"), 0);
	wait_for(&Tasks, 3);
	wait_for(&Ticks, 1);
	assert_memory_equal(Task_order, "012", 3);
	/* a tick follows the tasks of a wake-up */
	assert_int_equal(Order[0], 'k');
	assert_int_equal(Order[Norder - 1], 't');
}

static void after_fn(void *arg)
{
	(void)arg;
	note(&After, 'a');
}

static struct loop_task After_task = {.fn = after_fn};

/* a task queues an after-batch task: it runs once the batch is handled */
static void queue_after(void *arg)
{
	(void)arg;
	loop_after_batch(Loop, &After_task);
	note(&Tasks, 'k');
}

static void after_batch_runs_after_the_batch(void **state)
{
	struct loop_task t = {.fn = queue_after};

	(void)state;
	loop_run_soon(Loop, &t);
	wait_for(&After, 1);
	/* the task, the tick of its wake-up, then the after-batch task */
	assert_int_equal(Order[0], 'k');
	assert_int_equal(Order[1], 't');
	assert_int_equal(Order[2], 'a');
}

/* a hold keeps the loop running for a task still to come */
static void *late_task(void *arg)
{
	static struct loop_task t = {.fn = task_fn};

	(void)arg;
	wait_for(&Ticks, 1); /* loop_stop has kicked the loop */
	loop_run_soon(Loop, &t);
	loop_release(Loop);
	return NULL;
}

static void stop_waits_for_holds(void **state)
{
	pthread_t th;

	(void)state;
	loop_hold(Loop);
	assert_int_equal(pthread_create(&th, NULL, late_task, NULL), 0);
	loop_stop(Loop);
	/* stopped only after the held task ran */
	assert_int_equal(Tasks, 1);
	pthread_join(th, NULL);
}

static void stopped_loop_runs_queued_tasks(void **state)
{
	struct loop_task t = {.fn = task_fn};

	(void)state;
	loop_stop(Loop);
	loop_run_soon(Loop, &t);
	loop_stop(Loop); /* again: runs what was queued on this thread */
	assert_int_equal(Tasks, 1);
}

/* a watch's callback hands the loop thread a task: it runs in the same batch, no wake-up */
static struct loop_task Own_task = {.fn = task_fn};
static int Own_fd = -1;

static void hand_over_on_the_loop(void *arg)
{
	uint64_t v;

	(void)arg;
	if (read(Own_fd, &v, sizeof(v)) != sizeof(v))
		return;
	loop_run_soon(Loop, &Own_task);
	note(&Reads, 'r');
}

static void task_from_the_loop_thread_needs_no_wakeup(void **state)
{
	struct loop_watch w = {.fn = hand_over_on_the_loop};
	uint64_t one = 1;
	unsigned writes;

	(void)state;
	Own_fd = eventfd(0, EFD_NONBLOCK);
	assert_true(Own_fd >= 0);
	assert_int_equal(loop_watch(Loop, Own_fd, &w), 0);
	writes = __atomic_load_n(&Writes, __ATOMIC_SEQ_CST);
	assert_int_equal(__real_write(Own_fd, &one, sizeof(one)), sizeof(one));
	wait_for(&Tasks, 1);
	wait_for(&Ticks, 1);
	/* the callback, its task, then the tick of the batch; and no eventfd write by the loop */
	assert_memory_equal(Order, "rkt", 3);
	assert_int_equal(__atomic_load_n(&Writes, __ATOMIC_SEQ_CST), writes);
	loop_unwatch(Loop, Own_fd);
	close(Own_fd);
}

/*
 * Ticks run for tasks that return the deadline already set set no timer
 * again. A tick's count is taken inside the tick, before the loop sets the
 * timer it returned: only the next tick says that setting is done, so the
 * count is read after the second tick and checked after the fourth.
 */
static void same_deadline_sets_no_timer(void **state)
{
	struct loop_task t[4] = {
		{.fn = task_fn}, {.fn = task_fn}, {.fn = task_fn}, {.fn = task_fn}};
	unsigned set = 0;
	int i;

	(void)state;
	pthread_mutex_lock(&Lock);
	Always = now_ms() + 600000;
	pthread_mutex_unlock(&Lock);
	for (i = 0; i < 4; i++) {
		loop_run_soon(Loop, &t[i]);
		wait_for(&Ticks, i + 1);
		if (i == 1)
			set = __atomic_load_n(&Settimes, __ATOMIC_SEQ_CST);
	}
	assert_int_equal(__atomic_load_n(&Settimes, __ATOMIC_SEQ_CST), set);
	pthread_mutex_lock(&Lock);
	Always = 0;
	pthread_mutex_unlock(&Lock);
}

/*
 * The deadline fires; the tick sets the next one, which clears the
 * expiration: no read of the timerfd, and epoll does not report it again
 * (a task run later finds the tick count at two: the expiry's, its own)
 */
static unsigned expire_then_run_a_task(void)
{
	struct loop_task t = {.fn = task_fn};
	unsigned reads = __atomic_load_n(&Timer_reads, __ATOMIC_SEQ_CST);

	loop_arm(Loop, now_ms() + 2);
	wait_for(&Ticks, 1);
	loop_run_soon(Loop, &t);
	wait_for(&Tasks, 1);
	wait_for(&Ticks, 2);
	/* an expiry left readable would have ticked again and again by now */
	assert_int_equal(__atomic_load_n(&Ticks, __ATOMIC_SEQ_CST), 2);
	return __atomic_load_n(&Timer_reads, __ATOMIC_SEQ_CST) - reads;
}

static void expiry_set_again_is_not_read(void **state)
{
	(void)state;
	pthread_mutex_lock(&Lock);
	Next = now_ms() + 600000;
	pthread_mutex_unlock(&Lock);
	assert_int_equal(expire_then_run_a_task(), 0);
}

/* the tick sets nothing: the expiration is read, or epoll would report it forever */
static void expiry_not_set_again_is_read(void **state)
{
	(void)state;
	assert_int_equal(expire_then_run_a_task(), 1);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(armed_deadline_runs_the_tick),
		T(tick_rearms_what_it_returns),
		T(earlier_deadline_wins),
		T(watched_fd_calls_back),
		T(watch_of_a_bad_fd_fails),
		T(tasks_run_oldest_first_then_the_tick),
		T(after_batch_runs_after_the_batch),
		T(stop_waits_for_holds),
		T(task_from_the_loop_thread_needs_no_wakeup),
		T(same_deadline_sets_no_timer),
		T(expiry_set_again_is_not_read),
		T(expiry_not_set_again_is_read),
		T(stopped_loop_runs_queued_tasks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
