/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * linkack.h -- a link connection's half of receiver confirmation
 * (common/ack.h, docs/design.md §11.1): the receives acknowledgements come
 * in, and what was sent, to judge each acknowledgement by
 *
 * Made only for a connection whose receiver's accept carried
 * RPMAFS_PDATA_F_ACK: a plain receiver gets no receive posted for it,
 * exactly as before. LINKACK_RECVS receives of LINKACK_BUF bytes (more than
 * an acknowledgement, so that an oversized one arrives and is refused by
 * the parser, not by the adapter) in one small region of their own.
 */
#ifndef RPMAFS_LINKACK_H
#define RPMAFS_LINKACK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "ack.h"

struct rpma_conn;
struct rpma_peer;
struct rpma_mr_local;
struct linkauth;

/*
 * Enough that an acknowledgement never finds none posted (an RNR NAK costs the
 * receiver's timer and, on Soft-RoCE, often a ~1 s retransmission besides): each
 * acknowledgement covers a message past the previous one or answers the one
 * outstanding REQUEST, and a receiver gives at most its credits of messages past
 * the last acknowledgement taken here, so credits + 1 receives suffice; 66 covers
 * the inbox's largest share (64, credits 63) with one to spare. rpma-recv --no-srq
 * may promise more: past 65 in flight, acknowledgements can meet RNR (retried).
 */
#define LINKACK_RECVS 66
#define LINKACK_BUF 64
/* the wr_id bit of an acknowledgement receive (send wr_ids are message numbers) */
#define LINKACK_TAG (1ull << 63)

struct linkack {
	struct rpma_mr_local *mr;
	uint8_t *buf; /* LINKACK_RECVS x LINKACK_BUF */
	/* what was sent: link_post (any thread, the spool's lock) and the loop thread */
	pthread_mutex_t lock;
	struct rpmafs_ack_state st;
	char why[64];	       /* a failed receive's status */
	struct linkauth *auth; /* with a key: acknowledgements are sealed (not owned) */
};

/* linkack_new -- register the buffers and post every receive on conn; 0 or an rpma error */
int linkack_new(struct rpma_peer *peer, struct rpma_conn *conn, struct linkack **la_ptr);

/* linkack_delete -- after the connection is deleted; *la_ptr = NULL */
void linkack_delete(struct linkack **la_ptr);

/* linkack_send -- rpma_send_with_imm (src NULL: 0 bytes), recorded as sent; 0 or an rpma error */
int linkack_send(struct linkack *la, struct rpma_conn *conn, const struct rpma_mr_local *src,
	size_t offset, uint32_t len, int flags, uint32_t imm, uint64_t wr_id);

/*
 * linkack_send_batch -- rpma_send_batch of n sends with immediate data
 * (librpma_ext.h), every one recorded as sent before the post; after a
 * failure only the *posted first ones stay recorded. 0 or an rpma error.
 */
struct rpma_send_desc;
int linkack_send_batch(struct linkack *la, struct rpma_conn *conn,
	const struct rpma_send_desc *descs, unsigned n, unsigned *posted);

/*
 * linkack_take -- take the acknowledgements out of n completions: each one
 * parsed and checked against what was sent, its receive posted again, and
 * handed to on_ack(ctx, ack, unanswered requests); flushed receives are
 * skipped. The sends' completions stay in wc[], in order; returns how
 * many. When one is refused, on_ack gets NULL, refused is set to the
 * reason (the caller drops the connection) and the rest of the batch's
 * acknowledgements are left out; otherwise refused is left alone.
 */
int linkack_take(struct linkack *la, struct rpma_conn *conn, struct ibv_wc *wc, int n,
	void (*on_ack)(void *ctx, const struct rpmafs_ack *ack, unsigned unanswered), void *ctx,
	char *refused, size_t len);

#endif /* RPMAFS_LINKACK_H */
