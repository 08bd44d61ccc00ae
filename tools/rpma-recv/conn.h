/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.h -- rpma-recv's connections: accepting, receiving, closing
 *
 * One event loop (main.c) serves every connection. A connection request
 * is judged and accepted or rejected (accept.c); a connection goes through
 * the states of conn.c's table; it receives on the receive path of rxq.h
 * (by default the one shared receive queue, whose completions all arrive
 * on one CQ; with --no-srq a receive queue of its own). Either way a slot
 * is posted again as soon as its message has been written out: what one
 * poll of the CQ brings is written out in one batch (struct recv_batch,
 * deliver.c), then its slots are posted again as one chain.
 */
#ifndef RPMA_RECV_CONN_H
#define RPMA_RECV_CONN_H

#include <librpma.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "options.h"
#include "output.h"
#include "rxq.h"
#include "sessions.h"
#include "state.h"

struct recv_conn;

/* the most messages one poll of a completion queue brings (one batch) */
#define RECV_BATCH_MAX 32

/*
 * What one poll of a completion queue brought, held until it is written
 * out together (one recv_output_write_batch: one writev for raw and len),
 * then its receives posted again as one chain; only then are the messages
 * counted written, and acknowledgeable (confirm.h).
 */
struct recv_batch {
	unsigned n; /* messages to write */
	struct recv_record rec[RECV_BATCH_MAX];
	struct recv_conn *conn[RECV_BATCH_MAX];
	uint32_t num[RECV_BATCH_MAX]; /* receiver confirmation: the message's number */
	unsigned nslots;	      /* receives to post again, once written */
	uint32_t slot[RECV_BATCH_MAX];
	struct recv_conn *slot_conn[RECV_BATCH_MAX]; /* whose own queue (NULL: the shared one) */
};

/* what an epoll event points at */
enum recv_watch_kind {
	RECV_WATCH_ENDPOINT,   /* the listening endpoint: connection requests */
	RECV_WATCH_SIGNAL,     /* the signalfd: SIGINT, SIGTERM */
	RECV_WATCH_CONN_EVENT, /* a connection's CM events */
	RECV_WATCH_CONN_CQ,    /* a connection's completion channel (--no-srq) */
	RECV_WATCH_SRQ_CQ,     /* the shared receive queue's completion channel */
};

struct recv_watch {
	enum recv_watch_kind kind;
	struct recv_conn *conn;
};

/* why the server stops */
enum recv_stop {
	RECV_RUNNING,
	RECV_STOP_SIGNAL,      /* SIGINT or SIGTERM: write what has arrived */
	RECV_STOP_COUNT,       /* --count reached: write nothing more */
	RECV_STOP_OUTPUT_GONE, /* the output cannot be written any more */
	RECV_STOP_ENDPOINT,    /* the listening endpoint failed (its device is gone) */
};

/* the state every connection shares */
struct recv_server {
	const struct recv_options *opts;
	struct rpma_peer *peer;
	struct rpma_conn_cfg *conn_cfg;
	struct recv_output *out;
	int epfd;

	struct recv_rxq *rxq;	 /* where the connections receive (rxq.h) */
	struct recv_conn *conns; /* open connections */
	struct recv_conn *dead;	 /* closed; freed once the current epoll batch is done */
	unsigned open;		 /* connections in conns */
	unsigned settling;	 /* of those, waiting for their last completions */

	enum recv_stop stop;
	uint64_t messages; /* written out */
	uint64_t bytes;
	unsigned long accepted;
	unsigned long rejected;
	size_t locked; /* bytes of registered receive buffers */

	struct recv_batch batch; /* what the completions being handled brought */

	struct recv_conn *owed;	   /* connections that may owe their sender an acknowledgement */
	uint32_t reserved;	   /* receives of the shared queue held for acknowledging senders */
	uint64_t acks, duplicates; /* of connections that have ended */

	/* exactly once (docs/design.md §8.6): sessions.h's table, state.h's file */
	struct rpmafs_sessions *sessions; /* what was written, per sender session */
	uint64_t session_duplicates;	  /* numbered messages of a session seen before */
	struct recv_state *state;	  /* NULL: the output does not last (or no --output) */
	bool state_dirty;		  /* written since the last save */
	bool state_plain; /* of those, records of senders without acknowledgements */

	/* --keys (docs/design.md §11): who may connect, and what they proved */
	struct rpmafs_keyring *keys;  /* NULL: no --keys, authenticated senders refused */
	struct rpmafs_nonces *nonces; /* the nonces of the last requests accepted */
	uint64_t auth_failures;	      /* requests and connections refused for their key */
	unsigned unproven;	      /* connections whose proof of key has not come yet */
};

/* recv_wall_ms -- wall clock milliseconds: the sessions' clock (it is persisted) */
uint64_t recv_wall_ms(void);

/*
 * recv_state_flush -- save the state (when something was written since)
 * before acknowledgements go out (durable: with --fsync), and after a
 * batch that had records of senders that take none; 0, or -1: logged,
 * the receiver stops
 */
int recv_state_flush(struct recv_server *srv);

/*
 * recv_conn_request -- judge a connection request (--allow, private data,
 * --max-connections: common/peer_check.h), then accept it with receives posted, or reject it; either way it is
 * logged and *req is consumed
 */
void recv_conn_request(struct recv_server *srv, struct rpma_conn_req **req);

/*
 * recv_conn_handle -- an epoll event for a connection's event or CQ fd, or
 * the shared receive queue's CQ (watch->conn NULL, srv given)
 */
void recv_conn_handle(struct recv_server *srv, struct recv_watch *watch);

/*
 * recv_conn_run_pending -- carry on with connections that had more
 * completions than one turn of the loop may handle (fairness)
 */
void recv_conn_run_pending(struct recv_server *srv);

/*
 * recv_conn_shutdown_all -- disconnect every connection; with drain, the
 * messages already received are written out first
 */
void recv_conn_shutdown_all(struct recv_server *srv, bool drain);

/* recv_conn_drop_all -- delete every connection now, without waiting */
void recv_conn_drop_all(struct recv_server *srv, const char *why);

/* recv_conn_reap -- free connections that have finished closing */
void recv_conn_reap(struct recv_server *srv);

/*
 * recv_conn_settle -- finish the connections that stopped and whose last
 * completions have come (quiet for a while); returns how many
 * milliseconds the loop may sleep before it must call again (-1: no limit)
 */
int recv_conn_settle(struct recv_server *srv);

/*
 * recv_conn_totals -- acknowledgements sent and duplicates dropped, by the
 * connections that ended (srv->acks, srv->duplicates) and the open ones
 */
void recv_conn_totals(const struct recv_server *srv, uint64_t *acks, uint64_t *duplicates);

/*
 * recv_conn_acks -- send the acknowledgements that are due (after one
 * sync of the output with --fsync); returns how many milliseconds the loop
 * may sleep before the next one is due (-1: none owed)
 */
int recv_conn_acks(struct recv_server *srv);

/*
 * recv_conn_proofs -- drop the authenticated connections whose proof of
 * key did not come in time; returns how many milliseconds the loop may
 * sleep before the next deadline (-1: none)
 */
int recv_conn_proofs(struct recv_server *srv);

/* recv_now_ms -- monotonic milliseconds (deadlines, the settling of a closing connection) */
int64_t recv_now_ms(void);

#endif /* RPMA_RECV_CONN_H */
