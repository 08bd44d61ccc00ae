// SPDX-License-Identifier: BSD-3-Clause
/*
 * utils.c -- finding an RDMA device by address, naming connection events
 */
#include <errno.h>

#include "info.h"
#include "log.h"

int rpma_utils_get_ibv_context(
	const char *addr, enum rpma_util_ibv_context_type type, struct ibv_context **ibv_ctx_ptr)
{
	if (addr == NULL || ibv_ctx_ptr == NULL)
		return RPMA_E_INVAL;

	enum rpma_info_side side;
	switch (type) {
	case RPMA_UTIL_IBV_CONTEXT_LOCAL:
		side = RPMA_INFO_PASSIVE;
		break;
	case RPMA_UTIL_IBV_CONTEXT_REMOTE:
		side = RPMA_INFO_ACTIVE;
		break;
	default:
		return RPMA_E_INVAL;
	}

	struct rdma_addrinfo *rai;
	int ret = rpma_info_new(addr, NULL, side, &rai);
	if (ret)
		return ret;

	/* a throw-away synchronous CM ID: binding or resolving it tells the device */
	struct rdma_cm_id *id;
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_create_id()");
		ret = RPMA_E_PROVIDER;
		goto err_free_info;
	}

	if (side == RPMA_INFO_PASSIVE)
		ret = rpma_info_bind_addr(rai, id, addr);
	else
		ret = rpma_info_resolve_addr(rai, id, addr, RPMA_DEFAULT_TIMEOUT_MS);
	if (ret)
		goto err_destroy_id;

	/* binding an address of a device-less interface (e.g. 127.0.0.1) succeeds without one */
	if (id->verbs == NULL) {
		RPMA_LOG_ERROR("no RDMA device serves %s", addr);
		ret = RPMA_E_PROVIDER;
		goto err_destroy_id;
	}

	/* librdmacm keeps its device contexts open: the pointer outlives the ID */
	*ibv_ctx_ptr = id->verbs;

err_destroy_id:
	(void)rdma_destroy_id(id);
err_free_info:
	rdma_freeaddrinfo(rai);
	return ret;
}

const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
{
	switch (conn_event) {
	case RPMA_CONN_UNDEFINED:
		return "Undefined connection event";
	case RPMA_CONN_ESTABLISHED:
		return "Connection established";
	case RPMA_CONN_CLOSED:
		return "Connection closed";
	case RPMA_CONN_LOST:
		return "Connection lost";
	case RPMA_CONN_REJECTED:
		return "Connection rejected";
	case RPMA_CONN_UNREACHABLE:
		return "Connection unreachable";
	default:
		return "Unsupported connection event";
	}
}
