/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loop.h -- a plain event loop thread (epoll)
 *
 * One thread sleeps in epoll_wait over the descriptors it was asked to
 * watch, one timerfd and one eventfd, and calls back:
 *   - a watch's function when its descriptor is readable;
 *   - the tick function when the deadline armed with loop_arm() is due, or
 *     after tasks were run; the tick returns the next deadline;
 *   - tasks handed over with loop_run_soon() from any thread, oldest first;
 *   - tasks queued with loop_after_batch(), once the current batch of
 *     events is handled (to free what an event already returned may name).
 * It knows nothing of what it runs. An idle loop stays asleep: no polling.
 * The loop's own lock guards its task queue and timer; it is taken last.
 */
#ifndef RPMAFS_LOOP_H
#define RPMAFS_LOOP_H

#include <stdint.h>

struct loop;

/* the tick: run what is due at now (monotonic ms); returns the next deadline, 0: none */
typedef uint64_t (*loop_tick_fn)(void *arg, uint64_t now);

/* a watched descriptor: fn(arg) runs on the loop thread when fd is readable */
struct loop_watch {
	void (*fn)(void *arg);
	void *arg;
};

/* a function to run on the loop thread; the caller owns the node until it ran */
struct loop_task {
	struct loop_task *next;
	void (*fn)(void *arg);
	void *arg;
};

/* loop_new -- a stopped loop calling tick(arg, now); 0 or a negative errno */
int loop_new(loop_tick_fn tick, void *arg, struct loop **loop_ptr);

/* loop_delete -- free a stopped loop; NULLs the pointer */
void loop_delete(struct loop **loop_ptr);

/* loop_start -- start the thread, named name (top -H); 0 or a negative errno */
int loop_start(struct loop *loop, const char *name);

/*
 * loop_stop -- stop the thread once no hold is left (see loop_hold), join it,
 * then run the tasks still queued on the calling thread.
 */
void loop_stop(struct loop *loop);

/* loop_watch -- call w->fn(w->arg) whenever fd is readable; 0 or a negative errno */
int loop_watch(struct loop *loop, int fd, struct loop_watch *w);

/* loop_unwatch -- stop watching fd */
void loop_unwatch(struct loop *loop, int fd);

/* loop_arm -- make the tick run no later than at_ms (0: nothing); any thread */
void loop_arm(struct loop *loop, uint64_t at_ms);

/*
 * loop_kick -- run the tick soon; any thread. From another thread it wakes
 * the loop (an eventfd write); on the loop thread it only marks the batch
 * under way, which ends with the tasks and the tick.
 */
void loop_kick(struct loop *loop);

/*
 * loop_run_soon -- run t->fn(t->arg) on the loop thread, then the tick; any
 * thread (on the loop thread: at the end of the batch under way, no wake-up)
 */
void loop_run_soon(struct loop *loop, struct loop_task *t);

/* loop_after_batch -- run t->fn(t->arg) once the current batch is handled; loop thread */
void loop_after_batch(struct loop *loop, struct loop_task *t);

/*
 * loop_hold, loop_release -- something will still hand the loop a task (a
 * connection attempt running in a thread of its own): loop_stop waits.
 */
void loop_hold(struct loop *loop);
void loop_release(struct loop *loop);

#endif /* RPMAFS_LOOP_H */
