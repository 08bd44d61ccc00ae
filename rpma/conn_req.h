/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_req.h -- making an incoming connection request out of a CM event (private)
 */
#ifndef RPMA_CONN_REQ_H
#define RPMA_CONN_REQ_H

#include <rdma/rdma_cma.h>

#include "librpma.h"

/*
 * rpma_conn_req_new_from_cm_event -- set up a request for an RDMA_CM_EVENT_CONNECT_REQUEST:
 * the private data is copied, then the event is acknowledged (whatever happens next), then
 * the event's CM ID is moved to the request's own CM event channel (so the request does not
 * depend on the endpoint any more) and given CQs and a queue pair made with cfg. On failure
 * the connection request is rejected and its CM ID destroyed. 0, RPMA_E_INVAL (not a
 * connection request; nothing done, not acknowledged), RPMA_E_NOMEM or RPMA_E_PROVIDER.
 */
int rpma_conn_req_new_from_cm_event(struct rpma_peer *peer, struct rdma_cm_event *event,
	const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);

#endif /* RPMA_CONN_REQ_H */
