// SPDX-License-Identifier: BSD-3-Clause
/*
 * workers.c -- the threads that read FUSE requests into pool buffers
 *
 * Each worker owns one pool buffer and reads requests into it with
 * fuse_session_receive_buf(). When a WRITE's payload is taken for a message
 * (workers_take_buffer), the worker swaps in a free buffer; if none is free
 * it waits for one after handing the turn on -- that is the back-pressure.
 * Reading and handling happen while holding m->turn, so messages reach their
 * spool in the order the kernel queued the writes, whatever thread reads.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mount.h"
#include "pool.h"
#include "workers.h"

struct worker {
	struct mount *m;
	pthread_t tid;
	bool started;
	unsigned slot;
	int done_fd;
};

static __thread struct worker *self;

static void interrupt_handler(int sig)
{
	(void)sig;
}

int workers_take_buffer(struct mount *m, const void *payload, bool nonblock, unsigned *slot)
{
	unsigned mine, spare;
	int ret;

	if (!self || self->slot == POOL_NO_SLOT || pool_slot_of(m->pool, payload) != self->slot)
		return -EINVAL;
	mine = self->slot;
	ret = pool_get(m->pool, false, &spare);
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
	struct mount *m = w->m;
	struct fuse_session *se = m->se;
	struct fuse_buf fbuf;
	uint64_t one = 1;

	self = w;
	for (;;) {
		int res;

		if (w->slot == POOL_NO_SLOT && pool_get(m->pool, true, &w->slot))
			break;

		memset(&fbuf, 0, sizeof(fbuf));
		fbuf.mem = pool_slot_ptr(m->pool, w->slot);
		fbuf.size = pool_slot_size(m->pool);

		pthread_mutex_lock(&m->turn);
		if (fuse_session_exited(se)) {
			pthread_mutex_unlock(&m->turn);
			break;
		}
		res = fuse_session_receive_buf(se, &fbuf);
		if (res == -EINTR || res == -EAGAIN) {
			pthread_mutex_unlock(&m->turn);
			continue;
		}
		if (res <= 0) {
			if (res < 0)
				log_err("reading /dev/fuse failed: %s", strerror(-res));
			fuse_session_exit(se);
			pthread_mutex_unlock(&m->turn);
			break;
		}
		if (fbuf.mem != pool_slot_ptr(m->pool, w->slot) || (fbuf.flags & FUSE_BUF_IS_FD)) {
			/* libfuse used a buffer of its own: should never happen */
			log_err("request not read into the registered pool");
			fuse_session_exit(se);
			pthread_mutex_unlock(&m->turn);
			break;
		}
		fuse_session_process_buf(se, &fbuf);
		pthread_mutex_unlock(&m->turn);
	}

	if (w->slot != POOL_NO_SLOT) {
		pool_put(m->pool, w->slot);
		w->slot = POOL_NO_SLOT;
	}
	if (write(w->done_fd, &one, sizeof(one)) < 0)
		log_err("cannot report a worker's exit: %s", strerror(errno));
	return NULL;
}

int workers_start(struct mount *m, int done_fd)
{
	struct sigaction sa;
	int ret;

	/* SIGUSR1 interrupts a worker's read(); no SA_RESTART on purpose */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = interrupt_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	m->workers = calloc(m->nworkers, sizeof(*m->workers));
	if (!m->workers)
		return -ENOMEM;
	for (unsigned i = 0; i < m->nworkers; i++) {
		struct worker *w = &m->workers[i];

		w->m = m;
		w->done_fd = done_fd;
		ret = pool_get(m->pool, false, &w->slot);
		if (ret)
			return ret;
		ret = pthread_create(&w->tid, NULL, worker_main, w);
		if (ret) {
			pool_put(m->pool, w->slot);
			return -ret;
		}
		w->started = true;
		pthread_setname_np(w->tid, "rpmafs-worker");
	}
	return 0;
}

void workers_stop(struct mount *m)
{
	unsigned left;

	fuse_session_exit(m->se);
	/* a worker waiting for a buffer gets -ESHUTDOWN; puts still work */
	pool_close(m->pool);
	if (!m->workers)
		return;
	/*
	 * Only the worker holding the turn is in read(); the others wait for
	 * the turn. Interrupt them all, again and again (a signal can land
	 * just before read()), until every one has returned.
	 */
	do {
		left = 0;
		for (unsigned i = 0; i < m->nworkers; i++)
			if (m->workers[i].started)
				pthread_kill(m->workers[i].tid, SIGUSR1);
		for (unsigned i = 0; i < m->nworkers; i++) {
			struct worker *w = &m->workers[i];
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
	free(m->workers);
	m->workers = NULL;
}
