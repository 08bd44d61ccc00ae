/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attempt.h -- one connection attempt to a peer, in a thread of its own
 *
 * Resolving the address and the route and the CM handshake block, so each
 * attempt runs in a short-lived thread (link.c starts it, at most
 * LINK_MAX_ATTEMPTS at once) and hands its result to the loop thread with
 * done_task. What the result means for the connection's state machine is
 * link.c's: this file only makes the attempt (docs/design.md §9).
 */
#ifndef RPMAFS_ATTEMPT_H
#define RPMAFS_ATTEMPT_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "runtime/loop.h"

struct link;
struct device;
struct devices;
struct linkack;
struct linkauth;
struct rpmafs_auth;
struct rpma_conn;

/* one connection attempt, made in its own thread and handed to the loop */
struct link_attempt {
	/* in: set by link.c */
	struct link *link; /* whose attempt (not looked into here) */
	const struct rpmafs_peer_cfg *peer;
	struct devices *devices;
	struct loop *loop;
	uint32_t sq_depth; /* the send queue's size */
	uint64_t session;  /* offered in the request (0: none, version 1 header) */
	/* out: the attempt's result */
	struct device *dev;
	struct rpma_conn *conn; /* NULL when the attempt failed */
	bool permanent;		/* retrying will not help without a change */
	int cause;		/* failed: the errno that says why (link_unsent) */
	uint32_t peer_max;	/* the receiver's advertised limit, 0: none */
	unsigned credits;	/* the receiver's posted receives, 0: unknown */
	bool acks;		/* the receiver acknowledges (RPMAFS_PDATA_F_ACK) */
	bool session_refused; /* rejected by a listener for the session (accept_session_refused) */
	struct linkack *la;
	struct rpmafs_auth *auth; /* with a key: the accept's state, until lauth takes it */
	struct linkauth *lauth;	  /* with a key: the proof sent, the tags (linkauth.h) */
	char why[256];
	struct loop_task done_task;
};

/*
 * attempt_thread -- make the attempt a describes (pthread start routine),
 * then run a->done_task on a->loop
 */
void *attempt_thread(void *arg);

#endif /* RPMAFS_ATTEMPT_H */
