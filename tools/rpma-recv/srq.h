/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq.h -- rpma-recv's shared receive queue: the one set of receive buffers
 * every connection of the device takes its messages into
 *
 * slots x slot_size bytes, registered once; one receive per slot is posted
 * on the SRQ, and every connection made with recv_rxq_conn_cfg()'s
 * configuration (rxq.h) takes its messages from them. All receive completions
 * arrive on the SRQ's one receive CQ (wc.qp_num tells the connection, see
 * qpmap.h); a slot is posted again as soon as its message is written out.
 * Receive memory is thus independent of the number of connections.
 */
#ifndef RPMA_RECV_SRQ_H
#define RPMA_RECV_SRQ_H

#include <librpma.h>
#include <stddef.h>
#include <stdint.h>

struct recv_srq {
	struct rpma_srq *srq;
	struct rpma_cq *rcq; /* the SRQ's receive CQ */
	int rcq_fd;	     /* its completion channel, non-blocking */
	struct rpma_mr_local *mr;
	uint8_t *buf;
	size_t buf_size;
	uint32_t slot_size;
	uint32_t slots;
	uint32_t posted; /* receives on the SRQ now */
};

/*
 * recv_srq_new -- register slots x slot_size bytes, make the SRQ with a
 * receive CQ of slots entries, post every slot. Errors are printed naming
 * the figures (RLIMIT_MEMLOCK, the device's limits). 0 or -1.
 */
int recv_srq_new(
	struct rpma_peer *peer, uint32_t slots, uint32_t slot_size, struct recv_srq **srq_ptr);

/* recv_srq_delete -- destroy it (no connection may use it any more); *srq_ptr = NULL */
void recv_srq_delete(struct recv_srq **srq_ptr);

/* recv_srq_slot -- the address of slot's buffer */
static inline uint8_t *recv_srq_slot(const struct recv_srq *s, uint32_t slot)
{
	return s->buf + (size_t)slot * s->slot_size;
}

/* recv_srq_post -- post slot's receive again; 0 or an rpma error */
int recv_srq_post(struct recv_srq *s, uint32_t slot);

/*
 * recv_srq_post_slots -- post the receives of slots[0..n) again, as one chain
 * when this build's librpma can (librpma_ext.h); 0 or an rpma error, with
 * *failed the first slot not posted
 */
int recv_srq_post_slots(struct recv_srq *s, const uint32_t *slots, unsigned n, uint32_t *failed);

#endif /* RPMA_RECV_SRQ_H */
