// SPDX-License-Identifier: BSD-3-Clause
/*
 * info.c -- address lookup for the library's CM IDs
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include "info.h"
#include "librpma.h"
#include "log.h"

int rpma_info_new(const char *addr, const char *port, enum rpma_info_side side,
	struct rdma_addrinfo **rai_ptr)
{
	struct rdma_addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	if (side == RPMA_INFO_PASSIVE)
		hints.ai_flags |= RAI_PASSIVE;
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_TCP;

	struct rdma_addrinfo *rai = NULL;
	errno = 0;
	int ret = rdma_getaddrinfo(addr, port, &hints, &rai);
	if (ret) {
		/* librdmacm returns either an EAI_* code or -1 with errno */
		int err = errno;
		const char *why;
		char buf[128];
		if (ret == -1 || ret == EAI_SYSTEM)
			why = rpma_log_errstr(err, buf, sizeof(buf));
		else
			why = gai_strerror(ret);
		RPMA_LOG_ERROR("rdma_getaddrinfo(%s, %s, %s) failed: %s", addr,
			port ? port : "(no port)", side == RPMA_INFO_PASSIVE ? "passive" : "active",
			why);
		return RPMA_E_PROVIDER;
	}

	*rai_ptr = rai;
	return 0;
}

int rpma_info_bind_addr(const struct rdma_addrinfo *rai, struct rdma_cm_id *id, const char *addr)
{
	if (rdma_bind_addr(id, rai->ai_src_addr)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "rdma_bind_addr(%s)", addr);
		return RPMA_E_PROVIDER;
	}

	return 0;
}

int rpma_info_resolve_addr(
	const struct rdma_addrinfo *rai, struct rdma_cm_id *id, const char *addr, int timeout_ms)
{
	if (rdma_resolve_addr(id, rai->ai_src_addr, rai->ai_dst_addr, timeout_ms)) {
		RPMA_LOG_ERROR_WITH_ERRNO(
			errno, "rdma_resolve_addr(%s, timeout_ms=%d)", addr, timeout_ms);
		return RPMA_E_PROVIDER;
	}

	return 0;
}
