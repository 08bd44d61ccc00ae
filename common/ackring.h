/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ackring.h -- the registered buffers a receiver sends its acknowledgements
 * (ack.h) from, shared by the mount's inbox (fs/inbox/inbox_ack.h) and
 * rpma-recv (tools/rpma-recv/confirm.h)
 *
 * A ring holds, for each of its lanes (one lane per acknowledging
 * connection), RPMAFS_ACKRING_DEPTH buffers of RPMAFS_ACK_LEN bytes in one
 * registered region. A buffer is in flight from its send until that send's
 * completion, so an acknowledgement is never rewritten while the adapter
 * may still read it; with all of a lane's buffers in flight nothing is sent
 * and the caller tries again at a completion. Which of a lane's buffers are
 * in flight is the caller's per-connection state (a bit mask, 0 when the
 * connection starts): the ring never looks at connections, it only sends.
 *
 * A connection's send queue needs room for RPMAFS_ACKRING_DEPTH sends, and
 * the completion queue they complete on for as many completions.
 */
#ifndef RPMAFS_ACKRING_H
#define RPMAFS_ACKRING_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <librpma.h>

#include "ack.h"

struct rpmafs_auth;

/* a buffer's bytes: the acknowledgement and room for its tag (auth.h) */
#define RPMAFS_ACKRING_BUF_LEN (RPMAFS_ACK_LEN + 16)

/* acknowledgements in flight on one connection (a power of two) */
#define RPMAFS_ACKRING_DEPTH 4

struct rpmafs_ackring;

/*
 * rpmafs_ackring_new -- a ring of lanes lanes (at least 1), registered with
 * peer for sending. Every send's wr_id is tag | the buffer's index, so that
 * a caller whose completion queue holds other completions can tell these
 * apart (tag 0 when it holds nothing else); tag may not use the bits of
 * the index (below RPMAFS_ACKRING_DEPTH). 0, or -EINVAL, -ENOMEM or the
 * rpma error of the registration.
 */
int rpmafs_ackring_new(
	struct rpma_peer *peer, uint32_t lanes, uint64_t tag, struct rpmafs_ackring **ring_ptr);

/*
 * rpmafs_ackring_delete -- deregister and free the ring, once no send from
 * it can still be read (its connections are gone); *ring_ptr = NULL. NULL
 * *ring_ptr: nothing to do.
 */
void rpmafs_ackring_delete(struct rpmafs_ackring **ring_ptr);

/*
 * rpmafs_ackring_send -- send ack on conn from a free buffer of lane, whose
 * buffers in flight are the bits of *busy. auth: NULL on a connection
 * without a key (RPMAFS_ACK_LEN bytes go out); else the connection's
 * state (auth.h): the acknowledgement is sealed with it as it is sent and
 * goes with its tag (RPMAFS_ACK_LEN + RPMAFS_AUTH_TAG_BYTES bytes), so
 * that the seals are in the order of the sends. 0 sent (its bit set in *busy),
 * 1 every buffer in flight (nothing sent, try again after a completion),
 * -1 nothing sent (*why: the send failed, or lane is not below the ring's
 * lanes), *busy unchanged.
 */
int rpmafs_ackring_send(struct rpmafs_ackring *ring, uint32_t lane, unsigned *busy,
	struct rpma_conn *conn, const struct rpmafs_ack *ack, struct rpmafs_auth *auth,
	const char **why);

/*
 * rpmafs_ackring_sent -- wc is the completion of a send of the ring's: its
 * buffer is free again (its bit cleared in *busy, the mask of the lane it
 * was sent from). 0 when the send succeeded, -1 when it failed (wc->status
 * says how).
 */
int rpmafs_ackring_sent(const struct rpmafs_ackring *ring, unsigned *busy, const struct ibv_wc *wc);

#endif /* RPMAFS_ACKRING_H */
