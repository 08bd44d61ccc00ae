/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_priv.h -- one connection of rpma-recv, as accept.c, conn.c,
 * deliver.c and rxq.c share it (private to rpma-recv)
 *
 * accept.c judges a request and makes the connection; conn.c carries it
 * through its states (the table is there) to its end; rxq.c takes its
 * receive completions; deliver.c writes what they brought to the output
 * and sees to the acknowledgements.
 */
#ifndef RPMA_RECV_CONN_PRIV_H
#define RPMA_RECV_CONN_PRIV_H

#include <infiniband/verbs.h>
#include <netinet/in.h>

#include "auth.h"
#include "confirm.h"
#include "conn.h"

/* an authenticated sender's proof of key must come this soon after the accept */
#define RECV_PROOF_MS 5000

/* the states of a connection; conn.c's table says how one goes to another */
enum conn_state {
	CONN_ACCEPTING,	       /* accepted, RPMA_CONN_ESTABLISHED not seen yet */
	CONN_RECEIVING,	       /* established: messages come in and go out */
	CONN_SENDING_LAST_ACK, /* stopping: its last acknowledgement is on its way, then close */
	CONN_DISCONNECTING,    /* we disconnected, RPMA_CONN_CLOSED not seen yet */
	CONN_SETTLING,	       /* stopped (QP in the error state): its last completions awaited */
	CONN_FINISHED,	       /* deleted; freed by recv_conn_reap() */
	CONN_STATES
};

struct recv_conn {
	struct recv_server *srv;
	struct recv_conn *prev, *next; /* in srv->conns, or next in srv->dead */
	unsigned long id;
	char peer[INET6_ADDRSTRLEN + 112]; /* "from ADDR:PORT[ key=NAME]" for log lines */
	char kind[192];			   /* what its private data said */

	struct rpma_conn *conn;
	uint32_t qp_num;
	int event_fd;
	struct recv_watch event_watch;

	/* the receive path's (rxq.c): its own receive queue, or its place in the shared one */
	struct {
		bool in_map;	    /* shared: in the queue pair map */
		struct rpma_cq *cq; /* own: its receives (and sends) complete here */
		int cq_fd;
		struct recv_watch cq_watch;
		struct rpma_mr_local *mr;
		uint8_t *buf;
		size_t buf_size;
		uint32_t slot_size;
		uint32_t slots;
		bool pending; /* own: completions are left for the next turn */
	} rx;

	enum conn_state state;
	bool discard; /* its output failed: later messages are dropped */
	char close_why[96];
	int64_t settle_start, quiet_since; /* CONN_SETTLING: since when, quiet since when */
	int64_t last_ack_by;		   /* CONN_SENDING_LAST_ACK: closed then at the latest */
	uint64_t seen;			   /* messages + dropped when last looked at */

	uint64_t messages, bytes, dropped;

	/* --keys (docs/design.md §11): the sender proved a key at connect */
	struct rpmafs_auth *auth; /* its connection keys and counters; NULL: not authenticated */
	bool proven;		  /* its first SEND, the proof of key, was right */
	bool unproven_counted;	  /* in srv->unproven */
	int64_t proof_by;	  /* not proven by then: dropped */
	uint64_t auth_seq;	  /* SENDs opened on it: the seq of the next one */

	struct recv_confirm *confirm; /* the sender takes acknowledgements (confirm.h) */
	uint64_t session;	      /* the sender's session (with confirm), 0: none */
	bool owed;		      /* in srv->owed: an acknowledgement may be due */
	struct recv_conn *owed_next;
};

/* conn.c: the connection's life */

/* recv_conn_may -- true when the table has a transition from -> to */
bool recv_conn_may(enum conn_state from, enum conn_state to);

/*
 * recv_conn_to -- take c to state to; a transition not in the table is
 * refused (c stays as it is, an error is logged) and false returned
 */
bool recv_conn_to(struct recv_conn *c, enum conn_state to);

/* recv_conn_state_name -- what the state is called in a log line */
const char *recv_conn_state_name(enum conn_state s);

/* recv_conn_start -- a connection just accepted: in srv->conns, CONN_ACCEPTING */
void recv_conn_start(struct recv_conn *c);

/* recv_conn_talking -- not disconnected yet: it receives, and may acknowledge */
bool recv_conn_talking(const struct recv_conn *c);

/*
 * recv_conn_close -- disconnect on our side (nothing if it is not talking);
 * RPMA_CONN_CLOSED finishes it. why ends up in its last log line.
 */
void recv_conn_close(struct recv_conn *c, const char *why);

/* accept.c */

/* recv_accept_undo_confirm -- give back what the accept took for acknowledgements */
void recv_accept_undo_confirm(struct recv_conn *c);

/* recv_accept_undo_auth -- c ends: its connection keys wiped, off the unproven count */
void recv_accept_undo_auth(struct recv_conn *c);

/* deliver.c: received messages to the output, and their acknowledgements */

/*
 * recv_deliver_auth_failed -- c's sender failed its authentication on the
 * connection (a bad tag, no proof): what the batch holds of c before it
 * is written, then c is dropped (nothing of it is written from now on),
 * counted in srv->auth_failures and logged with why
 */
void recv_deliver_auth_failed(struct recv_conn *c, const char *why);

/* recv_deliver -- take one received message of c for the batch (or drop it) */
void recv_deliver(struct recv_conn *c, const struct ibv_wc *wc, const uint8_t *msg);

/*
 * recv_deliver_repost_later -- post slot's receive again once the batch is
 * written out; owner is the connection whose own queue it is (NULL: the
 * shared queue's)
 */
void recv_deliver_repost_later(struct recv_server *srv, struct recv_conn *owner, uint32_t slot);

/*
 * recv_deliver_flush -- write out the batch, in arrival order, then post
 * its receives again
 */
void recv_deliver_flush(struct recv_server *srv);

/* recv_deliver_owe -- an acknowledgement of c may be due: recv_conn_acks() looks */
void recv_deliver_owe(struct recv_conn *c);

/* recv_deliver_forget -- c ends: off the list of those that may be owed */
void recv_deliver_forget(struct recv_conn *c);

/*
 * recv_deliver_send_ack -- c's acknowledgement now; 0, 1 when its buffers
 * are all in flight (tried again at the next look), or < 0: c is closed
 */
int recv_deliver_send_ack(struct recv_conn *c);

#endif /* RPMA_RECV_CONN_PRIV_H */
