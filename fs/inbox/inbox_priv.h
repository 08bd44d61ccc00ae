/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inbox_priv.h -- what inbox.c (the listener, the shared receive queue, its
 * slots) and inbox_conn.c (a sender's connection: judged, accepted, its
 * events, dropped) share; nothing outside fs/inbox includes it
 */
#ifndef RPMAFS_INBOX_PRIV_H
#define RPMAFS_INBOX_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <librpma.h>

#include "auth.h"
#include "inbox.h"
#include "inbox_ack.h"
#include "inbox_auth.h"
#include "runtime/loop.h"

enum inbox_ack_wait {
	INBOX_ACK_IDLE, /* nothing to send, or sent */
	INBOX_ACK_HELD, /* nobody waits for it: sent by the tick */
	INBOX_ACK_DUE,	/* the loop sends it now */
};

struct inbox_conn {
	struct inbox_conn *next, *prev;
	struct inbox *ib;
	struct rpma_conn *conn;
	int event_fd;
	uint32_t qp_num;
	struct loop_watch watch;
	struct loop_task free_task;
	struct inbox_ack_conn ack; /* receiver confirmation (inbox_ack.h); off for plain senders */
	struct rpma_cq *cq;	   /* its send completions: acknowledgements only */
	int cq_fd;
	struct loop_watch cq_watch;
	bool dead;	  /* deleted; freed after the loop's batch (an event may be in it) */
	/*
	 * under ib->ack_lock: its acknowledgement held back (inbox_ack.h) since
	 * held_at (now_ms), or due now; on ib->waiting unless idle
	 */
	enum inbox_ack_wait ack_wait;
	struct inbox_conn *wait_next;
	uint64_t held_at;
	uint64_t session; /* non-zero: its numbers are told apart across connections (§13.4) */
	/* listen_keys (inbox_auth.h): the connection's keys; NULL without */
	struct rpmafs_auth *auth;
	bool proven;	   /* its first SEND, the proof of key, was right */
	uint64_t proof_by; /* not proven by then (now_ms): dropped */
	char peer[64];
	char sender[INBOX_SENDER_MAX]; /* last_sender: NAME@ADDR with a key, else ADDR */
};

struct inbox {
	struct loop *loop;
	void (*on_arrival)(void *arg);
	void *arg;
	struct recv_allow *allow;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	int ep_fd;
	struct loop_watch ep_watch;
	struct rpma_srq *srq;
	struct rpma_cq *rcq;
	int rcq_fd;
	struct loop_watch rcq_watch;
	struct rpma_conn_cfg *conn_cfg;
	struct rpma_mr_local *mr;
	uint8_t *buf;
	uint32_t slots, slot_size;
	struct inbox_queue *q;
	/*
	 * ack_lock: what receiver confirmation keeps (acks, each connection's
	 * ack, waiting and the fields above them), changed by a reader's
	 * release on a FUSE worker and by the loop thread. Taken before the
	 * queue's lock, ib->lock and the loop's.
	 */
	pthread_mutex_t ack_lock;
	struct inbox_ack *acks;
	struct inbox_conn *waiting; /* acknowledgements held back or due */
	bool due_kicked;	    /* due_task is handed to the loop */
	struct loop_task due_task;
	struct rpmafs_sessions *sessions; /* what each sender session had queued (§13.4) */
	struct inbox_conn *conns;
	struct inbox_auth *auth; /* listen_keys; NULL: every sender as before */
	unsigned unproven;	 /* connections whose proof of key has not come yet */
	bool failed;
	bool closing; /* inbox_delete: nothing goes back to the queue */

	pthread_mutex_t lock; /* the figures below, read by inbox_stats_get() */
	uint32_t nconns;
	uint64_t accepted, rejected, bad, acks_sent, duplicates, auth_failures;
	char last_sender[INBOX_SENDER_MAX];
	char listen[300];
};

/* inbox_count -- (*what)++ under ib->lock: a figure inbox_stats_get reads */
void inbox_count(struct inbox *ib, uint64_t *what);

/* inbox_post_slot -- any thread: slot is free, its receive goes back to the queue */
void inbox_post_slot(void *arg, uint32_t slot);

/* inbox_conn_request -- on the loop thread: a connect request, judged, then accepted or rejected */
void inbox_conn_request(struct inbox *ib, struct rpma_conn_req **req);

/* inbox_conn_by_qp -- the open connection of the queue pair, or NULL */
struct inbox_conn *inbox_conn_by_qp(struct inbox *ib, uint32_t qp_num);

/*
 * inbox_conn_ack -- on the loop thread: send c's acknowledgement if one is
 * due now, or hold it back (inbox_ack_due: at most INBOX_ACK_DELAY_MS,
 * sent by inbox_tick); a failure ends the connection
 */
void inbox_conn_ack(struct inbox_conn *c);

/*
 * inbox_conn_released_locked -- any thread, under ib->ack_lock: c's
 * acknowledgement moved on (a reader finished a message): held back, or
 * marked due; true when ib->due_task must be handed to the loop
 */
bool inbox_conn_released_locked(struct inbox_conn *c);

/* inbox_conn_ack_due -- on the loop thread (ib->due_task): send every acknowledgement due */
void inbox_conn_ack_due(void *arg);

/*
 * inbox_conn_free -- c ends: off the loop and the list, its messages not
 * started taken back (or, with a session, kept), its keys wiped; freed
 * after the loop's batch
 */
void inbox_conn_free(struct inbox_conn *c);

#endif /* RPMAFS_INBOX_PRIV_H */
