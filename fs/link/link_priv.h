/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_priv.h -- a link and its connection, shared by link.c (the state
 * machine) and linkpost.c (the posts); no other file looks inside
 */
#ifndef RPMAFS_LINK_PRIV_H
#define RPMAFS_LINK_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "link.h"
#include "runtime/loop.h"

struct device;
struct linkack;
struct linkauth;
struct rpma_conn;
struct rpma_cq;

/* one connection: made by an attempt, freed after the batch that ended its drain */
struct link_conn {
	struct link *link;
	struct device *dev;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int event_fd, compl_fd;
	struct loop_watch ev_watch, cq_watch;
	struct linkack *la;    /* receiver confirmation (NULL: transport only) */
	struct linkauth *auth; /* key = (NULL: none): every SEND sealed (linkauth.h) */
	uint8_t *pool;	       /* the start of dev->pool_mr, where payloads are sealed */
	bool dead;	       /* drained: events still in the loop's batch are ignored */
	bool armed;	       /* under link->reap_lock: the CQ raises an event (settle) */
	struct loop_task free_task;
};

struct link {
	struct link_cfg cfg;
	pthread_mutex_t lock;
	/*
	 * held while a batch of completions is reaped and handed to the user
	 * (the loop's on_cq, a worker's link_reap) and by end_drain: batches
	 * in the CQ's order, and cur alive for a worker. Recursive (a reap
	 * may end the drain). Taken before lock, never under the user's locks.
	 */
	pthread_mutex_t reap_lock;
	enum link_state state;
	bool tried;		 /* an attempt has ended since the mount */
	bool stopping;		 /* unmounting: no more attempts */
	uint64_t backoff_ms;	 /* the delay after the next failed attempt */
	uint64_t retry_at_ms;	 /* BACKOFF, RETRY_SLOW: when to try (0: never) */
	uint64_t teardown_at_ms; /* DRAINING: the end of the grace */
	bool drained;		 /* DRAINING: nothing outstanding any more */
	int cause;		 /* why the last attempt failed (link_unsent), 0: none did */
	char cause_why[256];	 /* the same, in words */
	uint64_t session;   /* offered in the next request: cfg.session, 0 once after a fallback */
	bool fallback_told; /* the fallback was logged (once a mount) */
	struct link_conn *cur; /* UP, DRAINING */
	/* atomic: posted since the last settle, which decides whether the CQ is armed (link.c) */
	bool posted;
};

/* link.c: the user's count of what is still posted (a drain ends at 0) */
void link_outstanding(struct link *link, unsigned n, bool on_loop);

/* link.c: the connection is gone under us (a CM event, a channel or CQ failure): UP -> DRAINING */
void link_lost(struct link *link, const char *reason, bool on_loop);

/* linkreap.c: the loop's handler of the CQ's channel */
void link_on_cq(void *arg);

/* linkreap.c: loop thread: reap everything c's CQ holds, armed or not (before a loss) */
void link_reap_all(struct link_conn *c);

/* linkreap.c: link_settle, on the loop thread (on_loop) or not */
void link_settle_on(struct link *link, bool on_loop);

#endif /* RPMAFS_LINK_PRIV_H */
