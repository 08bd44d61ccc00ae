/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ackreq.h -- a receiver takes in what an acknowledging sender sends
 * (ack.h): a numbered message, a re-send of one, or a REQUEST for an
 * acknowledgement
 *
 * The mount's inbox (fs/inbox/inbox_ack.h) and rpma-recv
 * (tools/rpma-recv/confirm.h) acknowledge at different moments (at read;
 * once written out) but take a receive completion from such a sender the
 * same way, here. A message without its number, or a REQUEST that carries
 * a payload or a number or comes before any message, is not what the
 * protocol allows: the caller closes the connection. A number that is not
 * after the last one taken can only be a sender's re-send (RC does not
 * repeat itself): the caller drops it.
 *
 * struct rpmafs_ackreq is one connection's state, kept inside the caller's
 * own per-connection state (all zero: nothing taken yet; no allocation, no
 * teardown). The caller reads its fields; only rpmafs_ackreq_take writes
 * them.
 */
#ifndef RPMAFS_ACKREQ_H
#define RPMAFS_ACKREQ_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

enum rpmafs_ackreq_kind {
	RPMAFS_ACKREQ_RECORD,	 /* a message, numbered after the last one taken */
	RPMAFS_ACKREQ_DUPLICATE, /* a number already taken on this connection: drop it */
	RPMAFS_ACKREQ_REQUEST,	 /* no message: the sender asks for an acknowledgement */
	RPMAFS_ACKREQ_BAD,	 /* not what the protocol allows: close the connection */
};

struct rpmafs_ackreq {
	bool seen_any;	   /* a numbered message was taken in */
	uint32_t seen;	   /* the number of the last one */
	uint16_t requests; /* REQUEST messages taken in (modulo 2^16), as an ack counts them */
};

/*
 * rpmafs_ackreq_take -- classify the successful receive completion wc of
 * rq's connection. For RECORD and DUPLICATE *num is the message's number;
 * *prompt (when prompt is not NULL) is whether the sender waits for an
 * acknowledgement (RPMAFS_IMM_PROMPT, or a REQUEST; false for BAD); for
 * BAD *why says what is wrong. A RECORD becomes the last one taken; a
 * REQUEST is counted.
 */
enum rpmafs_ackreq_kind rpmafs_ackreq_take(struct rpmafs_ackreq *rq, const struct ibv_wc *wc,
	uint32_t *num, bool *prompt, const char **why);

#endif /* RPMAFS_ACKREQ_H */
