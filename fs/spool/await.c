// SPDX-License-Identifier: BSD-3-Clause
/*
 * await.c -- a sync write awaited by the FUSE worker that holds it (await.h)
 */

#include <pthread.h>

#include "await.h"
#include "msg.h"
#include "spool_impl.h"
#include "link/link.h"
#include "runtime/clock.h"

/*
 * The clock is read once every AWAIT_POLLS_PER_CLOCK polls of the CQ, not
 * at each: where the clock source cannot be read from user space (the lab
 * VM) each reading is a system call, while a poll of rxe's CQ is a read of
 * shared memory (runtime/clock.h).
 */
#define AWAIT_POLLS_PER_CLOCK 16

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* this thread is in await_sync's link_reap: an end seen now was reaped by a worker */
static __thread bool reaping;

static uint64_t budget_ns(const struct spool *sp)
{
	uint64_t b = sp->sync_mean_ns + sp->sync_mean_ns / 2;

	if (b < AWAIT_SPIN_MIN_NS)
		return AWAIT_SPIN_MIN_NS;
	return b > AWAIT_SPIN_MAX_NS ? AWAIT_SPIN_MAX_NS : b;
}

void await_arm_locked(struct spool *sp, struct msg *msg, struct await *w)
{
	msg->armed_ns = now_ns();
	*w = (struct await){.msg = msg, .until_ns = msg->armed_ns + budget_ns(sp)};
	msg->waiter = w;
}

void await_ended_locked(struct spool *sp, struct msg *msg)
{
	struct await *w = msg->waiter;

	if (msg->armed_ns) {
		/* every sync message's time, reaped here or by the loop: weight 1/8 */
		uint64_t took = now_ns() - msg->armed_ns;

		sp->sync_mean_ns = sp->sync_mean_ns
			? sp->sync_mean_ns - sp->sync_mean_ns / 8 + took / 8
			: took;
		msg->armed_ns = 0;
	}
	if (!w)
		return;
	w->done = true;
	w->by_reap = reaping;
	msg->waiter = NULL;
}

void await_sync(struct spool *sp, struct await *w)
{
	unsigned polls = 0;
	bool done;

	pthread_mutex_lock(&sp->lock);
	done = w->done;
	pthread_mutex_unlock(&sp->lock);
	while (!done) {
		int n;

		reaping = true;
		n = link_reap(sp->link);
		reaping = false;

		if (n < 0)
			break; /* not up: what ends it is the loop's */
		if (n > 0) {
			pthread_mutex_lock(&sp->lock);
			done = w->done;
			pthread_mutex_unlock(&sp->lock);
			if (done)
				break;
		}
		if (++polls % AWAIT_POLLS_PER_CLOCK == 0 && now_ns() >= w->until_ns)
			break;
		cpu_relax();
	}
	pthread_mutex_lock(&sp->lock);
	if (!w->done)
		/* not ended yet: it is alive; its end and reply are the loop's */
		w->msg->waiter = NULL;
	else if (w->by_reap)
		sp->st.sync_reaped++;
	pthread_mutex_unlock(&sp->lock);
}
