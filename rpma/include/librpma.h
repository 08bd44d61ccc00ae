/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpma.h -- the messaging subset of the librpma 1.3 API, re-implemented for rpmafs on top of
 * libibverbs and librdmacm
 *
 * A program written against librpma's messaging API compiles unchanged against this header and
 * links with the project's static library (build/rpma/librpma.a -libverbs -lrdmacm). Names,
 * signatures, struct names, enum values, flag values and error values are those of librpma 1.3.
 *
 * What is here: peers (protection domains), local memory registrations, connection
 * configuration, listening endpoints, connection requests, connections with their completion
 * queues, shared receive queues (SRQ), SEND / SEND with immediate / RECV, the 0-byte RDMA WRITE
 * used as a completion fence, error strings and logging.
 *
 * What is not here (not declared at all): peer configuration and direct write to PMem, remote
 * memory regions and their descriptors, rpma_read(), rpma_flush(), rpma_atomic_write(),
 * rpma_write_with_imm(), rpma_mr_advise() and On-Demand Paging.
 *
 * Conventions shared by every function below:
 * - 0 means success, a negative RPMA_E_* value means failure;
 * - an output argument is left untouched when the function fails, unless the description says
 *   otherwise;
 * - RPMA_E_PROVIDER means a libibverbs or librdmacm call failed; the call and its errno are
 *   written to the log (see rpma_log_set_function()), so read the log for the cause;
 * - *_new() / *_delete() pairs take a pointer to the object pointer; a successful delete sets it
 *   to NULL and deleting a NULL object is a successful no-op.
 *
 * Connections are reliable-connected (RC) queue pairs made through librdmacm in the TCP port
 * space (RDMA_PS_TCP), so this library interoperates with librpma peers and with any verbs
 * program that connects the same way.
 */

#ifndef LIBRPMA_H
#define LIBRPMA_H 1

/* librpma 1.3's includes, in its order: programs written against it rely on them (stderr) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rpma_conn_wait() flag kept for source compatibility with librpma; no flag changes its work */
#define RPMA_W_WAIT_FOR_COMPLETION (1)

/* error codes; every function returns 0 or one of these */
#define RPMA_E_UNKNOWN (-100000)	 /* an error with no better description */
#define RPMA_E_NOSUPP (-100001)		 /* the operation is not supported */
#define RPMA_E_PROVIDER (-100002)	 /* libibverbs or librdmacm failed; the log has why */
#define RPMA_E_NOMEM (-100003)		 /* out of memory */
#define RPMA_E_INVAL (-100004)		 /* an argument is invalid */
#define RPMA_E_NO_COMPLETION (-100005)	 /* no completion is available now */
#define RPMA_E_NO_EVENT (-100006)	 /* no connection event is available now */
#define RPMA_E_AGAIN (-100007)		 /* a temporary failure; trying again may succeed */
#define RPMA_E_SHARED_CHANNEL (-100008)	 /* the completion channel is shared by CQ and RCQ */
#define RPMA_E_NOT_SHARED_CHNL (-100009) /* the completion channel is not shared */

/* timeout used when no connection configuration is given (milliseconds) */
#define RPMA_DEFAULT_TIMEOUT_MS 1000

/* ------------------------------------------------------------------------------------------ */
/* utils                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* which side of a connection an address given to rpma_utils_get_ibv_context() belongs to */
enum rpma_util_ibv_context_type {
	RPMA_UTIL_IBV_CONTEXT_LOCAL, /* an address of this host */
	RPMA_UTIL_IBV_CONTEXT_REMOTE /* an address of the other host */
};

/*
 * rpma_utils_get_ibv_context -- find the RDMA device that serves an IP address
 *
 * Looks addr (an IPv4 or IPv6 address or a host name) up with rdma_getaddrinfo() in the TCP
 * port space. For RPMA_UTIL_IBV_CONTEXT_LOCAL the address is bound locally (rdma_bind_addr());
 * for RPMA_UTIL_IBV_CONTEXT_REMOTE a route to it is resolved (rdma_resolve_addr(), waiting at
 * most RPMA_DEFAULT_TIMEOUT_MS). The device context found is stored in *ibv_ctx_ptr; it stays
 * valid for the life of the process (librdmacm keeps its devices open) and is what
 * rpma_peer_new() wants.
 *
 * Returns 0 on success, or:
 * - RPMA_E_INVAL: addr or ibv_ctx_ptr is NULL, or type is neither value of the enum;
 * - RPMA_E_PROVIDER: rdma_getaddrinfo(), rdma_create_id(), rdma_bind_addr() or
 *   rdma_resolve_addr() failed, or the address is not served by any RDMA device (for example
 *   127.0.0.1 binds but has no device).
 */
int rpma_utils_get_ibv_context(
	const char *addr, enum rpma_util_ibv_context_type type, struct ibv_context **ibv_ctx_ptr);

/* ------------------------------------------------------------------------------------------ */
/* peer                                                                                       */
/* ------------------------------------------------------------------------------------------ */

struct rpma_peer;

/*
 * rpma_peer_new -- create a peer: a protection domain on an RDMA device
 *
 * Every memory registration, endpoint and connection made from the peer shares its protection
 * domain, so memory registered with a peer can be used on any connection of that peer.
 *
 * Returns 0 and stores the new peer in *peer_ptr, or:
 * - RPMA_E_INVAL: ibv_ctx or peer_ptr is NULL;
 * - RPMA_E_NOMEM: out of memory, or ibv_alloc_pd() failed with ENOMEM;
 * - RPMA_E_PROVIDER: ibv_alloc_pd() failed with another errno;
 * - RPMA_E_UNKNOWN: ibv_alloc_pd() failed without setting errno.
 */
int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr);

/*
 * rpma_peer_delete -- delete a peer and its protection domain
 *
 * Every registration, endpoint and connection of the peer must be gone first. *peer_ptr == NULL
 * is a no-op.
 *
 * Returns 0 and sets *peer_ptr to NULL, or:
 * - RPMA_E_INVAL: peer_ptr is NULL;
 * - RPMA_E_PROVIDER: ibv_dealloc_pd() failed (typically EBUSY: something still uses the
 *   protection domain); the peer is left intact and *peer_ptr unchanged, so the call can be
 *   repeated once the users are gone.
 */
int rpma_peer_delete(struct rpma_peer **peer_ptr);

/* ------------------------------------------------------------------------------------------ */
/* local memory registration                                                                  */
/* ------------------------------------------------------------------------------------------ */

struct rpma_mr_local;

/*
 * A remote memory region. This library does not implement remote memory access, so nothing
 * creates one; the type exists only so that rpma_write() keeps librpma's signature.
 */
struct rpma_mr_remote;

/* what registered memory is used for (rpma_mr_reg() usage, bitwise OR of these) */
#define RPMA_MR_USAGE_READ_SRC (1 << 0)
#define RPMA_MR_USAGE_READ_DST (1 << 1)
#define RPMA_MR_USAGE_WRITE_SRC (1 << 2)
#define RPMA_MR_USAGE_WRITE_DST (1 << 3)
#define RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY (1 << 4)
#define RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT (1 << 5)
#define RPMA_MR_USAGE_SEND (1 << 6)
#define RPMA_MR_USAGE_RECV (1 << 7)

/*
 * rpma_mr_reg -- register memory with a peer's protection domain
 *
 * usage says what the memory is for and decides the access rights of the registration:
 * - RPMA_MR_USAGE_SEND: source of rpma_send() (no access right is needed);
 * - RPMA_MR_USAGE_RECV: destination of rpma_recv() (local write);
 * - RPMA_MR_USAGE_READ_SRC, RPMA_MR_USAGE_FLUSH_TYPE_*: remote read;
 * - RPMA_MR_USAGE_READ_DST: local write (and remote write on iWARP devices);
 * - RPMA_MR_USAGE_WRITE_SRC: local write;
 * - RPMA_MR_USAGE_WRITE_DST: remote write and local write.
 * The same mapping as librpma, so registrations are interchangeable with it.
 *
 * Registered memory is pinned and counts against RLIMIT_MEMLOCK for processes without
 * CAP_IPC_LOCK. When the registration fails with ENOMEM or EPERM the log says so and gives the
 * current limit and the size asked for.
 *
 * Returns 0 and stores the registration in *mr_ptr, or:
 * - RPMA_E_INVAL: peer, ptr or mr_ptr is NULL, size is 0, usage is 0 or has bits outside the
 *   RPMA_MR_USAGE_* values;
 * - RPMA_E_NOMEM: out of memory;
 * - RPMA_E_PROVIDER: ibv_reg_mr() failed (errno in the log).
 */
int rpma_mr_reg(
	struct rpma_peer *peer, void *ptr, size_t size, int usage, struct rpma_mr_local **mr_ptr);

/*
 * rpma_mr_dereg -- deregister memory and delete the registration object
 *
 * No posted operation may still use the memory. *mr_ptr == NULL is a no-op.
 *
 * Returns 0 and sets *mr_ptr to NULL, or:
 * - RPMA_E_INVAL: mr_ptr is NULL;
 * - RPMA_E_PROVIDER: ibv_dereg_mr() failed; the registration is left intact and *mr_ptr
 *   unchanged, so the call can be repeated.
 */
int rpma_mr_dereg(struct rpma_mr_local **mr_ptr);

/*
 * rpma_mr_get_ptr -- get the start of the registered memory
 *
 * Returns 0 and stores the address in *ptr, or RPMA_E_INVAL when mr or ptr is NULL.
 */
int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr);

/*
 * rpma_mr_get_size -- get the size of the registered memory
 *
 * Returns 0 and stores the size in *size, or RPMA_E_INVAL when mr or size is NULL.
 */
int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size);

/* ------------------------------------------------------------------------------------------ */
/* connection configuration                                                                   */
/* ------------------------------------------------------------------------------------------ */

struct rpma_conn_cfg;

/*
 * rpma_conn_cfg_new -- create a connection configuration with the default values
 *
 * Defaults: timeout 1000 ms, cq_size 10, rcq_size 0 (no separate receive CQ), sq_size 10,
 * rq_size 10, completion channel not shared. A configuration is read when a connection request
 * is created (rpma_conn_req_new(), rpma_ep_next_conn_req()); changing it later does not change
 * existing connections. Getters and setters may be called from several threads.
 *
 * Sizing: when no receive CQ is used the main CQ receives the completions of both queues, so
 * cq_size should be at least sq_size + rq_size; when a connection fails every outstanding work
 * request, signaled or not, completes with a flush error and needs a CQ entry.
 *
 * Returns 0 and stores the object in *cfg_ptr, or:
 * - RPMA_E_INVAL: cfg_ptr is NULL;
 * - RPMA_E_NOMEM: out of memory.
 */
int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);

/*
 * rpma_conn_cfg_delete -- delete a connection configuration
 *
 * Returns 0 and sets *cfg_ptr to NULL (*cfg_ptr == NULL is a no-op), or RPMA_E_INVAL when
 * cfg_ptr is NULL.
 */
int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);

/*
 * rpma_conn_cfg_set_timeout -- set the time allowed for resolving the address and the route of
 * an outgoing connection (milliseconds)
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL or timeout_ms < 0.
 */
int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms);

/*
 * rpma_conn_cfg_get_timeout -- get the timeout set by rpma_conn_cfg_set_timeout()
 *
 * Returns 0 and stores it in *timeout_ms, or RPMA_E_INVAL when cfg or timeout_ms is NULL.
 */
int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms);

/*
 * rpma_conn_cfg_set_cq_size -- set the number of entries of the connection's main CQ
 *
 * Values above INT_MAX are used as INT_MAX. The provider rejects 0 and sizes above the device
 * limit when the connection request is created.
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL.
 */
int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);

/*
 * rpma_conn_cfg_get_cq_size -- get the main CQ size
 *
 * Returns 0 and stores it in *cq_size, or RPMA_E_INVAL when cfg or cq_size is NULL.
 */
int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size);

/*
 * rpma_conn_cfg_set_rcq_size -- set the number of entries of a separate receive CQ
 *
 * 0 (the default) means no receive CQ: receive completions go to the main CQ. With a receive
 * CQ, rpma_recv() completions go there and nowhere else (see rpma_conn_get_rcq()).
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL.
 */
int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size);

/*
 * rpma_conn_cfg_get_rcq_size -- get the receive CQ size
 *
 * Returns 0 and stores it in *rcq_size, or RPMA_E_INVAL when cfg or rcq_size is NULL.
 */
int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size);

/*
 * rpma_conn_cfg_set_sq_size -- set the number of work requests the send queue holds
 *
 * Every rpma_send(), rpma_send_with_imm() and rpma_write() takes a send queue slot that is
 * freed only when that request, or a later signaled one, completes and its completion is
 * reaped. Posting into a full send queue fails with RPMA_E_PROVIDER (ENOMEM in the log).
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL.
 */
int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size);

/*
 * rpma_conn_cfg_get_sq_size -- get the send queue size
 *
 * Returns 0 and stores it in *sq_size, or RPMA_E_INVAL when cfg or sq_size is NULL.
 */
int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size);

/*
 * rpma_conn_cfg_set_rq_size -- set the number of receives the receive queue holds
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL.
 */
int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size);

/*
 * rpma_conn_cfg_get_rq_size -- get the receive queue size
 *
 * Returns 0 and stores it in *rq_size, or RPMA_E_INVAL when cfg or rq_size is NULL.
 */
int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size);

/*
 * rpma_conn_cfg_set_compl_channel -- choose one completion channel for the main CQ and the
 * receive CQ
 *
 * By default every CQ has its own completion channel and is waited for with rpma_cq_wait().
 * With shared == true both CQs report to one channel: wait with rpma_conn_wait(), whose result
 * says which CQ to reap, and get the channel's fd with rpma_conn_get_compl_fd().
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL.
 */
int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared);

/*
 * rpma_conn_cfg_get_compl_channel -- get whether the completion channel is shared
 *
 * Returns 0 and stores it in *shared, or RPMA_E_INVAL when cfg or shared is NULL.
 */
int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared);

struct rpma_srq;

/*
 * rpma_conn_cfg_set_srq -- receive through a shared receive queue (NULL, the default: the
 * connection has its own receive queue)
 *
 * A connection made with this configuration has no receive queue of its own: its incoming
 * messages consume the receives posted with rpma_srq_recv(), and rq_size is not used. The
 * receive completions go, as in librpma, to the SRQ's receive CQ when it has one (every
 * connection of the SRQ shares it; wc.qp_num tells which connection a completion belongs to,
 * see rpma_conn_get_qp_num()); otherwise to the connection's own receive CQ when rcq_size > 0;
 * otherwise to its main CQ. The SRQ is not copied: it must outlive every connection request
 * and connection made with it, and belong to the same peer (checked when the request is made).
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL.
 */
int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq);

/*
 * rpma_conn_cfg_get_srq -- get the shared receive queue set by rpma_conn_cfg_set_srq()
 *
 * Returns 0 and stores it (NULL when none) in *srq_ptr, or RPMA_E_INVAL when cfg or srq_ptr is
 * NULL.
 */
int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr);

/* ------------------------------------------------------------------------------------------ */
/* connection                                                                                 */
/* ------------------------------------------------------------------------------------------ */

struct rpma_conn;
struct rpma_cq;

/* what rpma_conn_next_event() reports */
enum rpma_conn_event {
	RPMA_CONN_UNDEFINED = -1, /* not an event; a value for "nothing yet" */
	RPMA_CONN_ESTABLISHED,	  /* the connection is up */
	RPMA_CONN_CLOSED,	  /* the connection was closed (by either side) */
	RPMA_CONN_LOST,		  /* the connection failed or its device went away */
	RPMA_CONN_REJECTED,	  /* the other side rejected the connection */
	RPMA_CONN_UNREACHABLE	  /* the other side did not answer */
};

/* private data exchanged when a connection is made */
struct rpma_conn_private_data {
	void *ptr;
	uint8_t len;
};

/*
 * rpma_conn_get_event_fd -- get the fd that becomes readable when a connection event is waiting
 *
 * The fd may be set to O_NONBLOCK and used with poll(2)/epoll(7); then rpma_conn_next_event()
 * returns RPMA_E_NO_EVENT instead of blocking.
 *
 * Returns 0 and stores it in *fd, or RPMA_E_INVAL when conn or fd is NULL.
 */
int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd);

/*
 * rpma_conn_next_event -- get and acknowledge the next connection event
 *
 * Blocks until an event arrives unless the event fd is non-blocking. librdmacm events map to:
 * - RDMA_CM_EVENT_ESTABLISHED -> RPMA_CONN_ESTABLISHED; on the side that called
 *   rpma_conn_req_new() the private data the other side accepted with is kept from this
 *   event for rpma_conn_get_private_data();
 * - RDMA_CM_EVENT_DISCONNECTED, RDMA_CM_EVENT_TIMEWAIT_EXIT -> RPMA_CONN_CLOSED;
 * - RDMA_CM_EVENT_CONNECT_ERROR, RDMA_CM_EVENT_DEVICE_REMOVAL -> RPMA_CONN_LOST;
 * - RDMA_CM_EVENT_REJECTED -> RPMA_CONN_REJECTED;
 * - RDMA_CM_EVENT_UNREACHABLE, RDMA_CM_EVENT_ADDR_ERROR, RDMA_CM_EVENT_ROUTE_ERROR ->
 *   RPMA_CONN_UNREACHABLE (librpma maps only the first; the other two cannot normally reach a
 *   connection, because the address and route are resolved before it exists, and are mapped so
 *   that they never surface as RPMA_E_UNKNOWN);
 * - anything else -> RPMA_E_UNKNOWN (the event is acknowledged and named in the log).
 *
 * Returns 0 and stores the event in *event, or:
 * - RPMA_E_INVAL: conn or event is NULL;
 * - RPMA_E_NO_EVENT: the event fd is non-blocking and no event is waiting;
 * - RPMA_E_NOMEM: out of memory while keeping the private data (the event is acknowledged);
 * - RPMA_E_PROVIDER: rdma_get_cm_event() or rdma_ack_cm_event() failed;
 * - RPMA_E_UNKNOWN: an event with no mapping above.
 */
int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event);

/*
 * rpma_utils_conn_event_2str -- name a connection event
 *
 * Returns a constant string for every value of enum rpma_conn_event and
 * "Unsupported connection event" for anything else. Cannot fail.
 */
const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);

/*
 * rpma_conn_get_private_data -- get the private data the other side sent when connecting
 *
 * On the passive side (rpma_ep_next_conn_req()) it is what came with the connection request;
 * on the active side (rpma_conn_req_new()) it is what came with the accept, available after
 * RPMA_CONN_ESTABLISHED. The bytes are a copy owned by the connection and valid while it
 * exists. The transport may pad them: over InfiniBand and RoCE a request carries 56 bytes and
 * an accept 196, zeros after what the sender gave. No data gives ptr == NULL, len == 0.
 * Private data is not authenticated: check it before trusting it.
 *
 * Returns 0 and fills *pdata, or RPMA_E_INVAL when conn or pdata is NULL.
 */
int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata);

/*
 * rpma_conn_get_qp_num -- get the number of the connection's queue pair
 *
 * The number is also the qp_num of every completion of the connection.
 *
 * Returns 0 and stores it in *qp_num, or RPMA_E_INVAL when conn or qp_num is NULL.
 */
int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);

/*
 * rpma_conn_get_cq -- get the connection's main CQ
 *
 * Without a receive CQ it gets every completion of the connection; with one it gets all but
 * the rpma_recv() / rpma_conn_req_recv() completions. The CQ belongs to the connection.
 *
 * Returns 0 and stores it in *cq_ptr, or RPMA_E_INVAL when conn or cq_ptr is NULL.
 */
int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr);

/*
 * rpma_conn_get_rcq -- get the connection's receive CQ
 *
 * It exists when the configuration's rcq_size was above 0 and gets the completions of the
 * receives; otherwise *rcq_ptr is set to NULL. A connection on an SRQ that has a receive CQ has
 * none of its own (*rcq_ptr is NULL): its receives complete on the SRQ's (rpma_srq_get_rcq()).
 *
 * Returns 0 and stores it in *rcq_ptr, or RPMA_E_INVAL when conn or rcq_ptr is NULL.
 */
int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr);

/*
 * rpma_conn_get_compl_fd -- get the fd of the shared completion channel
 *
 * The fd becomes readable when either CQ has a completion event; it may be set to O_NONBLOCK
 * and used with poll(2)/epoll(7).
 *
 * Returns 0 and stores it in *fd, or:
 * - RPMA_E_INVAL: conn or fd is NULL;
 * - RPMA_E_NOT_SHARED_CHNL: the connection was not configured with a shared channel.
 */
int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);

/*
 * rpma_conn_wait -- wait for a completion event on the shared completion channel
 *
 * Gets the next event (blocking unless the channel fd is non-blocking), acknowledges it,
 * re-arms the CQ it came from, stores that CQ in *cq and, when is_rcq is not NULL, whether it
 * is the receive CQ in *is_rcq. Then reap the CQ with rpma_cq_get_wc() until it reports
 * RPMA_E_NO_COMPLETION. flags is accepted for librpma compatibility and not used.
 *
 * Returns 0, or:
 * - RPMA_E_INVAL: conn or cq is NULL;
 * - RPMA_E_NOT_SHARED_CHNL: the connection has no shared channel (use rpma_cq_wait());
 * - RPMA_E_NO_COMPLETION: no event was waiting on a non-blocking fd, or the wait was
 *   interrupted (errno in the debug log);
 * - RPMA_E_UNKNOWN: the event came from a CQ that is not the connection's;
 * - RPMA_E_PROVIDER: re-arming the CQ (ibv_req_notify_cq()) failed; *cq is set to NULL.
 */
int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq);

/*
 * rpma_conn_disconnect -- start tearing the connection down
 *
 * Either side may call it. The end is reported by RPMA_CONN_CLOSED from
 * rpma_conn_next_event(); when that event came first (the other side disconnected), the call
 * completes the teardown. Outstanding work requests complete with IBV_WC_WR_FLUSH_ERR.
 *
 * Returns 0, or:
 * - RPMA_E_INVAL: conn is NULL;
 * - RPMA_E_PROVIDER: rdma_disconnect() failed.
 */
int rpma_conn_disconnect(struct rpma_conn *conn);

/*
 * rpma_conn_delete -- release a connection and everything it owns
 *
 * Destroys the queue pair, the CQs, the completion channels, the CM ID and its event channel
 * and frees the private data. Disconnect first; no other thread may use the connection or its
 * CQs during or after the call.
 *
 * Returns 0, or:
 * - RPMA_E_INVAL: conn_ptr is NULL;
 * - RPMA_E_PROVIDER: destroying a CQ, a completion channel or the CM ID failed (logged); the
 *   rest is still released, except the channel a CQ or the CM ID that failed to go still
 *   uses.
 * *conn_ptr is set to NULL on success and on RPMA_E_PROVIDER; *conn_ptr == NULL is a no-op.
 */
int rpma_conn_delete(struct rpma_conn **conn_ptr);

/* ------------------------------------------------------------------------------------------ */
/* connection request                                                                         */
/* ------------------------------------------------------------------------------------------ */

struct rpma_conn_req;

/*
 * rpma_conn_req_new -- prepare an outgoing connection to addr:port
 *
 * Looks the address up, resolves the address and the route (each waiting at most the
 * configuration's timeout), creates the CQs (and the receive CQ and the shared channel when
 * the configuration asks for them) and the RC queue pair. Receives may be posted on the
 * request with rpma_conn_req_recv() before connecting. cfg == NULL means the defaults of
 * rpma_conn_cfg_new().
 *
 * Returns 0 and stores the request in *req_ptr, or:
 * - RPMA_E_INVAL: peer, addr, port or req_ptr is NULL;
 * - RPMA_E_INVAL: the configuration asks for a shared completion channel and has an SRQ with
 *   a receive CQ of its own (as librpma), or its SRQ belongs to another peer (beyond librpma);
 * - RPMA_E_NOMEM: out of memory;
 * - RPMA_E_PROVIDER: rdma_getaddrinfo(), rdma_create_id(), rdma_resolve_addr(),
 *   rdma_resolve_route(), rdma_create_event_channel(), rdma_migrate_id(),
 *   ibv_create_comp_channel(), ibv_create_cq(), ibv_req_notify_cq() or rdma_create_qp()
 *   failed.
 */
int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
	const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);

/*
 * rpma_conn_req_delete -- abandon a connection request
 *
 * An incoming request is rejected; an outgoing one is released without connecting.
 *
 * Returns 0, or:
 * - RPMA_E_INVAL: req_ptr is NULL;
 * - RPMA_E_PROVIDER: destroying a CQ or channel, rdma_reject() or rdma_destroy_id() failed
 *   (logged); the rest is still released, except the channel a CQ or the CM ID that failed
 *   to go still uses.
 * *req_ptr is set to NULL on success and on RPMA_E_PROVIDER; *req_ptr == NULL is a no-op.
 */
int rpma_conn_req_delete(struct rpma_conn_req **req_ptr);

/*
 * rpma_conn_req_connect -- connect (outgoing) or accept (incoming) a connection request
 *
 * Creates the connection object, with its own event channel, and sends pdata (or nothing when
 * pdata is NULL) as private data with the connect or the accept. The connection exists once
 * RPMA_CONN_ESTABLISHED comes from rpma_conn_next_event(). Connections use retry_count 7 and
 * rnr_retry_count 7 (the sender retries "receiver not ready" without limit). The transport
 * limits the private data: over InfiniBand and RoCE 56 bytes with a connect and 196 with an
 * accept; longer is refused by the kernel (RPMA_E_PROVIDER, EINVAL in the log).
 *
 * An accepted connection (InfiniBand, RoCE) asks a sender whose SEND found no receive posted
 * to retry after 0.64 ms (min_rnr_timer 12) instead of the 655 ms the kernel's CM sets. When
 * the device refuses the change a warning is logged and the connection works all the same.
 *
 * The request is consumed in every case except req_ptr == NULL or *req_ptr == NULL: *req_ptr
 * is set to NULL, and on failure everything the request held is released (an incoming request
 * is rejected).
 *
 * Returns 0 and stores the connection in *conn_ptr, or:
 * - RPMA_E_INVAL: req_ptr, *req_ptr or conn_ptr is NULL, or pdata is not NULL while
 *   pdata->ptr is NULL or pdata->len is 0;
 * - RPMA_E_NOMEM: out of memory;
 * - RPMA_E_PROVIDER: rdma_connect() or rdma_accept() failed.
 */
int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
	const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);

/*
 * rpma_conn_req_recv -- post a receive on a request's queue pair before connecting
 *
 * Like rpma_recv() (see there for how the message lands), for receives that must be in place
 * before the other side can send. The completion arrives on the connection's CQ (or receive
 * CQ) once connected. As in librpma, dst must not be NULL here.
 *
 * Returns 0, or:
 * - RPMA_E_INVAL: req or dst is NULL, offset + len is beyond dst's registered size,
 *   len > UINT32_MAX, or dst was registered with another peer;
 * - RPMA_E_INVAL: the request receives through an SRQ (post with rpma_srq_recv());
 * - RPMA_E_PROVIDER: ibv_post_recv() failed.
 */
int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset,
	size_t len, const void *op_context);

/*
 * rpma_conn_req_get_private_data -- get the private data of an incoming connection request
 *
 * The bytes are owned by the request (and later by the connection made from it). See
 * rpma_conn_get_private_data() for padding and trust. An outgoing request has none.
 *
 * Returns 0 and fills *pdata, or RPMA_E_INVAL when req or pdata is NULL.
 */
int rpma_conn_req_get_private_data(
	const struct rpma_conn_req *req, struct rpma_conn_private_data *pdata);

/* ------------------------------------------------------------------------------------------ */
/* endpoint (passive side)                                                                    */
/* ------------------------------------------------------------------------------------------ */

struct rpma_ep;

/*
 * rpma_ep_listen -- listen for incoming connections on addr:port
 *
 * Returns 0 and stores the endpoint in *ep_ptr, or:
 * - RPMA_E_INVAL: peer, addr, port or ep_ptr is NULL;
 * - RPMA_E_NOMEM: out of memory;
 * - RPMA_E_PROVIDER: rdma_create_event_channel(), rdma_create_id(), rdma_getaddrinfo(),
 *   rdma_bind_addr() or rdma_listen() failed (for example EADDRINUSE in the log).
 */
int rpma_ep_listen(
	struct rpma_peer *peer, const char *addr, const char *port, struct rpma_ep **ep_ptr);

/*
 * rpma_ep_shutdown -- stop listening and delete the endpoint
 *
 * Connections made through the endpoint live on.
 *
 * Returns 0 and sets *ep_ptr to NULL (*ep_ptr == NULL is a no-op), or:
 * - RPMA_E_INVAL: ep_ptr is NULL;
 * - RPMA_E_PROVIDER: rdma_destroy_id() failed; the endpoint is left intact and *ep_ptr
 *   unchanged.
 */
int rpma_ep_shutdown(struct rpma_ep **ep_ptr);

/*
 * rpma_ep_get_fd -- get the fd that becomes readable when a connection request is waiting
 *
 * The fd may be set to O_NONBLOCK and used with poll(2)/epoll(7).
 *
 * Returns 0 and stores it in *fd, or RPMA_E_INVAL when ep or fd is NULL.
 */
int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd);

/*
 * rpma_ep_next_conn_req -- take the next incoming connection request
 *
 * Blocks unless the endpoint fd is non-blocking. The request's queue pair and CQs are made
 * with cfg (NULL: the defaults) and its private data copied; accept it with
 * rpma_conn_req_connect() or reject it with rpma_conn_req_delete(). When the request cannot
 * be set up it is rejected before the error is returned.
 *
 * Returns 0 and stores the request in *req_ptr, or:
 * - RPMA_E_INVAL: ep or req_ptr is NULL, or the event was not a connection request (it is
 *   acknowledged and named in the log);
 * - RPMA_E_INVAL: cfg asks for a shared completion channel and has an SRQ with a receive CQ
 *   of its own, or its SRQ belongs to another peer than the endpoint's (the request is
 *   rejected);
 * - RPMA_E_NO_EVENT: the fd is non-blocking and nothing is waiting;
 * - RPMA_E_NOMEM: out of memory;
 * - RPMA_E_PROVIDER: rdma_get_cm_event(), rdma_ack_cm_event(), rdma_create_event_channel(),
 *   rdma_migrate_id() or creating the CQs or the queue pair failed.
 *
 * The request does not depend on the endpoint: it may be connected or deleted after
 * rpma_ep_shutdown().
 */
int rpma_ep_next_conn_req(
	struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);

/* ------------------------------------------------------------------------------------------ */
/* shared receive queue configuration                                                         */
/* ------------------------------------------------------------------------------------------ */

struct rpma_srq_cfg;

/*
 * rpma_srq_cfg_new -- create a shared receive queue configuration with the default values
 *
 * Defaults, as librpma 1.3's manual gives them: rq_size 100, rcq_size 100 (so rpma_srq_new()
 * makes a receive CQ of its own). (librpma's code has used 20 and 20 since 1.2, its manual
 * still says 100; a program that sizes both explicitly behaves the same with either.) Getters
 * and setters may be called from several threads.
 *
 * Returns 0 and stores the object in *cfg_ptr, or:
 * - RPMA_E_INVAL: cfg_ptr is NULL;
 * - RPMA_E_NOMEM: out of memory.
 */
int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr);

/*
 * rpma_srq_cfg_delete -- delete a shared receive queue configuration
 *
 * Returns 0 and sets *cfg_ptr to NULL (*cfg_ptr == NULL is a no-op), or RPMA_E_INVAL when
 * cfg_ptr is NULL.
 */
int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr);

/*
 * rpma_srq_cfg_set_rq_size -- set the number of receives the shared receive queue holds
 *
 * The provider rejects sizes above the device limit (max_srq_wr) in rpma_srq_new(); some
 * providers round the size up.
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL.
 */
int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size);

/*
 * rpma_srq_cfg_get_rq_size -- get the shared receive queue size
 *
 * Returns 0 and stores it in *rq_size, or RPMA_E_INVAL when cfg or rq_size is NULL.
 */
int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size);

/*
 * rpma_srq_cfg_set_rcq_size -- set the number of entries of the SRQ's receive CQ
 *
 * 0 means no receive CQ of the SRQ: each connection on it then reports its receive
 * completions to its own receive CQ or main CQ (see rpma_conn_cfg_set_srq()). Values above
 * INT_MAX are used as INT_MAX.
 *
 * Returns 0, or RPMA_E_INVAL when cfg is NULL.
 */
int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size);

/*
 * rpma_srq_cfg_get_rcq_size -- get the SRQ's receive CQ size
 *
 * Returns 0 and stores it in *rcq_size, or RPMA_E_INVAL when cfg or rcq_size is NULL.
 */
int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size);

/* ------------------------------------------------------------------------------------------ */
/* shared receive queue                                                                       */
/* ------------------------------------------------------------------------------------------ */

/*
 * rpma_srq_new -- create a shared receive queue in the peer's protection domain
 *
 * Creates the SRQ (rq_size receives of one scatter/gather element each) and, when rcq_size > 0,
 * a receive CQ with its own completion channel, armed from the start like a connection's CQs.
 * A receive CQ smaller than the SRQ can overrun (every posted receive may complete before one
 * is reaped): beyond librpma, that is logged as a warning.
 * cfg == NULL means the defaults of rpma_srq_cfg_new(); cfg is read here and not kept.
 * Connections use the SRQ through rpma_conn_cfg_set_srq().
 *
 * (librpma 1.3's manual gives cfg as const, its header declares it without const; a program
 * written for either compiles against this.)
 *
 * Returns 0 and stores the object in *srq_ptr, or:
 * - RPMA_E_INVAL: peer or srq_ptr is NULL;
 * - RPMA_E_NOMEM: out of memory;
 * - RPMA_E_PROVIDER: ibv_create_srq(), ibv_create_comp_channel(), ibv_create_cq() or
 *   ibv_req_notify_cq() failed (errno in the log).
 */
int rpma_srq_new(struct rpma_peer *peer, const struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr);

/*
 * rpma_srq_delete -- destroy a shared receive queue and its receive CQ
 *
 * Every connection request and connection made with the SRQ must be deleted first. Receives
 * still posted are discarded (no completion).
 *
 * Returns 0 and sets *srq_ptr to NULL (*srq_ptr == NULL is a no-op), or:
 * - RPMA_E_INVAL: srq_ptr is NULL;
 * - RPMA_E_PROVIDER: ibv_destroy_srq() failed (typically EBUSY: a queue pair still uses it);
 *   the SRQ is left intact and *srq_ptr unchanged, so the call can be repeated once the
 *   connections are gone (beyond librpma, which frees the object anyway);
 * - RPMA_E_PROVIDER: ibv_destroy_cq() or ibv_destroy_comp_channel() of the receive CQ failed
 *   (after the SRQ was destroyed); *srq_ptr is set to NULL, what failed to go is left.
 */
int rpma_srq_delete(struct rpma_srq **srq_ptr);

/*
 * rpma_srq_recv -- post a receive of up to len bytes at offset in dst on the shared receive
 * queue
 *
 * The receive is consumed by the next message that arrives on any connection of the SRQ;
 * receives form an unordered set (do not rely on which buffer takes which message). The
 * completion (IBV_WC_RECV, wc.byte_len = message size, wc.qp_num = the connection's queue
 * pair) carries op_context as wc.wr_id and arrives where rpma_conn_cfg_set_srq() says. dst ==
 * NULL with offset == 0 and len == 0 posts a receive with no scatter/gather element, which
 * accepts only 0-byte messages; a zero len with a dst is posted the same way. dst must be
 * registered with RPMA_MR_USAGE_RECV (or another usage giving local write) with the SRQ's peer
 * and stay registered until the receive completes.
 *
 * When a message arrives and no receive is posted, the sender's adapter is told "receiver not
 * ready" and retries (rnr_retry_count 7: without limit, every 0.64 ms on connections accepted
 * by this library), so nothing is lost while the receiver re-posts.
 *
 * Returns 0 once posted, or:
 * - RPMA_E_INVAL: srq == NULL;
 * - RPMA_E_INVAL: dst == NULL && (offset != 0 || len != 0);
 * - RPMA_E_INVAL: offset + len is beyond dst's registered size, len > UINT32_MAX, or dst was
 *   registered with another peer than the SRQ's (beyond librpma);
 * - RPMA_E_PROVIDER: ibv_post_srq_recv() failed (errno in the log; ENOMEM: the SRQ is full).
 */
int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len,
	const void *op_context);

/*
 * rpma_srq_get_rcq -- get the SRQ's receive CQ
 *
 * The CQ receives the completions of rpma_srq_recv() for every connection of the SRQ; wait on
 * it with rpma_cq_wait() / rpma_cq_get_fd() and reap it with rpma_cq_get_wc(). It belongs to
 * the SRQ. *rcq_ptr is set to NULL when the SRQ was made with rcq_size 0.
 *
 * Returns 0 and stores it in *rcq_ptr, or RPMA_E_INVAL when srq or rcq_ptr is NULL.
 */
int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr);

/* ------------------------------------------------------------------------------------------ */
/* messaging                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* completion flags of rpma_send(), rpma_send_with_imm() and rpma_write() */
#define RPMA_F_COMPLETION_ON_ERROR (1 << 0)
#define RPMA_F_COMPLETION_ALWAYS (1 << 1 | RPMA_F_COMPLETION_ON_ERROR)

/*
 * rpma_send -- post a SEND of len bytes at offset in src to the other side
 *
 * The message is consumed by one receive posted on the other side (rpma_recv() there); the
 * receive's buffer must hold it. src == NULL with offset == 0 and len == 0 sends a 0-byte
 * message: a work request with no scatter/gather element. A zero len with a src is sent the
 * same way. src must stay registered and its bytes unchanged until the send completes.
 *
 * flags: RPMA_F_COMPLETION_ALWAYS makes the request signaled, so a completion (wc.opcode
 * IBV_WC_SEND) arrives on success as well; RPMA_F_COMPLETION_ON_ERROR posts it unsignaled, so
 * only a failure produces a completion. Precisely: signaled iff
 * (flags & RPMA_F_COMPLETION_ALWAYS) == RPMA_F_COMPLETION_ALWAYS; other non-zero values are
 * accepted as librpma accepts them. op_context comes back as wc.wr_id.
 *
 * Safe to call from several threads on one connection at once (the provider serialises the
 * send queue). An unsignaled request keeps its send queue slot until a later signaled one
 * completes: see rpma_conn_cfg_set_sq_size() and rpma_write().
 *
 * Returns 0 once the request is posted, or:
 * - RPMA_E_INVAL: conn == NULL || flags == 0;
 * - RPMA_E_INVAL: src == NULL && (offset != 0 || len != 0);
 * - RPMA_E_INVAL: offset + len is beyond src's registered size, or len > UINT32_MAX (beyond
 *   librpma, which would post them and fail on the wire);
 * - RPMA_E_INVAL: src was registered with another peer (another protection domain) than the
 *   connection's (beyond librpma);
 * - RPMA_E_PROVIDER: ibv_post_send() failed (its errno in the log; ENOMEM: the send queue is
 *   full).
 */
int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	int flags, const void *op_context);

/*
 * rpma_send_with_imm -- rpma_send() that also carries 32 bits of immediate data
 *
 * imm is put on the wire in network byte order (the request's imm_data is htonl(imm)), as
 * librpma does; the receiver finds it in wc.imm_data with IBV_WC_WITH_IMM set in wc.wc_flags
 * and gets imm back with ntohl(). Arguments, 0-byte form and errors as rpma_send().
 */
int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
	size_t len, int flags, uint32_t imm, const void *op_context);

/*
 * rpma_recv -- post a receive of up to len bytes at offset in dst
 *
 * Each incoming message consumes one posted receive; receives form an unordered set (do not
 * rely on which buffer takes which message). A message longer than the buffer fails both
 * sides (IBV_WC_LOC_LEN_ERR here). The completion (IBV_WC_RECV, wc.byte_len = message size)
 * carries op_context as wc.wr_id and arrives on the receive CQ when there is one, otherwise
 * on the main CQ. dst == NULL with offset == 0 and len == 0 posts a receive with no
 * scatter/gather element, which accepts only 0-byte messages; a zero len with a dst is posted
 * the same way. dst must be registered with RPMA_MR_USAGE_RECV (or another usage giving local
 * write) and stay registered until the receive completes.
 *
 * Returns 0 once posted, or:
 * - RPMA_E_INVAL: conn is NULL;
 * - RPMA_E_INVAL: dst == NULL && (offset != 0 || len != 0);
 * - RPMA_E_INVAL: the connection receives through an SRQ (post with rpma_srq_recv(); beyond
 *   librpma, where the provider refuses it);
 * - RPMA_E_INVAL: offset + len is beyond dst's registered size, len > UINT32_MAX, or dst was
 *   registered with another peer (beyond librpma);
 * - RPMA_E_PROVIDER: ibv_post_recv() failed (errno in the log; ENOMEM: the receive queue is
 *   full).
 */
int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	const void *op_context);

/* ------------------------------------------------------------------------------------------ */
/* rpma_write: the 0-byte form only                                                           */
/* ------------------------------------------------------------------------------------------ */

/*
 * rpma_write -- post a 0-byte RDMA WRITE (a completion fence)
 *
 * Remote memory regions are not implemented, so the only accepted form is dst == NULL,
 * dst_offset == 0, src == NULL, src_offset == 0, len == 0: an RDMA WRITE work request with no
 * scatter/gather element, which moves no data and consumes no receive on the other side. Sent
 * after unsignaled rpma_send()s with RPMA_F_COMPLETION_ALWAYS, its completion
 * (IBV_WC_RDMA_WRITE) tells that every earlier request of the connection has completed (RC
 * completes in order) and frees their send queue slots. Other flags and op_context as
 * rpma_send().
 *
 * Returns 0 once posted, or:
 * - RPMA_E_INVAL: conn == NULL || flags == 0;
 * - RPMA_E_INVAL: any of dst, src, dst_offset, src_offset, len is not NULL / 0 (the forms
 *   librpma documents as invalid, and the data-carrying forms this library does not have);
 * - RPMA_E_PROVIDER: ibv_post_send() failed (errno in the log).
 */
int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	const void *op_context);

/* ------------------------------------------------------------------------------------------ */
/* completion queues                                                                          */
/* ------------------------------------------------------------------------------------------ */

/*
 * rpma_cq_get_fd -- get the fd of the CQ's completion channel
 *
 * The fd becomes readable when the CQ has a completion event for rpma_cq_wait(). It may be
 * set to O_NONBLOCK and used with poll(2)/epoll(7). With a shared channel both CQs return the
 * same fd (wait on it with rpma_conn_wait()).
 *
 * Returns 0 and stores it in *fd, or RPMA_E_INVAL when cq or fd is NULL.
 */
int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd);

/*
 * rpma_cq_wait -- wait for a completion event of the CQ, acknowledge it and re-arm the CQ
 *
 * The CQ is armed when it is created, so a completion that arrived before the first wait is
 * reported. Blocks unless the fd is non-blocking. After a successful wait reap the CQ with
 * rpma_cq_get_wc() until RPMA_E_NO_COMPLETION: one event may stand for many completions, and
 * a completion reaped before its event may leave an event with nothing to reap, which is
 * normal. Only one thread should wait on a CQ at a time.
 *
 * Returns 0, or:
 * - RPMA_E_INVAL: cq is NULL;
 * - RPMA_E_SHARED_CHANNEL: the channel is shared by CQ and RCQ (use rpma_conn_wait());
 * - RPMA_E_NO_COMPLETION: the fd is non-blocking and no event is waiting, or the wait was
 *   interrupted (errno in the debug log);
 * - RPMA_E_PROVIDER: re-arming (ibv_req_notify_cq()) failed.
 */
int rpma_cq_wait(struct rpma_cq *cq);

/*
 * rpma_cq_get_wc -- reap up to num_entries completions
 *
 * Polls the CQ (ibv_poll_cq()) into wc[0 .. num_entries - 1] and stores the number reaped in
 * *num_entries_got, which may be NULL only when num_entries is 1. Unsignaled requests produce
 * completions only on failure. For a completion whose status is not IBV_WC_SUCCESS only
 * wr_id, status, qp_num and vendor_err are meaningful.
 *
 * Returns 0, or:
 * - RPMA_E_INVAL: cq or wc is NULL, num_entries < 1, or num_entries > 1 with
 *   num_entries_got NULL;
 * - RPMA_E_NO_COMPLETION: the CQ is empty (not a failure);
 * - RPMA_E_PROVIDER: ibv_poll_cq() failed;
 * - RPMA_E_UNKNOWN: ibv_poll_cq() returned more than num_entries.
 */
int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got);

/* ------------------------------------------------------------------------------------------ */
/* errors                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/*
 * rpma_err_2str -- describe an error code
 *
 * Returns a constant string for 0 and for every RPMA_E_* value, and "Unknown error" for
 * anything else. Cannot fail.
 */
const char *rpma_err_2str(int ret);

/* ------------------------------------------------------------------------------------------ */
/* logging                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* message severities, and threshold values */
enum rpma_log_level {
	RPMA_LOG_DISABLED = -1, /* as a threshold: nothing passes */
	RPMA_LOG_LEVEL_FATAL,	/* the library cannot go on at all */
	RPMA_LOG_LEVEL_ERROR,	/* an operation failed */
	RPMA_LOG_LEVEL_WARNING, /* something unexpected the caller may handle */
	RPMA_LOG_LEVEL_NOTICE,	/* rare milestones: connection requested, closed, ... */
	RPMA_LOG_LEVEL_INFO,	/* frequent information */
	RPMA_LOG_LEVEL_DEBUG,	/* details for debugging */
};

/* the two thresholds */
enum rpma_log_threshold {
	/* messages above it are dropped before any logging function sees them (default WARNING) */
	RPMA_LOG_THRESHOLD,
	/* for the logging function's own use; the default one copies messages at or below it to
	 * stderr (default DISABLED) */
	RPMA_LOG_THRESHOLD_AUX,
	RPMA_LOG_THRESHOLD_MAX
};

/*
 * rpma_log_set_threshold -- set a threshold
 *
 * The default logging function sends messages at or below RPMA_LOG_THRESHOLD to syslog(3)
 * (FATAL as LOG_CRIT, ERROR as LOG_ERR, WARNING, NOTICE, INFO, DEBUG as themselves, with the
 * program's own openlog(3) identity) and those also at or below RPMA_LOG_THRESHOLD_AUX to
 * stderr with a timestamp. Thread-safe.
 *
 * Returns 0, or RPMA_E_INVAL when threshold is neither RPMA_LOG_THRESHOLD nor
 * RPMA_LOG_THRESHOLD_AUX, or level is not a value of enum rpma_log_level. (librpma may also
 * return RPMA_E_AGAIN on a concurrent change; this implementation never does.)
 */
int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level);

/*
 * rpma_log_get_threshold -- get a threshold
 *
 * Returns 0 and stores it in *level, or RPMA_E_INVAL when threshold is neither
 * RPMA_LOG_THRESHOLD nor RPMA_LOG_THRESHOLD_AUX, or level is NULL.
 */
int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level);

/*
 * a logging function: level, the library source file (may be NULL, then line_no and
 * function_name mean nothing), line, function, and a printf(3) format with its arguments
 */
typedef void rpma_log_function(enum rpma_log_level level, const char *file_name, const int line_no,
	const char *function_name, const char *message_format, ...);

#define RPMA_LOG_USE_DEFAULT_FUNCTION (NULL)

/*
 * rpma_log_set_function -- send the library's messages to log_function
 *
 * RPMA_LOG_USE_DEFAULT_FUNCTION restores the default (syslog and stderr, see
 * rpma_log_set_threshold()). Only messages at or below RPMA_LOG_THRESHOLD reach the function.
 * It may be called from any thread that uses the library, concurrently, so it must be
 * thread-safe. Thread-safe to call.
 *
 * Returns 0. (librpma may return RPMA_E_AGAIN on a concurrent change; this implementation
 * never does.)
 */
int rpma_log_set_function(rpma_log_function *log_function);

#ifdef __cplusplus
}
#endif

#endif /* LIBRPMA_H */
