/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_rdma.h -- a fake libibverbs + librdmacm for the rpma unit tests
 *
 * fake_rdma.c defines, under their real names, every ibv_* and rdma_* function the library
 * calls, and a fake device context whose ops table serves the static inline verbs
 * (ibv_post_send, ibv_post_recv, ibv_poll_cq, ibv_req_notify_cq dispatch through
 * ctx->ops), and ibv_wc_status_str() with libibverbs' words, for code above the library that
 * logs a completion's status. Test executables link the library and this fake, never the real
 * libraries.
 *
 * The fake behaves like a small provider, not like a list of canned answers:
 * - objects are really allocated and tracked, so a test can count what is still alive after
 *   any call (fake_live()) and free-order mistakes are caught;
 * - completion channels and CM event channels are pipes: their fds work with poll(2) and
 *   O_NONBLOCK exactly like the real ones, and reading an empty non-blocking one fails with
 *   EAGAIN like the kernel;
 * - a CQ raises an event on its channel only when armed (ibv_req_notify_cq) and a completion
 *   is added, and disarms itself, as verbs do;
 * - what the library asks of the provider is recorded: work requests, QP attributes, CQ sizes,
 *   connection parameters, timeouts, lookup hints;
 * - misuse that would crash, hang or leak with the real libraries is recorded as a
 *   "violation" (destroying a CQ with unacknowledged events, a CM ID with unacknowledged
 *   events or with a QP, a channel with CQs or IDs on it, rdma_destroy_qp() without a QP,
 *   migrating an ID with unacknowledged events, ...; chains of work requests are taken in order up to the first bad one, as verbs do);
 *   every test checks there are none;
 * - limits the kernel enforces are enforced: private data longer than 56 bytes in a connect
 *   or 196 in an accept is EINVAL (InfiniBand/RoCE), a CQ of fewer than 1 entry is EINVAL, a
 *   QP needs its ID bound to a device and a PD of that device, a work request may not have
 *   more SGEs than the QP was made for, ibv_dealloc_pd() of a PD still in use is EBUSY;
 * - a shared receive queue (ibv_create_srq) keeps its posted receives as a pool of at most
 *   max_wr (ENOMEM beyond, as providers do); a QP made with it has no receive queue (posting
 *   to the QP is EINVAL, as rxe does); fake_srq_deliver() plays an incoming message on such a
 *   QP, so tests see where the completion lands; ibv_destroy_srq() of an SRQ a QP still uses
 *   is EBUSY, as the kernel says; max_wr 0 or above FAKE_MAX_SRQ_WR is EINVAL;
 * - a QP has a state: INIT when made, RTS once rdma_accept() succeeds (librdmacm takes it
 *   through RTR to RTS there, with the kernel CM's min_rnr_timer 0); ibv_modify_qp() knows
 *   IBV_QP_STATE and IBV_QP_MIN_RNR_TIMER, and refuses with EINVAL a min_rnr_timer in a
 *   transition where verbs do not allow it (it is allowed in INIT->RTR, RTR->RTS, RTS->RTS,
 *   SQD->SQD, SQD->RTS, SQE->RTS; without IBV_QP_STATE the transition is from the current
 *   state to itself); a state change alone is taken as asked, any other attribute is a
 *   violation (not modelled).
 *
 * Failure injection: fake_fail(fn, nth, err) makes the nth call of fn from now fail, with err
 * as errno (functions returning -1 or NULL) or as the return value (functions returning an
 * errno value: ibv_dealloc_pd, ibv_dereg_mr, ibv_destroy_cq, ibv_destroy_comp_channel,
 * ibv_req_notify_cq, ibv_post_send, ibv_post_recv, ibv_modify_qp, ibv_destroy_srq,
 * ibv_post_srq_recv; and ibv_poll_cq, which returns err as is;
 * and rdma_getaddrinfo, which returns err as is and sets errno to ENODEV when err is -1).
 * A failed destroy leaves its object alive, as a real one would; fake_free_all() releases
 * such leftovers once the test has counted them.
 */
#ifndef FAKE_RDMA_H
#define FAKE_RDMA_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

enum fake_fn {
	FAKE_IBV_ALLOC_PD,
	FAKE_IBV_DEALLOC_PD,
	FAKE_IBV_REG_MR,
	FAKE_IBV_DEREG_MR,
	FAKE_IBV_CREATE_COMP_CHANNEL,
	FAKE_IBV_DESTROY_COMP_CHANNEL,
	FAKE_IBV_CREATE_CQ,
	FAKE_IBV_DESTROY_CQ,
	FAKE_IBV_REQ_NOTIFY_CQ,
	FAKE_IBV_GET_CQ_EVENT,
	FAKE_IBV_ACK_CQ_EVENTS,
	FAKE_IBV_POLL_CQ,
	FAKE_IBV_POST_SEND,
	FAKE_IBV_POST_RECV,
	FAKE_IBV_MODIFY_QP,
	FAKE_IBV_CREATE_SRQ,
	FAKE_IBV_DESTROY_SRQ,
	FAKE_IBV_POST_SRQ_RECV,
	FAKE_RDMA_GETADDRINFO,
	FAKE_RDMA_FREEADDRINFO,
	FAKE_RDMA_CREATE_EVENT_CHANNEL,
	FAKE_RDMA_DESTROY_EVENT_CHANNEL,
	FAKE_RDMA_CREATE_ID,
	FAKE_RDMA_DESTROY_ID,
	FAKE_RDMA_BIND_ADDR,
	FAKE_RDMA_RESOLVE_ADDR,
	FAKE_RDMA_RESOLVE_ROUTE,
	FAKE_RDMA_LISTEN,
	FAKE_RDMA_GET_CM_EVENT,
	FAKE_RDMA_ACK_CM_EVENT,
	FAKE_RDMA_CREATE_QP,
	FAKE_RDMA_DESTROY_QP,
	FAKE_RDMA_MIGRATE_ID,
	FAKE_RDMA_CONNECT,
	FAKE_RDMA_ACCEPT,
	FAKE_RDMA_REJECT,
	FAKE_RDMA_DISCONNECT,
	FAKE_FN_COUNT
};

enum fake_obj_type {
	FAKE_PD,
	FAKE_MR,
	FAKE_COMP_CHANNEL,
	FAKE_CQ,
	FAKE_QP,
	FAKE_EVENT_CHANNEL, /* created by rdma_create_event_channel() */
	FAKE_CM_ID,
	FAKE_ADDRINFO,
	FAKE_CM_EVENT, /* handed out by rdma_get_cm_event() and not acknowledged yet */
	FAKE_SRQ,
	FAKE_OBJ_TYPE_COUNT
};

/* the largest SRQ the fake device makes (its max_srq_wr) */
#define FAKE_MAX_SRQ_WR 1024

/* the private data limits of InfiniBand/RoCE the kernel enforces */
#define FAKE_CONNECT_PDATA_MAX 56
#define FAKE_ACCEPT_PDATA_MAX 196

/* what the fake remembers about one posted send work request */
struct fake_send_wr {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;
	int num_sge;
	bool sg_list_null;
	struct ibv_sge sge; /* the first SGE, when num_sge > 0 */
	uint32_t imm_data;  /* as posted (network order for *_WITH_IMM) */
	uint64_t remote_addr;
	uint32_t rkey;
};

/* ... and about one posted receive */
struct fake_recv_wr {
	uint64_t wr_id;
	int num_sge;
	bool sg_list_null;
	struct ibv_sge sge;
};

/* fake_reset -- free everything, clear counters, records, injected failures, violations */
void fake_reset(void);

/* the fake device context; rpma_peer_new(fake_ibv_context(), ...) starts every test */
struct ibv_context *fake_ibv_context(void);

/* the transport the fake device reports (IBV_TRANSPORT_IB by default) */
void fake_set_transport(enum ibv_transport_type transport);

/* failure injection and call counts */
void fake_fail(enum fake_fn fn, unsigned int nth, int err);
unsigned int fake_calls(enum fake_fn fn);

/*
 * fake_fail_send_chain -- the next ibv_post_send() takes the requests before
 * index, then fails with err with *bad_wr at index (as a full send queue
 * does); off after it fired or fake_reset()
 */
void fake_fail_send_chain(unsigned int index, int err);

/* fake_live -- objects of a type alive now; fake_live_total -- all types together */
int fake_live(enum fake_obj_type type);
int fake_live_total(void);

/* fake_free_all -- release every live object (after a test counted deliberate leftovers) */
void fake_free_all(void);

/* violations of the verbs/CM rules seen since fake_reset(); the last one's text */
int fake_violations(void);
const char *fake_last_violation(void);

/* lookup of live objects by what the library exposes */
struct ibv_qp *fake_qp_by_num(uint32_t qp_num);
struct ibv_cq *fake_cq_by_channel_fd(int fd, int nth); /* nth CQ (0-based) on that channel */
struct ibv_qp_init_attr fake_qp_attr(const struct ibv_qp *qp); /* as the library asked */
/* the QP's min_rnr_timer now (0, the kernel CM's value, until the library changes it) */
uint8_t fake_qp_min_rnr_timer(const struct ibv_qp *qp);

/* the last ibv_modify_qp() call, failed ones included */
struct fake_modify_qp {
	uint32_t qp_num;
	struct ibv_qp_attr attr;
	int attr_mask;
};
struct fake_modify_qp fake_last_modify_qp(void);

/* completions: add one to cq (raising an event when armed); whether cq is armed */
void fake_cq_push_wc(struct ibv_cq *cq, const struct ibv_wc *wc);
bool fake_cq_armed(const struct ibv_cq *cq);
/* raise an event on a completion channel for cq without a completion (a spurious wake-up) */
void fake_channel_raise(struct ibv_comp_channel *channel, struct ibv_cq *cq);
/* events handed out and acknowledged for cq */
unsigned int fake_cq_events_got(const struct ibv_cq *cq);
unsigned int fake_cq_events_acked(const struct ibv_cq *cq);

/* posted work requests of a QP, oldest first */
unsigned int fake_send_count(const struct ibv_qp *qp);
struct fake_send_wr fake_send_get(const struct ibv_qp *qp, unsigned int i);
unsigned int fake_recv_count(const struct ibv_qp *qp);
struct fake_recv_wr fake_recv_get(const struct ibv_qp *qp, unsigned int i);

/*
 * shared receive queues: the nth live SRQ (0-based, creation order), what the library asked
 * ibv_create_srq() for, and the receives posted and not consumed yet, oldest first
 */
struct ibv_srq *fake_srq_nth(int nth);
struct ibv_srq_init_attr fake_srq_attr(const struct ibv_srq *srq);
unsigned int fake_srq_recv_count(const struct ibv_srq *srq);
struct fake_recv_wr fake_srq_recv_get(const struct ibv_srq *srq, unsigned int i);
/*
 * fake_srq_deliver -- a message of byte_len bytes arrives on qp, which is attached to an SRQ:
 * the oldest posted receive of the SRQ is consumed and its completion (IBV_WC_RECV, its wr_id,
 * qp's number, byte_len, IBV_WC_WITH_IMM and imm_data when with_imm) goes to qp's receive CQ,
 * as a provider does. A message longer than the receive's SGE completes with
 * IBV_WC_LOC_LEN_ERR. Returns false, consuming nothing, when no receive is posted (the sender
 * would get "receiver not ready" and retry).
 */
bool fake_srq_deliver(struct ibv_qp *qp, uint32_t byte_len, bool with_imm, uint32_t imm_data);

/*
 * CM events: push an event of type for id on the channel whose fd is evch_fd (private data
 * copied); push a connection request to the listening endpoint whose fd is ep_fd, for a new CM
 * ID that is returned. A request pushed by fake_cm_push_connect_request() has no peer address
 * (rdma_get_peer_addr() gives no address family); _from() gives it a copy of peer (AF_INET, AF_INET6,
 * or for any other family sizeof(struct sockaddr) bytes).
 */
void fake_cm_push_event(int evch_fd, struct rdma_cm_id *id, enum rdma_cm_event_type type,
	int status, const void *pdata, uint8_t pdata_len);
struct rdma_cm_id *fake_cm_push_connect_request(int ep_fd, const void *pdata, uint8_t pdata_len);
struct rdma_cm_id *fake_cm_push_connect_request_from(
	int ep_fd, const struct sockaddr *peer, const void *pdata, uint8_t pdata_len);
/*
 * fake_cm_auto_answer -- from now on, every successful rdma_connect() pushes an event of type
 * (RDMA_CM_EVENT_ESTABLISHED, _REJECTED, ...) with a copy of pdata on the connecting ID's
 * channel, as the remote side would answer (for code that connects in a thread of its own).
 * Off after fake_reset().
 */
void fake_cm_auto_answer(bool on, enum rdma_cm_event_type type, const void *pdata, uint8_t len);
/*
 * fake_cm_auto_answer_status -- the status those answers carry (struct rdma_cm_event's: for a
 * REJECTED the IB CM reject reason, 28 for the listener's rdma_reject(), 8 for nobody
 * listening); 0 until set, and after fake_reset()
 */
void fake_cm_auto_answer_status(int status);
/*
 * fake_cm_auto_answer_fn -- while auto answers are on, the answer's private data is made by fn
 * from the request's (a handshake whose answer depends on the request: version 3's nonces):
 * fn writes at most FAKE_CONNECT_PDATA_MAX bytes at out and returns their length. NULL: the
 * fixed pdata of fake_cm_auto_answer(). Off after fake_reset().
 */
typedef uint8_t (*fake_answer_fn)(const void *req, uint8_t req_len, uint8_t *out);
void fake_cm_auto_answer_fn(fake_answer_fn fn);

/* the CM ID whose events arrive on evch_fd (the first one, in creation order) */
struct rdma_cm_id *fake_cm_id_by_channel_fd(int evch_fd);

/* what the library passed */
struct fake_conn_param {
	struct rdma_conn_param param;
	uint8_t pdata[256];
};
struct fake_conn_param fake_last_connect(void); /* rdma_connect() */
struct fake_conn_param fake_last_accept(void);	/* rdma_accept() */
int fake_last_resolve_addr_timeout(void);
int fake_last_resolve_route_timeout(void);
int fake_last_cqe(void); /* ibv_create_cq() */
int fake_last_reg_mr_access(void);
struct rdma_addrinfo fake_last_hints(void);
const char *fake_last_node(void);
const char *fake_last_service(void); /* "" for NULL */
enum rdma_port_space fake_last_port_space(void);
int fake_last_listen_backlog(void);

#endif /* FAKE_RDMA_H */
