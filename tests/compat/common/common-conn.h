/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common-conn.h -- the connection helpers the compat programs share, in the shape of the ones
 * librpma's examples share (written for rpmafs)
 *
 * Deliberately includes nothing but <librpma.h>: like librpma's examples, the programs use
 * printf(), fprintf(stderr), uint64_t, bool and errno through what <librpma.h> includes, so a
 * header that drops one of librpma 1.3's includes fails to compile them.
 */
#ifndef COMMON_CONN_H
#define COMMON_CONN_H

#include <librpma.h>

#define KILOBYTE 1024

/* what a program prints once its endpoint listens (the lab scripts wait for this line) */
#define LISTENING_FMT "listening on %s:%s\n"

/* a page-aligned, zeroed block of size bytes, or NULL (reported on stderr) */
void *malloc_aligned(size_t size);

/* a decimal number; 0 when it is not one (reported on stderr) */
uint64_t strtoul_noerror(const char *in);

/* O_NONBLOCK on fd; 0 or -1 (reported) */
int fd_set_nonblock(int fd);

/* a peer on the device that serves addr (LOCAL) or reaches it (REMOTE) */
int common_peer_via_address(
	const char *addr, enum rpma_util_ibv_context_type type, struct rpma_peer **peer_ptr);
#define client_peer_via_address(addr, peer_ptr) \
	common_peer_via_address(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, peer_ptr)
#define server_peer_via_address(addr, peer_ptr) \
	common_peer_via_address(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, peer_ptr)

/* listen on addr:port and print LISTENING_FMT (flushed) */
int common_listen(
	struct rpma_peer *peer, const char *addr, const char *port, struct rpma_ep **ep_ptr);

/* connect to addr:port with cfg and pdata (both may be NULL), wait for ESTABLISHED */
int client_connect(struct rpma_peer *peer, const char *addr, const char *port,
	struct rpma_conn_cfg *cfg, struct rpma_conn_private_data *pdata,
	struct rpma_conn **conn_ptr);

/* take the next connection request with cfg, accept it with pdata, wait for ESTABLISHED */
int server_accept_connection(struct rpma_ep *ep, struct rpma_conn_cfg *cfg,
	struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);

/* wait for RPMA_CONN_CLOSED, then disconnect and delete (the other side closes) */
int common_wait_for_conn_close_and_disconnect(struct rpma_conn **conn_ptr);

/* disconnect, wait for RPMA_CONN_CLOSED, delete (this side closes) */
int common_disconnect_and_wait_for_conn_close(struct rpma_conn **conn_ptr);

#endif /* COMMON_CONN_H */
