/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * private_data.h -- copies of the private data that comes with CM events (private)
 *
 * librdmacm's event memory is freed when the event is acknowledged, so the bytes are copied
 * into memory owned by the connection request or the connection.
 */
#ifndef RPMA_PRIVATE_DATA_H
#define RPMA_PRIVATE_DATA_H

#include <rdma/rdma_cma.h>

#include "librpma.h"

/*
 * rpma_private_data_store -- copy the event's private data into *pdata (ptr NULL, len 0 when
 * there is none); 0 or RPMA_E_NOMEM, *pdata untouched on failure
 */
int rpma_private_data_store(
	const struct rdma_cm_event *event, struct rpma_conn_private_data *pdata);

/* rpma_private_data_delete -- free a stored copy and empty *pdata */
void rpma_private_data_delete(struct rpma_conn_private_data *pdata);

#endif /* RPMA_PRIVATE_DATA_H */
