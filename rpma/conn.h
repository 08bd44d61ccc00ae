/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.h -- making a connection object out of a connection request (private)
 */
#ifndef RPMA_CONN_H
#define RPMA_CONN_H

#include <rdma/rdma_cma.h>

#include "librpma.h"

/*
 * rpma_conn_new -- wrap a CM ID (with its queue pair), the CM event channel it is on, its CQs
 * and the shared completion channel (or NULL) into a connection. On success the connection
 * owns all of them; on failure none of them is touched. 0 or RPMA_E_NOMEM.
 */
int rpma_conn_new(struct rdma_cm_id *id, struct rdma_event_channel *evch, struct rpma_cq *cq,
	struct rpma_cq *rcq, struct ibv_comp_channel *channel, struct rpma_conn **conn_ptr);

/*
 * rpma_conn_transfer_private_data -- hand stored private data over to the connection (*pdata
 * is emptied)
 */
void rpma_conn_transfer_private_data(struct rpma_conn *conn, struct rpma_conn_private_data *pdata);

/*
 * rpma_conn_shorten_rnr_timer -- give the connection's queue pair, in RTS, a short RNR NAK
 * timer (conn.c says why); once per connection: the accepting side calls it right after
 * rdma_accept(), the connecting side gets it from rpma_conn_next_event() at ESTABLISHED.
 * A failure is a warning: it costs speed, not the connection.
 */
void rpma_conn_shorten_rnr_timer(struct rpma_conn *conn);

#endif /* RPMA_CONN_H */
