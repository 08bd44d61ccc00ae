/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine.h -- the completion thread
 *
 * One thread per mount sleeps in epoll over every connection's CM event fd
 * and completion channel, one timerfd and one eventfd. It reaps completions
 * in batches, follows connection events, runs the timers (reconnection,
 * ENOTCONN deadlines, fences) and owns every link. An idle mount leaves it
 * asleep: no polling.
 */
#ifndef RPMAFS_ENGINE_H
#define RPMAFS_ENGINE_H

#include <stdint.h>

struct mount;
struct engine;
struct link;
struct link_attempt;

int engine_new(struct mount *m, struct engine **engine_ptr);
int engine_start(struct engine *e);

/* engine_stop -- stop the thread, close and free every link */
void engine_stop(struct engine *e);
void engine_delete(struct engine **engine_ptr);

/* engine_arm -- make the timers run no later than at_ms (monotonic) */
void engine_arm(struct engine *e, uint64_t at_ms);

/* engine_kick -- wake the thread to look at every spool (any thread) */
void engine_kick(struct engine *e);

/* connection attempts: counted so that engine_stop can wait for them */
void engine_attempt_started(struct engine *e);
void engine_deliver(struct engine *e, struct link_attempt *a);

/* engine_attach -- watch a new link's descriptors (engine thread only) */
int engine_attach(struct engine *e, struct link *link);

/* engine_bury -- forget a link; it is freed after the current batch */
void engine_bury(struct engine *e, struct link *link);

#endif /* RPMAFS_ENGINE_H */
