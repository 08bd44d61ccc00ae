// SPDX-License-Identifier: BSD-3-Clause
/*
 * workers.c -- the threads that read FUSE requests into pool buffers
 *
 * Each worker owns one pool buffer and reads requests into it with
 * fuse_session_receive_buf(). When a WRITE's payload is taken for a message
 * (workers_take_buffer), the worker swaps in a free buffer; if none is free
 * it waits for one after handing the turn on -- that is the back-pressure.
 * Reading and handling happen while holding the turn, so messages reach their
 * spool in the order the kernel queued the writes, whatever thread reads.
 * A worker keeps the turn from one request to the next and hands it on only
 * to wait for a buffer: handing it on after every request bought no
 * parallelism (only the holder reads or handles) and cost the futex calls
 * of a hand-over per request, the waiter woken to find the turn taken again.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include "log.h"
#include "pool.h"
#include "workers.h"

struct worker {
	struct workers *ws;
	pthread_t tid;
	bool started;
	unsigned slot;
	int done_fd;
};

struct workers {
	struct pool *pool;
	struct fuse_session *se;
	/*
	 * Workers take turns reading /dev/fuse and handle each request before
	 * passing the turn on, so messages enter their spool in the order the
	 * kernel queued the writes; only waiting for a buffer happens outside.
	 */
	pthread_mutex_t turn;
	unsigned n;
	struct worker *w;
};

static __thread struct worker *self;

static void interrupt_handler(int sig)
{
	(void)sig;
}

int workers_take_buffer(const void *payload, bool nonblock, unsigned *slot)
{
	unsigned mine, spare;
	int ret;

	if (!self || self->slot == POOL_NO_SLOT ||
		pool_slot_of(self->ws->pool, payload) != self->slot)
		return -EINVAL;
	mine = self->slot;
	ret = pool_get(self->ws->pool, false, &spare);
	if (ret == -EAGAIN && !nonblock)
		spare = POOL_NO_SLOT; /* fetched after the turn is handed on */
	else if (ret)
		return ret;
	self->slot = spare;
	*slot = mine;
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct workers *ws = w->ws;
	struct fuse_session *se = ws->se;
	struct fuse_buf fbuf;
	uint64_t one = 1;
	bool turn = false;

	self = w;
	for (;;) {
		int res;

		if (w->slot == POOL_NO_SLOT) {
			/* the only wait outside the turn: another worker reads meanwhile */
			if (turn) {
				pthread_mutex_unlock(&ws->turn);
				turn = false;
			}
			if (pool_get(ws->pool, true, &w->slot))
				break;
		}

		memset(&fbuf, 0, sizeof(fbuf));
		fbuf.mem = pool_slot_ptr(ws->pool, w->slot);
		fbuf.size = pool_slot_size(ws->pool);

		if (!turn) {
			pthread_mutex_lock(&ws->turn);
			turn = true;
		}
		if (fuse_session_exited(se))
			break;
		res = fuse_session_receive_buf(se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0) {
			if (res < 0)
				log_err("reading /dev/fuse failed: %s", strerror(-res));
			fuse_session_exit(se);
			break;
		}
		if (fbuf.mem != pool_slot_ptr(ws->pool, w->slot) || (fbuf.flags & FUSE_BUF_IS_FD)) {
			/* libfuse used a buffer of its own: should never happen */
			log_err("request not read into the registered pool");
			fuse_session_exit(se);
			break;
		}
		fuse_session_process_buf(se, &fbuf);
	}
	if (turn)
		pthread_mutex_unlock(&ws->turn);

	if (w->slot != POOL_NO_SLOT) {
		pool_put(ws->pool, w->slot);
		w->slot = POOL_NO_SLOT;
	}
	if (write(w->done_fd, &one, sizeof(one)) < 0)
		log_err("cannot report a worker's exit: %s", strerror(errno));
	return NULL;
}

int workers_start(struct pool *pool, struct fuse_session *se, unsigned n, int done_fd,
	struct workers **ws_ptr)
{
	struct workers *ws = calloc(1, sizeof(*ws));
	struct sigaction sa;
	int ret;

	if (!ws)
		return -ENOMEM;
	ws->pool = pool;
	ws->se = se;
	ws->n = n;
	pthread_mutex_init(&ws->turn, NULL);
	*ws_ptr = ws;

	/* SIGUSR1 interrupts a worker's read(); no SA_RESTART on purpose */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = interrupt_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	ws->w = calloc(n, sizeof(*ws->w));
	if (!ws->w)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &ws->w[i];

		w->ws = ws;
		w->done_fd = done_fd;
		ret = pool_get(pool, false, &w->slot);
		if (ret)
			return ret;
		ret = pthread_create(&w->tid, NULL, worker_main, w);
		if (ret) {
			pool_put(pool, w->slot);
			return -ret;
		}
		w->started = true;
		pthread_setname_np(w->tid, "rpmafs-worker");
	}
	return 0;
}

void workers_stop(struct workers **ws_ptr)
{
	struct workers *ws = *ws_ptr;
	unsigned left;

	if (!ws)
		return;
	fuse_session_exit(ws->se);
	/* a worker waiting for a buffer gets -ESHUTDOWN; puts still work */
	pool_close(ws->pool);
	/*
	 * Only the worker holding the turn is in read(); the others wait for
	 * the turn. Interrupt them all, again and again (a signal can land
	 * just before read()), until every one has returned.
	 */
	do {
		left = 0;
		for (unsigned i = 0; ws->w && i < ws->n; i++)
			if (ws->w[i].started)
				pthread_kill(ws->w[i].tid, SIGUSR1);
		for (unsigned i = 0; ws->w && i < ws->n; i++) {
			struct worker *w = &ws->w[i];
			struct timespec ts;

			if (!w->started)
				continue;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (pthread_timedjoin_np(w->tid, NULL, &ts) == 0)
				w->started = false;
			else
				left++;
		}
	} while (left);
	free(ws->w);
	pthread_mutex_destroy(&ws->turn);
	free(ws);
	*ws_ptr = NULL;
}
