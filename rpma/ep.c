// SPDX-License-Identifier: BSD-3-Clause
/*
 * ep.c -- listening endpoints and the connection requests they receive
 */
#include <errno.h>
#include <stdlib.h>

#include "conn_cfg.h"
#include "conn_req.h"
#include "info.h"
#include "log.h"

struct rpma_ep {
	struct rpma_peer *peer;
	struct rdma_cm_id *id;		 /* the listening CM ID */
	struct rdma_event_channel *evch; /* its events: connection requests */
};

/* public API */

int rpma_ep_listen(
	struct rpma_peer *peer, const char *addr, const char *port, struct rpma_ep **ep_ptr)
{
	if (peer == NULL || addr == NULL || port == NULL || ep_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_ep *ep = malloc(sizeof(*ep));
	if (ep == NULL)
		return RPMA_E_NOMEM;

	int ret;
	ep->peer = peer;
	ep->evch = rdma_create_event_channel();
	if (ep->evch == NULL) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_create_event_channel()");
		ret = RPMA_E_PROVIDER;
		goto err_free;
	}

	if (rdma_create_id(ep->evch, &ep->id, NULL, RDMA_PS_TCP)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_create_id()");
		ret = RPMA_E_PROVIDER;
		goto err_destroy_evch;
	}

	struct rdma_addrinfo *rai;
	ret = rpma_info_new(addr, port, RPMA_INFO_PASSIVE, &rai);
	if (ret)
		goto err_destroy_id;

	ret = rpma_info_bind_addr(rai, ep->id, addr);
	rdma_freeaddrinfo(rai);
	if (ret)
		goto err_destroy_id;

	/* backlog 0: the kernel's default */
	if (rdma_listen(ep->id, 0)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_listen(%s:%s)", addr, port);
		ret = RPMA_E_PROVIDER;
		goto err_destroy_id;
	}

	*ep_ptr = ep;
	RPMA_LOG_NOTICE("listening on %s:%s", addr, port);
	return 0;

err_destroy_id:
	(void)rdma_destroy_id(ep->id);
err_destroy_evch:
	rdma_destroy_event_channel(ep->evch);
err_free:
	free(ep);
	return ret;
}

int rpma_ep_shutdown(struct rpma_ep **ep_ptr)
{
	if (ep_ptr == NULL)
		return RPMA_E_INVAL;

	struct rpma_ep *ep = *ep_ptr;
	if (ep == NULL)
		return 0;

	if (rdma_destroy_id(ep->id)) {
		/* the ID still exists: keep the endpoint so the caller can retry */
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_destroy_id()");
		return RPMA_E_PROVIDER;
	}

	rdma_destroy_event_channel(ep->evch);
	free(ep);
	*ep_ptr = NULL;
	return 0;
}

int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd)
{
	if (ep == NULL || fd == NULL)
		return RPMA_E_INVAL;

	*fd = ep->evch->fd;
	return 0;
}

int rpma_ep_next_conn_req(
	struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr)
{
	if (ep == NULL || req_ptr == NULL)
		return RPMA_E_INVAL;

	if (cfg == NULL)
		cfg = rpma_conn_cfg_default();

	struct rdma_cm_event *event = NULL;
	if (rdma_get_cm_event(ep->evch, &event)) {
		/* EAGAIN from a non-blocking fd, ENODATA from a short read: nothing waiting */
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENODATA)
			return RPMA_E_NO_EVENT;

		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_get_cm_event()");
		return RPMA_E_PROVIDER;
	}

	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		RPMA_LOG_ERROR("unexpected event on the listening endpoint: %s (status %d)",
			rdma_event_str(event->event), event->status);
		(void)rdma_ack_cm_event(event);
		return RPMA_E_INVAL;
	}

	/* acknowledges the event and, on failure, rejects and destroys the request's ID */
	struct rpma_conn_req *req = NULL;
	int ret = rpma_conn_req_new_from_cm_event(ep->peer, event, cfg, &req);
	if (ret)
		return ret;

	*req_ptr = req;
	return 0;
}
