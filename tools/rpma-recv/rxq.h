/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rxq.h -- where rpma-recv's connections receive: one interface for the
 * shared receive queue and for a receive queue of each connection's own
 *
 * The shared queue (the default, srq.h): one set of slots for every
 * connection, whose completions arrive on one CQ and name their connection
 * by its queue pair number (qpmap.h); a connection promises no receive to
 * its sender. --no-srq: each connection has slots x max_message bytes of
 * its own, registered and posted before it is accepted (an eager sender
 * never meets RNR); its receives and its acknowledgements complete on its
 * own CQ. Either way a slot goes back to its queue once its message is
 * written out (deliver.c), and what one poll of a CQ brings is written out
 * as one batch.
 */
#ifndef RPMA_RECV_RXQ_H
#define RPMA_RECV_RXQ_H

#include <librpma.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct recv_server;
struct recv_conn;
struct recv_rxq;

/*
 * recv_rxq_new -- the receive path srv->opts asks for, on srv->peer; the
 * shared queue's buffers are registered and posted now and counted in
 * srv->locked. 0, or -1 with the reason printed.
 */
int recv_rxq_new(struct recv_server *srv, struct recv_rxq **rxq_ptr);

/* recv_rxq_delete -- after every connection is deleted; *rxq_ptr = NULL */
void recv_rxq_delete(struct recv_rxq **rxq_ptr);

/* recv_rxq_conn_cfg -- the queue sizes (and the shared queue) of every connection; 0 or an rpma error */
int recv_rxq_conn_cfg(const struct recv_rxq *q, struct rpma_conn_cfg *cfg);

/* recv_rxq_fd -- the completion channel of every connection (RECV_WATCH_SRQ_CQ), or -1 */
int recv_rxq_fd(const struct recv_rxq *q);

/*
 * recv_rxq_credits -- receives kept posted for one plain sender alone: its
 * own slots, or none with the shared queue (every receive may go to any
 * connection; a sender then keeps its own window, and RNR retry holds it
 * back when the queue runs dry)
 */
uint32_t recv_rxq_credits(const struct recv_rxq *q);

/*
 * recv_rxq_ack_share -- receives held for one sender that takes
 * acknowledgements (one of them kept for a REQUEST): its own slots, or a
 * share of the shared queue while the shares, reserved of them held
 * already, add up to no more than it has, and two past that (*held: the
 * share is to be counted in srv->reserved)
 */
uint32_t recv_rxq_ack_share(const struct recv_rxq *q, uint32_t reserved, bool *held);

/*
 * recv_rxq_prepare -- before the accept of c: its own buffers registered
 * and every slot posted on req. 0, or -1 with why (for the rejection) set;
 * recv_rxq_release() gives back what was taken either way.
 */
int recv_rxq_prepare(
	struct recv_rxq *q, struct recv_conn *c, struct rpma_conn_req *req, char *why, size_t size);

/*
 * recv_rxq_attach -- after the accept (c->conn, c->qp_num known): its
 * completions find it; 0, or -1 logged, with nothing left attached
 */
int recv_rxq_attach(struct recv_rxq *q, struct recv_conn *c);

/* recv_rxq_describe -- how c receives, for the log line of its accept */
void recv_rxq_describe(
	const struct recv_rxq *q, const struct recv_conn *c, char *text, size_t size);

/*
 * recv_rxq_stop -- c is about to be deleted: nothing more is taken for it.
 * The shared CQ is drained first: no completion of its queue pair may stay
 * there once the queue pair is gone, or its number, reused by a later
 * connection, would give that one a stranger's message. Not while
 * completions are being handled.
 */
void recv_rxq_stop(struct recv_rxq *q, struct recv_conn *c);

/* recv_rxq_release -- c's queue pair is deleted: its part of the receive path given back */
void recv_rxq_release(struct recv_rxq *q, struct recv_conn *c);

/*
 * recv_rxq_settle -- c has stopped: its own CQ is handed out at once (the
 * shared one goes at the loop's pace, recv_rxq_drain())
 */
void recv_rxq_settle(struct recv_rxq *q, struct recv_conn *c);

/* recv_rxq_drain -- hand out every completion that has come for c (shared: for all) */
void recv_rxq_drain(struct recv_rxq *q, struct recv_conn *c);

/* recv_rxq_drain_all -- hand out every completion that has come for any connection */
void recv_rxq_drain_all(struct recv_rxq *q);

/*
 * recv_rxq_turn -- c's CQ (NULL: the shared one) is readable: at most
 * about a queue's worth of completions, the rest left for
 * recv_rxq_run_pending() (fairness)
 */
void recv_rxq_turn(struct recv_rxq *q, struct recv_conn *c);

/* recv_rxq_run_pending -- another turn for the CQs that had completions left */
void recv_rxq_run_pending(struct recv_rxq *q);

/* recv_rxq_pending -- a CQ has completions left: the loop must not sleep */
bool recv_rxq_pending(const struct recv_rxq *q);

/*
 * recv_rxq_post -- post slots[0..n) again: of owner's own queue (unless it
 * has disconnected), or of the shared one (owner NULL); a failure is logged
 * (and closes owner)
 */
void recv_rxq_post(struct recv_rxq *q, struct recv_conn *owner, const uint32_t *slots, unsigned n);

/*
 * recv_rxq_take_sends -- take the completions of c's acknowledgements (own
 * queue: with its receives); a failed one closes c
 */
void recv_rxq_take_sends(struct recv_rxq *q, struct recv_conn *c);

/*
 * recv_rxq_send_cq -- the CQ that holds only c's sends, polled by
 * recv_confirm_send() for a free buffer; NULL when they complete beside
 * its receives (own queue, handed out by the drain)
 */
struct rpma_cq *recv_rxq_send_cq(const struct recv_rxq *q, const struct recv_conn *c);

/*
 * recv_rxq_unposted -- receives of the shared queue not posted now, of
 * *slots (0 for own queues: each went with its connection)
 */
uint32_t recv_rxq_unposted(const struct recv_rxq *q, uint32_t *slots);

/* recv_rxq_stray -- shared queue: messages of no open connection, dropped */
uint64_t recv_rxq_stray(const struct recv_rxq *q);

#endif /* RPMA_RECV_RXQ_H */
