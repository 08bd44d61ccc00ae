/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * info.h -- address lookup for the library's CM IDs (private)
 *
 * A thin layer over rdma_getaddrinfo(): the hints every caller needs (RC, RDMA_PS_TCP), and
 * the failures written to the log with the address, so that callers only pass results on.
 */
#ifndef RPMA_INFO_H
#define RPMA_INFO_H

#include <rdma/rdma_cma.h>

enum rpma_info_side {
	RPMA_INFO_ACTIVE,  /* addr is where to connect to */
	RPMA_INFO_PASSIVE, /* addr is a local address to bind to */
};

/*
 * rpma_info_new -- look addr:port up (port may be NULL); the result is freed with
 * rdma_freeaddrinfo(). Returns 0 or RPMA_E_PROVIDER.
 */
int rpma_info_new(const char *addr, const char *port, enum rpma_info_side side,
	struct rdma_addrinfo **rai_ptr);

/* rpma_info_bind_addr -- rdma_bind_addr() to the looked-up local address; 0 or RPMA_E_PROVIDER */
int rpma_info_bind_addr(const struct rdma_addrinfo *rai, struct rdma_cm_id *id, const char *addr);

/*
 * rpma_info_resolve_addr -- rdma_resolve_addr() to the looked-up remote address, waiting at
 * most timeout_ms for a synchronous CM ID; 0 or RPMA_E_PROVIDER
 */
int rpma_info_resolve_addr(
	const struct rdma_addrinfo *rai, struct rdma_cm_id *id, const char *addr, int timeout_ms);

#endif /* RPMA_INFO_H */
