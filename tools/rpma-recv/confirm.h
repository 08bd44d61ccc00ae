/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * confirm.h -- rpma-recv's side of receiver confirmation (common/ack.h,
 * docs/design.md §11.1): the numbers in a sender's immediate data, and the
 * acknowledgements sent back once the records are written out
 *
 * Only a connection whose request carried RPMAFS_PDATA_F_ACK gets one; a
 * plain sender never receives anything. An acknowledgement is sent when
 * the sender asked for one (a message with RPMAFS_IMM_PROMPT, or a
 * REQUEST), after RECV_ACK_EVERY records, or RECV_ACK_DELAY_MS after the
 * oldest record not acknowledged yet -- whichever comes first, and always
 * after the receives the records came in were posted again, so that the
 * credits it carries are receives that are really there.
 *
 * As in the mount's inbox, common/ackreq.h says what a completion is and
 * common/ackring.h holds the buffers the acknowledgements are sent from
 * (one lane here); when to acknowledge is decided in this file.
 */
#ifndef RPMA_RECV_CONFIRM_H
#define RPMA_RECV_CONFIRM_H

#include <infiniband/verbs.h>
#include <librpma.h>
#include <stdbool.h>
#include <stdint.h>

#include "ackreq.h"
#include "ackring.h"
#include "auth.h"

/* acknowledgements in flight on one connection */
#define RECV_ACK_BUFS RPMAFS_ACKRING_DEPTH
#define RECV_ACK_EVERY 16	  /* records */
#define RECV_ACK_DELAY_MS 2	  /* after the oldest record not acknowledged */
#define RECV_ACK_TAG (1ull << 63) /* the wr_id bit of an acknowledgement's send */

struct recv_confirm {
	/* its acknowledgement buffers: one lane, the sends tagged RECV_ACK_TAG */
	struct rpmafs_ackring *ring;
	unsigned busy;	   /* bit i: buffer i is being sent */
	uint16_t credits;  /* messages the sender may send past each acknowledgement */
	uint32_t reserved; /* receives of the shared queue held for this connection */

	/* what was taken in: the last number, the REQUESTs (ackreq.h) */
	struct rpmafs_ackreq req;
	bool written_any;
	uint32_t written; /* the number of the last record written out */
	bool acked_any;
	uint32_t acked; /* what the last acknowledgement said */
	uint16_t acked_requests;
	unsigned unacked; /* records written since */
	int64_t since_ms; /* when the oldest of them was written */
	bool prompt;	  /* the sender waits: acknowledge at once */

	uint64_t acks, duplicates;

	/*
	 * An authenticated connection (--keys, docs/design.md §11): each
	 * acknowledgement goes with its tag, sealed with the connection's
	 * receiver-to-sender key as it is sent (common/ackring.h)
	 */
	struct rpmafs_auth *auth; /* the connection's; NULL: plain acknowledgements */
};

enum recv_take {
	RECV_TAKE_RECORD,    /* a message to write out; *num is its number */
	RECV_TAKE_DUPLICATE, /* a number already taken on this connection: drop it */
	RECV_TAKE_REQUEST,   /* no record: the sender asks for an acknowledgement */
	RECV_TAKE_BAD,	     /* not what the protocol allows: close the connection */
};

/*
 * recv_confirm_new -- the state of one acknowledging connection, with its
 * registered acknowledgement buffers; credits is what each one grants.
 * 0, or a negative errno / rpma error.
 */
int recv_confirm_new(struct rpma_peer *peer, uint16_t credits, struct recv_confirm **rc_ptr);

/*
 * recv_confirm_seal -- from now on every acknowledgement is sealed with
 * auth (the connection's, which outlives rc)
 */
void recv_confirm_seal(struct recv_confirm *rc, struct rpmafs_auth *auth);

/* recv_confirm_delete -- after the connection was deleted; *rc_ptr = NULL */
void recv_confirm_delete(struct recv_confirm **rc_ptr);

/* recv_confirm_take -- classify a successful receive completion (*why for BAD) */
enum recv_take recv_confirm_take(
	struct recv_confirm *rc, const struct ibv_wc *wc, uint32_t *num, const char **why);

/* recv_confirm_written -- the record numbered num is written out */
void recv_confirm_written(struct recv_confirm *rc, uint32_t num, int64_t now_ms);

/* recv_confirm_due -- 0: an acknowledgement is due now; > 0: in so many ms; -1: none owed */
int recv_confirm_due(const struct recv_confirm *rc, int64_t now_ms);

/*
 * recv_confirm_send -- send the acknowledgement of everything written so
 * far. cq (NULL when the caller routes them, see recv_confirm_sent) is
 * polled first for the completions of earlier ones. 0 sent, 1 no buffer
 * free (try again later), -1 failed (*why).
 */
int recv_confirm_send(
	struct recv_confirm *rc, struct rpma_conn *conn, struct rpma_cq *cq, const char **why);

/*
 * recv_confirm_poll -- take the completions of the acknowledgements in
 * flight from cq, which holds nothing else (the connection's own CQ with
 * the shared receive queue); 0, or -1 when one failed (*why)
 */
int recv_confirm_poll(struct recv_confirm *rc, struct rpma_cq *cq, const char **why);

/* recv_confirm_sent -- the completion of an acknowledgement's send; 0 or -1 (*why) */
int recv_confirm_sent(struct recv_confirm *rc, const struct ibv_wc *wc, const char **why);

#endif /* RPMA_RECV_CONFIRM_H */
