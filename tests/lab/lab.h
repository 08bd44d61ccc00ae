/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lab.h -- what the lab tests share
 *
 * The lab tests run inside tools/rdma-lab, where two Soft-RoCE devices are
 * linked by a veth pair: LAB_A (device LAB_DEV_A) <-> LAB_B (LAB_DEV_B).
 * A test forks: the child is the receiver, listening on LAB_B, and the
 * parent the sender, connecting to LAB_B from LAB_DEV_A. Every wait has a
 * deadline, so a test fails instead of hanging; any failed check prints
 * where and why, kills the other side and exits 1.
 *
 * Written against librpma's messaging API only: the same source builds
 * with the project's rpma/ and with Debian's librpma.
 */
#ifndef LAB_H
#define LAB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <librpma.h>

/* the lab's addresses and devices, from the environment */
struct lab_env {
	const char *a, *b;	   /* LAB_A, LAB_B */
	const char *dev_a, *dev_b; /* LAB_DEV_A, LAB_DEV_B */
};

/*
 * lab_env_get -- read the lab's environment; outside the lab (LAB_A unset)
 * say how to run the test and exit 77, meson's "skipped"
 */
void lab_env_get(struct lab_env *env);

/* monotonic time in seconds */
double lab_now(void);

/* lab_fail -- print "file:line: [check failed: cond: ]message", kill the child, exit 1 */
__attribute__((noreturn, format(printf, 4, 5))) void lab_fail(
	const char *file, int line, const char *cond, const char *fmt, ...);

/* CHECK(cond, fmt, ...) -- fail the test, saying why, unless cond holds */
#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond))                                              \
			lab_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

/* CHECK_RPMA(expr) -- expr is an rpma call that must return 0 */
#define CHECK_RPMA(expr)                                                                           \
	do {                                                                                       \
		int lab_ret_ = (expr);                                                             \
		if (lab_ret_)                                                                      \
			lab_fail(__FILE__, __LINE__, NULL, "%s returned %d (%s)", #expr, lab_ret_, \
				rpma_err_2str(lab_ret_));                                          \
	} while (0)

/*
 * lab_peer_new -- a peer on the device that owns addr (LOCAL) or that
 * reaches it (REMOTE); when dev is not NULL, check that it is that device
 */
struct rpma_peer *lab_peer_new(
	const char *addr, enum rpma_util_ibv_context_type type, const char *dev);

/* lab_mr_new -- allocate size bytes (page aligned, filled with fill) and register them */
struct rpma_mr_local *lab_mr_new(
	struct rpma_peer *peer, size_t size, int usage, int fill, uint8_t **ptr);

/* lab_listen -- an endpoint on addr:port */
struct rpma_ep *lab_listen(struct rpma_peer *peer, const char *addr, const char *port);

/* lab_next_req -- the next connection request on ep, failing after timeout_ms */
struct rpma_conn_req *lab_next_req(
	struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, int timeout_ms);

/* lab_connect -- connect to addr:port and wait for RPMA_CONN_ESTABLISHED */
struct rpma_conn *lab_connect(struct rpma_peer *peer, const char *addr, const char *port,
	const struct rpma_conn_cfg *cfg);

/* lab_accept -- accept req (receives already posted on it) and wait for ESTABLISHED */
struct rpma_conn *lab_accept(struct rpma_conn_req **req);

/*
 * How long a wait for an event (a connection event, a completion, a
 * child's exit) may take before the test gives up: a safety net that turns
 * a hang into a failure with a message, never a measure -- each wait ends
 * as soon as its event is there (milliseconds; seconds on a TCG guest
 * while two other lab VMs load the 2-core host). The meson timeout of
 * every lab test is above it.
 */
#define LAB_SAFETY_MS 300000

/*
 * lab_next_event -- the next connection event, waiting up to timeout_ms;
 * returns 0, or RPMA_E_NO_EVENT when the time is up
 */
int lab_next_event(struct rpma_conn *conn, enum rpma_conn_event *event, int timeout_ms);

/* lab_expect_event -- the next event must be `expected`, within timeout_ms */
void lab_expect_event(struct rpma_conn *conn, enum rpma_conn_event expected, int timeout_ms);

/*
 * lab_next_wc -- the next completion of the connection's main CQ, waiting
 * up to timeout_ms; returns 0, or RPMA_E_NO_COMPLETION when the time is up
 */
int lab_next_wc(struct rpma_conn *conn, struct ibv_wc *wc, int timeout_ms);

/* lab_expect_wc -- the next completion: must come within timeout_ms with this status */
void lab_expect_wc(
	struct rpma_conn *conn, struct ibv_wc *wc, enum ibv_wc_status status, int timeout_ms);

/*
 * lab_expect_no_more_wc -- every request posted so far has given all the
 * completions it will: post a signaled 0-byte RDMA WRITE (it needs neither
 * a receive nor remote memory) and check that the next completion is its
 * own. A send queue completes in order, so any completion an earlier
 * request gave would come first: an event to wait for, where waiting some
 * milliseconds for nothing would be a guess. what names the check.
 */
void lab_expect_no_more_wc(struct rpma_conn *conn, const char *what);

/* lab_close -- disconnect (active side), wait for RPMA_CONN_CLOSED, delete */
void lab_close(struct rpma_conn **conn);

/* lab_closed -- wait for the other side to disconnect (RPMA_CONN_CLOSED), delete */
void lab_closed(struct rpma_conn **conn, int timeout_ms);

/* the bytes of message `seed`: a pattern that shifts with the offset and the seed */
void lab_fill(uint8_t *buf, size_t len, unsigned seed);

/* lab_verify -- compare buf with lab_fill's pattern; fails the test at the first difference */
void lab_verify(const uint8_t *buf, size_t len, unsigned seed, const char *what);

/*
 * lab_fork -- run fn(arg) in a child process and return its pid once the
 * child has called lab_ready() (e.g. after listening); the child exits with
 * 0 when fn returns. Fork before creating any RDMA resource.
 */
pid_t lab_fork(void (*fn)(void *arg), void *arg);

/* lab_ready -- in the child: tell the parent to go on */
void lab_ready(void);

/* lab_reap -- wait for the child; it must exit with status 0 within timeout_ms */
void lab_reap(pid_t pid, int timeout_ms);

/*
 * The messages peer-send sends and peer-recv expects, in this order:
 * lab_seq_size[i] bytes of lab_fill(..., i); a size of 0 is sent as
 * NULL/0/0 when i is even, as offset 0, length 0 of a region when odd.
 */
#define LAB_SEQ_N 8
#define LAB_SEQ_MAX (1 << 20)
extern const size_t lab_seq_size[LAB_SEQ_N];

/* lab_wc_str -- "IBV_WC_RECV status success, wr_id 0x.., byte_len ..", for messages */
const char *lab_wc_str(const struct ibv_wc *wc);

#endif /* LAB_H */
