// SPDX-License-Identifier: BSD-3-Clause
/* ackring.c -- the buffers acknowledgements are sent from (see ackring.h) */

#include <errno.h>
#include <stdlib.h>

#include "ackring.h"
#include "auth.h"

#define BUF_LEN RPMAFS_ACKRING_BUF_LEN
_Static_assert(
	BUF_LEN == RPMAFS_ACK_LEN + RPMAFS_AUTH_TAG_BYTES, "a buffer holds an ack and its tag");

_Static_assert((RPMAFS_ACKRING_DEPTH & (RPMAFS_ACKRING_DEPTH - 1)) == 0,
	"the buffer index is the low bits of a wr_id");
_Static_assert(RPMAFS_ACKRING_DEPTH <= sizeof(unsigned) * 8, "a lane's buffers fit in a mask");

struct rpmafs_ackring {
	struct rpma_mr_local *mr;
	uint8_t *bufs; /* lanes x RPMAFS_ACKRING_DEPTH x BUF_LEN bytes, registered */
	uint32_t lanes;
	uint64_t tag;
};

int rpmafs_ackring_new(
	struct rpma_peer *peer, uint32_t lanes, uint64_t tag, struct rpmafs_ackring **ring_ptr)
{
	size_t len = (size_t)lanes * RPMAFS_ACKRING_DEPTH * BUF_LEN;
	struct rpmafs_ackring *ring;
	int ret;

	if (!peer || !ring_ptr || !lanes || (tag & (RPMAFS_ACKRING_DEPTH - 1)))
		return -EINVAL;
	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	ring->lanes = lanes;
	ring->tag = tag;
	/* registration takes any address: no page alignment needed */
	ring->bufs = calloc(1, len);
	if (!ring->bufs) {
		free(ring);
		return -ENOMEM;
	}
	ret = rpma_mr_reg(peer, ring->bufs, len, RPMA_MR_USAGE_SEND, &ring->mr);
	if (ret) {
		free(ring->bufs);
		free(ring);
		return ret;
	}
	*ring_ptr = ring;
	return 0;
}

void rpmafs_ackring_delete(struct rpmafs_ackring **ring_ptr)
{
	struct rpmafs_ackring *ring = *ring_ptr;

	if (!ring)
		return;
	(void)rpma_mr_dereg(&ring->mr);
	free(ring->bufs);
	free(ring);
	*ring_ptr = NULL;
}

int rpmafs_ackring_send(struct rpmafs_ackring *ring, uint32_t lane, unsigned *busy,
	struct rpma_conn *conn, const struct rpmafs_ack *ack, struct rpmafs_auth *auth,
	const char **why)
{
	size_t off, len = auth ? BUF_LEN : RPMAFS_ACK_LEN;
	unsigned i;
	int ret;

	if (lane >= ring->lanes) {
		*why = "no such acknowledgement lane";
		return -1;
	}
	for (i = 0; i < RPMAFS_ACKRING_DEPTH && (*busy & (1u << i)); i++)
		;
	if (i == RPMAFS_ACKRING_DEPTH)
		return 1;
	off = ((size_t)lane * RPMAFS_ACKRING_DEPTH + i) * BUF_LEN;
	rpmafs_ack_encode(ack, ring->bufs + off);
	/* sealed as it goes out: the seals are in the order of the sends */
	if (auth)
		rpmafs_auth_seal_ack(
			auth, ring->bufs + off, RPMAFS_ACK_LEN, ring->bufs + off + RPMAFS_ACK_LEN);
	ret = rpma_send(conn, ring->mr, off, len, RPMA_F_COMPLETION_ALWAYS,
		(const void *)(uintptr_t)(ring->tag | i));
	if (ret) {
		*why = rpma_err_2str(ret);
		return -1;
	}
	*busy |= 1u << i;
	return 0;
}

int rpmafs_ackring_sent(const struct rpmafs_ackring *ring, unsigned *busy, const struct ibv_wc *wc)
{
	uint64_t i = wc->wr_id & ~ring->tag;

	if (i < RPMAFS_ACKRING_DEPTH)
		*busy &= ~(1u << i);
	return wc->status == IBV_WC_SUCCESS ? 0 : -1;
}
