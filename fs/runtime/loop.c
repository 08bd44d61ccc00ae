// SPDX-License-Identifier: BSD-3-Clause
/* loop.c -- a plain event loop thread (see loop.h) */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "loop.h"

#define EPOLL_BATCH 32

struct loop {
	loop_tick_fn tick;
	void *tick_arg;
	int epfd, timerfd, wakefd;
	struct loop_watch wake_watch, timer_watch;
	pthread_t thread;
	bool running;

	pthread_mutex_t lock;
	bool stop;
	unsigned holds;		/* loop_hold() not released yet */
	uint64_t armed_ms;	/* what the timerfd is set to, 0: nothing */
	unsigned long timer_sets; /* timerfd_settime calls so far (on_timer) */
	struct loop_task *soon_head, **soon_tail;
	struct loop_task *after;	/* loop thread only */
	bool kicked;			/* loop thread only: kicked by itself, see loop_kick */
};

/* the loop this thread runs, if it is a loop thread */
static __thread struct loop *this_loop;

static void on_wake(void *arg);
static void on_timer(void *arg);

int loop_new(loop_tick_fn tick, void *arg, struct loop **loop_ptr)
{
	struct loop *loop = calloc(1, sizeof(*loop));

	if (!loop)
		return -ENOMEM;
	loop->tick = tick;
	loop->tick_arg = arg;
	loop->soon_tail = &loop->soon_head;
	loop->wake_watch = (struct loop_watch){.fn = on_wake, .arg = loop};
	loop->timer_watch = (struct loop_watch){.fn = on_timer, .arg = loop};
	pthread_mutex_init(&loop->lock, NULL);
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	loop->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (loop->epfd < 0 || loop->timerfd < 0 || loop->wakefd < 0 ||
		loop_watch(loop, loop->wakefd, &loop->wake_watch) ||
		loop_watch(loop, loop->timerfd, &loop->timer_watch)) {
		int err = errno ? -errno : -ENOMEM;

		loop_delete(&loop);
		return err;
	}
	*loop_ptr = loop;
	return 0;
}

void loop_delete(struct loop **loop_ptr)
{
	struct loop *loop = *loop_ptr;

	if (!loop)
		return;
	if (loop->epfd >= 0)
		close(loop->epfd);
	if (loop->timerfd >= 0)
		close(loop->timerfd);
	if (loop->wakefd >= 0)
		close(loop->wakefd);
	pthread_mutex_destroy(&loop->lock);
	free(loop);
	*loop_ptr = NULL;
}

int loop_watch(struct loop *loop, int fd, struct loop_watch *w)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};

	return epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void loop_unwatch(struct loop *loop, int fd)
{
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
}

void loop_kick(struct loop *loop)
{
	uint64_t one = 1;

	/*
	 * On the loop thread itself (a reply sent from the loop releases an
	 * inbox slot, a completion reaped there hands over a task) the batch
	 * it is in ends with the tasks and the tick: no eventfd write, no
	 * epoll_wait return and eventfd read for what this thread already knows
	 */
	if (this_loop == loop) {
		loop->kicked = true;
		return;
	}

	if (write(loop->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("cannot wake the loop thread: %s", strerror(errno));
}

/* under loop->lock */
static void set_timer(struct loop *loop, uint64_t at_ms)
{
	struct itimerspec its = {0};

	/* TFD_TIMER_ABSTIME with CLOCK_MONOTONIC: at_ms is on now_ms()'s clock */
	its.it_value.tv_sec = (time_t)(at_ms / 1000);
	its.it_value.tv_nsec = (long)(at_ms % 1000) * 1000000;
	timerfd_settime(loop->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
	loop->armed_ms = at_ms;
	loop->timer_sets++;
}

void loop_arm(struct loop *loop, uint64_t at_ms)
{
	if (at_ms == 0)
		return;
	pthread_mutex_lock(&loop->lock);
	if (loop->armed_ms == 0 || at_ms < loop->armed_ms)
		set_timer(loop, at_ms);
	pthread_mutex_unlock(&loop->lock);
}

void loop_run_soon(struct loop *loop, struct loop_task *t)
{
	t->next = NULL;
	pthread_mutex_lock(&loop->lock);
	*loop->soon_tail = t;
	loop->soon_tail = &t->next;
	pthread_mutex_unlock(&loop->lock);
	loop_kick(loop);
}

void loop_after_batch(struct loop *loop, struct loop_task *t)
{
	t->next = loop->after;
	loop->after = t;
}

void loop_hold(struct loop *loop)
{
	pthread_mutex_lock(&loop->lock);
	loop->holds++;
	pthread_mutex_unlock(&loop->lock);
}

void loop_release(struct loop *loop)
{
	bool wake;

	pthread_mutex_lock(&loop->lock);
	loop->holds--;
	wake = loop->stop && loop->holds == 0;
	pthread_mutex_unlock(&loop->lock);
	if (wake)
		loop_kick(loop);
}

static void run_tasks(struct loop *loop)
{
	struct loop_task *t;

	pthread_mutex_lock(&loop->lock);
	t = loop->soon_head;
	loop->soon_head = NULL;
	loop->soon_tail = &loop->soon_head;
	pthread_mutex_unlock(&loop->lock);
	while (t) {
		struct loop_task *next = t->next;

		t->fn(t->arg); /* may free t */
		t = next;
	}
}

static void run_after_batch(struct loop *loop)
{
	while (loop->after) {
		struct loop_task *t = loop->after;

		loop->after = t->next;
		t->fn(t->arg);
	}
}

static void run_tick(struct loop *loop)
{
	uint64_t now = now_ms(), next;

	/*
	 * A deadline not reached yet is still set: a tick run for a task (one
	 * per inbox read, say) that returns it again sets no timer, where
	 * forgetting it cost a timerfd_settime per tick. A deadline later than
	 * needed costs at most one early tick.
	 */
	pthread_mutex_lock(&loop->lock);
	if (loop->armed_ms <= now)
		loop->armed_ms = 0;
	pthread_mutex_unlock(&loop->lock);
	next = loop->tick(loop->tick_arg, now);
	loop_arm(loop, next);
}

static unsigned long timer_sets(struct loop *loop)
{
	unsigned long n;

	pthread_mutex_lock(&loop->lock);
	n = loop->timer_sets;
	pthread_mutex_unlock(&loop->lock);
	return n;
}

/*
 * The tick first, then the read of the expiration only if nobody set the
 * timer meanwhile: timerfd_settime clears the expirations (the timerfd is
 * no longer readable, and epoll stops reporting it), and the tick usually
 * sets the next deadline, so the read would be one system call per expiry
 * for nothing. Without a new setting the read is what clears it.
 */
static void on_timer(void *arg)
{
	struct loop *loop = arg;
	unsigned long sets = timer_sets(loop);
	uint64_t expirations;

	run_tick(loop);
	if (timer_sets(loop) != sets)
		return;
	if (read(loop->timerfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_err("timer read failed: %s", strerror(errno));
}

static void on_wake(void *arg)
{
	struct loop *loop = arg;
	uint64_t count;

	if (read(loop->wakefd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_err("wake read failed: %s", strerror(errno));
	run_tasks(loop);
	run_tick(loop);
}

static void *loop_main(void *arg)
{
	struct loop *loop = arg;
	struct epoll_event evs[EPOLL_BATCH];

	this_loop = loop;
	for (;;) {
		int n = epoll_wait(loop->epfd, evs, EPOLL_BATCH, -1);
		bool stop;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err("epoll_wait failed: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			struct loop_watch *w = evs[i].data.ptr;

			w->fn(w->arg);
		}
		run_after_batch(loop);
		/* what this thread handed itself during the batch, as on_wake would */
		while (loop->kicked) {
			loop->kicked = false;
			run_tasks(loop);
			run_tick(loop);
			run_after_batch(loop);
		}

		pthread_mutex_lock(&loop->lock);
		stop = loop->stop && loop->holds == 0;
		pthread_mutex_unlock(&loop->lock);
		if (stop)
			break;
	}
	return NULL;
}

int loop_start(struct loop *loop, const char *name)
{
	int ret = pthread_create(&loop->thread, NULL, loop_main, loop);

	if (ret)
		return -ret;
	/* named for top -H and the comm files under /proc/PID/task */
	pthread_setname_np(loop->thread, name);
	loop->running = true;
	return 0;
}

void loop_stop(struct loop *loop)
{
	if (loop->running) {
		pthread_mutex_lock(&loop->lock);
		loop->stop = true;
		pthread_mutex_unlock(&loop->lock);
		loop_kick(loop);
		pthread_join(loop->thread, NULL);
		loop->running = false;
	}
	run_tasks(loop);
	run_after_batch(loop);
}
