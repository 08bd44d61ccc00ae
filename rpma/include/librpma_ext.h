/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpma_ext.h -- rpmafs extensions to the librpma API
 *
 * Functions here are not part of librpma: they exist only in the project's
 * own rpma/ library. Code that must also build against the distribution's
 * librpma includes this header only when RPMA_HAVE_EXT is defined.
 */
#ifndef LIBRPMA_EXT_H
#define LIBRPMA_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "librpma.h"

/*
 * rpma_conn_req_get_peer_addr -- the address an incoming connection request
 * comes from (the peer's source address and port), so that a listener can
 * decide whether to accept it before calling rpma_conn_req_connect(). librpma
 * has no way to tell, which is why this extension exists.
 *
 * Returns 0 with *addr filled (ss_family AF_INET or AF_INET6, the rest of
 * the structure zeroed), or RPMA_E_INVAL when req or addr is NULL, when req
 * is an outgoing request (made by rpma_conn_req_new(), whose caller named
 * the peer), or when the peer's address is of another family (e.g. AF_IB);
 * *addr is left untouched on error.
 */
int rpma_conn_req_get_peer_addr(const struct rpma_conn_req *req, struct sockaddr_storage *addr);

/*
 * rpma_conn_get_event_status -- the status of the last CM event
 * rpma_conn_next_event() read on conn (struct rdma_cm_event's status; 0
 * before any). For RPMA_CONN_REJECTED on InfiniBand and RoCE it is the IB
 * CM reject reason: 28 (IB_CM_REJ_CONSUMER_DEFINED) when the listening
 * side called rdma_reject(), 8 (IB_CM_REJ_INVALID_SERVICE_ID) when nothing
 * listens at the address and port; on iWARP a negative errno. librpma
 * drops it, which is why this extension exists.
 *
 * Returns 0 with *status set, or RPMA_E_INVAL when conn or status is NULL.
 */
int rpma_conn_get_event_status(const struct rpma_conn *conn, int *status);

/*
 * rpma_cq_take_event -- rpma_cq_wait() without its re-arm: take the CQ's
 * completion event from its channel and acknowledge it, leaving the CQ
 * unarmed, so that the next completion raises no event until
 * rpma_cq_arm(). A caller that reaps the CQ itself whenever it posts
 * (rpmafs's workers) arms it only while a completion is still awaited,
 * and saves the re-arm's system call (under Soft-RoCE) and the wake-up of
 * whoever watches the channel; librpma re-arms at every wait, which is
 * why this extension exists. As with ibv_req_notify_cq(), a completion
 * that came before the arm raises no event: after rpma_cq_arm(), poll the
 * CQ once more.
 *
 * Returns 0, RPMA_E_INVAL when cq is NULL, RPMA_E_SHARED_CHANNEL as
 * rpma_cq_wait(), RPMA_E_NO_COMPLETION when there is no event (a
 * non-blocking channel, a signal).
 */
int rpma_cq_take_event(struct rpma_cq *cq);

/*
 * rpma_cq_arm -- request an event for the CQ's next completion
 * (ibv_req_notify_cq(), any completion). Returns 0, RPMA_E_INVAL when cq
 * is NULL, or RPMA_E_PROVIDER.
 */
int rpma_cq_arm(struct rpma_cq *cq);

/* the most sends one rpma_send_batch() takes */
#define RPMA_SEND_BATCH_MAX 64

/* one send of a batch: the arguments of rpma_send(), or of rpma_send_with_imm() */
struct rpma_send_desc {
	const struct rpma_mr_local *src; /* NULL (with offset 0, len 0): a 0-byte message */
	size_t offset;
	size_t len;
	int flags;     /* RPMA_F_COMPLETION_ALWAYS or RPMA_F_COMPLETION_ON_ERROR */
	bool with_imm; /* as rpma_send_with_imm(): IBV_WR_SEND_WITH_IMM carrying imm */
	uint32_t imm;  /* host order, as rpma_send_with_imm() takes it */
	const void *op_context;
};

/*
 * rpma_send_batch -- post n sends as one chain of work requests, with one
 * ibv_post_send(): one doorbell on hardware, one system call (and one run
 * of the emulated NIC) under Soft-RoCE. Each send is what rpma_send() (or,
 * with with_imm, rpma_send_with_imm()) with the same arguments would post,
 * in order; sends with and without immediate data may be mixed; librpma posts one work request
 * per call, which is why this extension exists.
 *
 * Every descriptor is checked before anything is posted. Returns 0 with all
 * n posted; RPMA_E_INVAL (nothing posted) when conn or descs is NULL, n is 0
 * or over RPMA_SEND_BATCH_MAX, or a descriptor is one rpma_send() would
 * refuse; RPMA_E_PROVIDER when ibv_post_send() failed, with *posted (if not
 * NULL) set to how many of the first sends the queue took before the one
 * that failed.
 */
int rpma_send_batch(
	struct rpma_conn *conn, const struct rpma_send_desc *descs, unsigned n, unsigned *posted);

/* the most receives one rpma_recv_batch() or rpma_srq_recv_batch() takes */
#define RPMA_RECV_BATCH_MAX 64

/* one receive of a batch: the arguments of rpma_recv() */
struct rpma_recv_desc {
	struct rpma_mr_local *dst; /* NULL (with offset 0, len 0): a 0-byte receive */
	size_t offset;
	size_t len;
	const void *op_context;
};

/*
 * rpma_recv_batch -- post n receives on conn's own receive queue as one
 * chain of work requests, with one ibv_post_recv(). Each is what rpma_recv()
 * with the same arguments would post, in order. Every descriptor is checked
 * before anything is posted. Returns 0 with all n posted; RPMA_E_INVAL
 * (nothing posted) when conn or descs is NULL, n is 0 or over
 * RPMA_RECV_BATCH_MAX, the connection receives through a shared RQ, or a
 * descriptor is one rpma_recv() would refuse; RPMA_E_PROVIDER when
 * ibv_post_recv() failed, with *posted (if not NULL) set to how many of
 * the first receives the queue took.
 */
int rpma_recv_batch(
	struct rpma_conn *conn, const struct rpma_recv_desc *descs, unsigned n, unsigned *posted);

/* rpma_srq_recv_batch -- the same on a shared receive queue (rpma_srq_recv(), ibv_post_srq_recv()) */
int rpma_srq_recv_batch(
	struct rpma_srq *srq, const struct rpma_recv_desc *descs, unsigned n, unsigned *posted);

#endif /* LIBRPMA_EXT_H */
