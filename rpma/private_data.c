// SPDX-License-Identifier: BSD-3-Clause
/*
 * private_data.c -- copies of the private data that comes with CM events
 */
#include <stdlib.h>
#include <string.h>

#include "private_data.h"

int rpma_private_data_store(const struct rdma_cm_event *event, struct rpma_conn_private_data *pdata)
{
	const void *src = event->param.conn.private_data;
	uint8_t len = event->param.conn.private_data_len;

	if (src == NULL || len == 0) {
		pdata->ptr = NULL;
		pdata->len = 0;
		return 0;
	}

	void *copy = malloc(len);
	if (copy == NULL)
		return RPMA_E_NOMEM;

	memcpy(copy, src, len);
	pdata->ptr = copy;
	pdata->len = len;
	return 0;
}

void rpma_private_data_delete(struct rpma_conn_private_data *pdata)
{
	free(pdata->ptr);
	pdata->ptr = NULL;
	pdata->len = 0;
}
