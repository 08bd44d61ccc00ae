/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpma_ext.h -- rpmafs extensions to the librpma API
 *
 * Functions here are not part of librpma: they exist only in the project's
 * own rpma/ library. Code that must also build against the distribution's
 * librpma includes this header only when RPMA_HAVE_EXT is defined.
 */
#ifndef LIBRPMA_EXT_H
#define LIBRPMA_EXT_H

#include <sys/socket.h>

#include "librpma.h"

/*
 * rpma_conn_req_get_peer_addr -- the address an incoming connection request
 * comes from (the peer's source address and port), so that a listener can
 * decide whether to accept it before calling rpma_conn_req_connect(). librpma
 * has no way to tell, which is why this extension exists.
 *
 * Returns 0 with *addr filled (ss_family AF_INET or AF_INET6, the rest of
 * the structure zeroed), or RPMA_E_INVAL when req or addr is NULL, when req
 * is an outgoing request (made by rpma_conn_req_new(), whose caller named
 * the peer), or when the peer's address is of another family (e.g. AF_IB);
 * *addr is left untouched on error.
 */
int rpma_conn_req_get_peer_addr(const struct rpma_conn_req *req, struct sockaddr_storage *addr);

#endif /* LIBRPMA_EXT_H */
