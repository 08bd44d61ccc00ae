// SPDX-License-Identifier: BSD-3-Clause
/* engine.c -- the completion thread (see engine.h) */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <librpma.h>

#include "clock.h"
#include "engine.h"
#include "link.h"
#include "log.h"
#include "mount.h"

#define WC_BATCH 32
#define EPOLL_BATCH 32

struct engine {
	struct mount *m;
	int epfd, timerfd, wakefd;
	struct engine_src wake_src, timer_src;
	pthread_t thread;
	bool running;

	pthread_mutex_t lock;
	pthread_cond_t idle;
	bool stop;
	uint64_t armed_ms;	/* what the timerfd is set to, 0: nothing */
	unsigned attempts;	/* connection threads still running */
	struct link_attempt *results;
	struct link *dead;	/* links to free after the current batch */
};

static int watch(struct engine *e, int fd, struct engine_src *src)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = src};

	return epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev);
}

int engine_new(struct mount *m, struct engine **engine_ptr)
{
	struct engine *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->m = m;
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	e->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	e->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->wake_src.type = SRC_WAKE;
	e->timer_src.type = SRC_TIMER;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->idle, NULL);
	if (e->epfd < 0 || e->timerfd < 0 || e->wakefd < 0 ||
		watch(e, e->wakefd, &e->wake_src) || watch(e, e->timerfd, &e->timer_src)) {
		int err = -errno;

		engine_delete(&e);
		return err;
	}
	*engine_ptr = e;
	return 0;
}

void engine_delete(struct engine **engine_ptr)
{
	struct engine *e = *engine_ptr;

	if (!e)
		return;
	if (e->epfd >= 0)
		close(e->epfd);
	if (e->timerfd >= 0)
		close(e->timerfd);
	if (e->wakefd >= 0)
		close(e->wakefd);
	pthread_cond_destroy(&e->idle);
	pthread_mutex_destroy(&e->lock);
	free(e);
	*engine_ptr = NULL;
}

void engine_kick(struct engine *e)
{
	uint64_t one = 1;

	if (write(e->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("cannot wake the completion thread: %s", strerror(errno));
}

static void set_timer(struct engine *e, uint64_t at_ms)
{
	struct itimerspec its = {0};

	/* TFD_TIMER_ABSTIME with CLOCK_MONOTONIC: at_ms is on the same clock */
	its.it_value.tv_sec = (time_t)(at_ms / 1000);
	its.it_value.tv_nsec = (long)(at_ms % 1000) * 1000000;
	if (at_ms == 0)
		its.it_value.tv_nsec = 0;
	timerfd_settime(e->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
	e->armed_ms = at_ms;
}

void engine_arm(struct engine *e, uint64_t at_ms)
{
	if (at_ms == 0)
		return;
	pthread_mutex_lock(&e->lock);
	if (e->armed_ms == 0 || at_ms < e->armed_ms)
		set_timer(e, at_ms);
	pthread_mutex_unlock(&e->lock);
}

void engine_attempt_started(struct engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->attempts++;
	pthread_mutex_unlock(&e->lock);
}

void engine_deliver(struct engine *e, struct link_attempt *a)
{
	pthread_mutex_lock(&e->lock);
	a->next = e->results;
	e->results = a;
	pthread_mutex_unlock(&e->lock);
	engine_kick(e);
}

int engine_attach(struct engine *e, struct link *link)
{
	/* the loop drains each fd until it would block */
	fcntl(link->event_fd, F_SETFL, fcntl(link->event_fd, F_GETFL) | O_NONBLOCK);
	fcntl(link->compl_fd, F_SETFL, fcntl(link->compl_fd, F_GETFL) | O_NONBLOCK);
	link->ev_src = (struct engine_src){.type = SRC_EVENT, .link = link};
	link->cq_src = (struct engine_src){.type = SRC_CQ, .link = link};
	if (watch(e, link->event_fd, &link->ev_src))
		return -errno;
	if (watch(e, link->compl_fd, &link->cq_src)) {
		int err = -errno;

		epoll_ctl(e->epfd, EPOLL_CTL_DEL, link->event_fd, NULL);
		return err;
	}
	return 0;
}

void engine_bury(struct engine *e, struct link *link)
{
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, link->event_fd, NULL);
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, link->compl_fd, NULL);
	link->next_dead = e->dead;
	e->dead = link;
}

static void free_dead(struct engine *e)
{
	while (e->dead) {
		struct link *link = e->dead;

		e->dead = link->next_dead;
		link_delete(&link);
	}
}

/* results of connection attempts, oldest first */
static void take_results(struct engine *e)
{
	struct link_attempt *list, *rev = NULL;

	pthread_mutex_lock(&e->lock);
	list = e->results;
	e->results = NULL;
	pthread_mutex_unlock(&e->lock);

	while (list) {
		struct link_attempt *next = list->next;

		list->next = rev;
		rev = list;
		list = next;
	}
	while (rev) {
		struct link_attempt *a = rev;

		rev = a->next;
		if (a->link && engine_attach(e, a->link)) {
			snprintf(a->why, sizeof(a->why), "cannot watch the connection: %s",
				strerror(errno));
			link_disconnect(a->link);
			link_delete(&a->link);
		}
		spool_attempt_done(a->sp, a);
		free(a);

		pthread_mutex_lock(&e->lock);
		e->attempts--;
		pthread_cond_broadcast(&e->idle);
		pthread_mutex_unlock(&e->lock);
	}
}

static void on_event(struct link *link)
{
	enum rpma_conn_event ev;
	int ret;

	for (;;) {
		ret = rpma_conn_next_event(link->conn, &ev);
		if (ret == RPMA_E_NO_EVENT)
			return;
		if (ret) {
			spool_link_down(link->sp, "connection event channel failed");
			return;
		}
		if (ev != RPMA_CONN_ESTABLISHED)
			spool_link_down(link->sp, rpma_utils_conn_event_2str(ev));
	}
}

static void on_completions(struct engine *e, struct link *link)
{
	struct ibv_wc wc[WC_BATCH];
	int n, ret;

	(void)e;
	ret = rpma_cq_wait(link->cq);
	if (ret && ret != RPMA_E_NO_COMPLETION) {
		spool_link_down(link->sp, "completion channel failed");
		return;
	}
	for (;;) {
		ret = rpma_cq_get_wc(link->cq, WC_BATCH, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION)
			break;
		if (ret) {
			spool_link_down(link->sp, "cannot poll the completion queue");
			break;
		}
		spool_completions(link->sp, link, wc, n);
		if (n < WC_BATCH)
			break;
	}
	spool_after_completions(link->sp);
}

static void on_timer(struct engine *e)
{
	uint64_t expirations, now = now_ms(), next = 0;

	if (read(e->timerfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_err("timer read failed: %s", strerror(errno));
	pthread_mutex_lock(&e->lock);
	e->armed_ms = 0;
	pthread_mutex_unlock(&e->lock);

	for (unsigned i = 0; i < e->m->nspools; i++) {
		uint64_t at = spool_tick(&e->m->spools[i], now);

		if (at && (!next || at < next))
			next = at;
	}
	engine_arm(e, next);
}

static void *engine_main(void *arg)
{
	struct engine *e = arg;
	struct epoll_event evs[EPOLL_BATCH];

	for (;;) {
		int n = epoll_wait(e->epfd, evs, EPOLL_BATCH, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err("epoll_wait failed: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			struct engine_src *src = evs[i].data.ptr;
			uint64_t count;

			switch (src->type) {
			case SRC_WAKE:
				if (read(e->wakefd, &count, sizeof(count)) < 0 && errno != EAGAIN)
					log_err("wake read failed: %s", strerror(errno));
				take_results(e);
				on_timer(e);
				break;
			case SRC_TIMER:
				on_timer(e);
				break;
			case SRC_EVENT:
				on_event(src->link);
				break;
			case SRC_CQ:
				on_completions(e, src->link);
				break;
			}
		}
		free_dead(e);

		pthread_mutex_lock(&e->lock);
		bool stop = e->stop && e->attempts == 0;
		pthread_mutex_unlock(&e->lock);
		if (stop)
			break;
	}
	return NULL;
}

int engine_start(struct engine *e)
{
	int ret = pthread_create(&e->thread, NULL, engine_main, e);

	/* named for top -H and the comm files under /proc/PID/task */
	if (!ret)
		pthread_setname_np(e->thread, "rpmafs-engine");

	if (ret)
		return -ret;
	e->running = true;
	return 0;
}

void engine_stop(struct engine *e)
{
	if (!e->running)
		return;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	pthread_mutex_unlock(&e->lock);
	/* connection threads finish within their connect timeout */
	engine_kick(e);
	pthread_join(e->thread, NULL);
	e->running = false;
	take_results(e);
	for (unsigned i = 0; i < e->m->nspools; i++)
		spool_close(&e->m->spools[i]);
	free_dead(e);
}
