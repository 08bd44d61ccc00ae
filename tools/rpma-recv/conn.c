// SPDX-License-Identifier: BSD-3-Clause
/* conn.c -- one connection: judge, accept, receive, write out, close */

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef RPMA_HAVE_EXT
#include <librpma_ext.h>
#endif

/*
 * The provider (the kernel, for rxe) writes received messages into our
 * buffers behind valgrind's back; say that those bytes are now defined.
 * A no-op outside valgrind, and nothing at all without its header.
 */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define RECEIVED(addr, len) VALGRIND_MAKE_MEM_DEFINED(addr, len)
#endif
#endif
#ifndef RECEIVED
#define RECEIVED(addr, len) ((void)(addr), (void)(len))
#endif

#include "ack.h"
#include "confirm.h"
#include "conn.h"
#include "fd.h"
#include "log.h"
#include "pdata.h"

#define WC_BATCH RECV_BATCH_MAX /* a poll brings at most one batch */
/*
 * After a connection is put in the error state, how long its completion
 * queue must stay quiet before it is taken to hold everything that arrived
 * (SETTLE_QUIET_MS), and how long that may take at most (SETTLE_MAX_MS).
 */
#define SETTLE_QUIET_MS 50
#define SETTLE_MAX_MS 1000
#define SETTLE_POLL_MS 10 /* how often a settling connection is looked at */
/*
 * At an orderly stop, how long a connection waits for the send completion
 * of its last acknowledgement before its disconnect (LAST_ACK_MAX_MS; a
 * send still queued when the QP goes to the error state is flushed, not
 * sent), and how often it is looked at meanwhile (LAST_ACK_POLL_MS).
 */
#define LAST_ACK_MAX_MS 1000
#define LAST_ACK_POLL_MS 1

enum conn_state {
	CONN_ACCEPTED, /* accepted, RPMA_CONN_ESTABLISHED not seen yet */
	CONN_ESTABLISHED,
	CONN_LAST_ACK, /* stopping: its last acknowledgement is on its way, then close */
	CONN_CLOSING,  /* we disconnected, RPMA_CONN_CLOSED not seen yet */
	CONN_SETTLING, /* stopped (QP in the error state): waiting for its last completions */
	CONN_DEAD,     /* deleted; freed by recv_conn_reap() */
};

struct recv_conn {
	struct recv_server *srv;
	struct recv_conn *prev, *next; /* in srv->conns, or next in srv->dead */
	unsigned long id;
	char peer[INET6_ADDRSTRLEN + 32]; /* "from ADDR:PORT" for log lines */
	char kind[64];			  /* what its private data said */

	struct rpma_conn *conn;
	uint32_t qp_num;
	bool in_map;	    /* in srv->qps */
	struct rpma_cq *cq; /* --no-srq: its receives complete here */
	struct rpma_mr_local *mr;
	uint8_t *buf;
	size_t buf_size;
	uint32_t slot_size;
	uint32_t slots;
	int event_fd;
	int cq_fd;
	struct recv_watch event_watch;
	struct recv_watch cq_watch;

	enum conn_state state;
	bool discard; /* its output failed: later messages are dropped */
	bool pending; /* completions are left for the next turn */
	char close_why[96];
	int64_t settle_start, quiet_since; /* CONN_SETTLING: since when, quiet since when */
	int64_t last_ack_by;		   /* CONN_LAST_ACK: closed then at the latest */
	uint64_t seen;			   /* messages + dropped when last looked at */

	uint64_t messages, bytes, dropped;

	struct recv_confirm *confirm; /* the sender takes acknowledgements (confirm.h) */
	bool owed;		      /* in srv->owed: an acknowledgement may be due */
	struct recv_conn *owed_next;
};

static void describe_peer(const struct sockaddr_storage *ss, char *text, size_t size)
{
	char addr[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr));
		snprintf(text, size, "from %s:%u", addr, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr));
		snprintf(text, size, "from [%s]:%u", addr, ntohs(in6->sin6_port));
	} else {
		snprintf(text, size, "from an address of family %d", ss->ss_family);
	}
}

/* peer_address -- the peer's address when this build's librpma can tell it */
static bool peer_address(
	struct rpma_conn_req *req, struct sockaddr_storage *ss, char *text, size_t size)
{
#ifdef RPMA_HAVE_EXT
	if (rpma_conn_req_get_peer_addr(req, ss) == 0) {
		describe_peer(ss, text, size);
		return true;
	}
#else
	(void)req;
	(void)ss;
	(void)describe_peer;
#endif
	snprintf(text, size, "(peer address unknown)");
	return false;
}

static void reject(struct recv_server *srv, struct rpma_conn_req **req, const char *peer,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void reject(
	struct recv_server *srv, struct rpma_conn_req **req, const char *peer, const char *fmt, ...)
{
	char why[256];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);

	ret = rpma_conn_req_delete(req);
	srv->rejected++;
	recv_log(RECV_LOG_REJECT, "rejected connection %s: %s", peer, why);
	if (ret)
		recv_log(RECV_LOG_ERROR, "rejecting connection %s failed: %s", peer,
			rpma_err_2str(ret));
}

static void hex_prefix(const void *data, size_t len, char *text, size_t size)
{
	const uint8_t *p = data;
	size_t used = 0;

	text[0] = '\0';
	for (size_t i = 0; i < len && i < 16 && used + 4 < size; i++)
		used += (size_t)snprintf(text + used, size - used, "%s%02x", i ? " " : "", p[i]);
}

/* the receive buffers: one registered region of slots x slot_size bytes */
static int setup_buffers(struct recv_conn *c, const char *peer)
{
	struct recv_server *srv = c->srv;
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	int ret;

	c->slot_size = srv->opts->max_message;
	c->slots = srv->opts->slots;
	c->buf_size = (size_t)c->slot_size * c->slots;
	if (posix_memalign((void **)&c->buf, page > 0 ? (size_t)page : 4096, c->buf_size)) {
		c->buf = NULL;
		recv_log(RECV_LOG_ERROR,
			"connection %s: cannot allocate %zu bytes of receive buffers", peer,
			c->buf_size);
		return -1;
	}
	ret = rpma_mr_reg(srv->peer, c->buf, c->buf_size, RPMA_MR_USAGE_RECV, &c->mr);
	if (!ret)
		return 0;

	/* the usual reason, worth spelling out with the figures */
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		srv->locked + c->buf_size > rl.rlim_cur) {
		recv_log(RECV_LOG_ERROR,
			"connection %s: cannot register %zu bytes of receive buffers (%u slots of "
			"%u bytes): %zu bytes are registered already and RLIMIT_MEMLOCK is %llu "
			"bytes; raise it (ulimit -l, LimitMEMLOCK= in a systemd unit) or lower "
			"--slots or --max-message",
			peer, c->buf_size, c->slots, c->slot_size, srv->locked,
			(unsigned long long)rl.rlim_cur);
	} else {
		recv_log(RECV_LOG_ERROR,
			"connection %s: cannot register %zu bytes of receive buffers: %s", peer,
			c->buf_size, rpma_err_2str(ret));
	}
	return -1;
}

static void free_buffers(struct recv_conn *c)
{
	if (c->mr) {
		int ret = rpma_mr_dereg(&c->mr);

		if (ret)
			recv_log(RECV_LOG_ERROR, "connection %lu: deregistering its buffers: %s",
				c->id, rpma_err_2str(ret));
	}
	free(c->buf);
	c->buf = NULL;
}

static int watch_fds(struct recv_conn *c)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int ret;

	ret = rpma_conn_get_event_fd(c->conn, &c->event_fd);
	if (!ret)
		ret = rpma_conn_get_qp_num(c->conn, &c->qp_num);
	/* with the SRQ its receives complete on the SRQ's CQ, and it sends nothing */
	if (!ret && !c->srv->srq)
		ret = rpma_conn_get_cq(c->conn, &c->cq);
	if (!ret && !c->srv->srq)
		ret = rpma_cq_get_fd(c->cq, &c->cq_fd);
	if (ret) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: cannot get its file descriptors: %s",
			c->id, c->peer, rpma_err_2str(ret));
		return -1;
	}
	if (fd_set_nonblock(c->event_fd) || (c->cq_fd >= 0 && fd_set_nonblock(c->cq_fd))) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: fcntl: %s", c->id, c->peer,
			strerror(errno));
		return -1;
	}

	c->event_watch = (struct recv_watch){RECV_WATCH_CONN_EVENT, c};
	c->cq_watch = (struct recv_watch){RECV_WATCH_CONN_CQ, c};
	ev.data.ptr = &c->event_watch;
	if (epoll_ctl(c->srv->epfd, EPOLL_CTL_ADD, c->event_fd, &ev))
		goto err;
	if (c->cq_fd < 0)
		return 0;
	ev.data.ptr = &c->cq_watch;
	if (epoll_ctl(c->srv->epfd, EPOLL_CTL_ADD, c->cq_fd, &ev)) {
		(void)epoll_ctl(c->srv->epfd, EPOLL_CTL_DEL, c->event_fd, NULL);
		goto err;
	}
	return 0;
err:
	recv_log(RECV_LOG_ERROR, "connection %lu %s: epoll_ctl: %s", c->id, c->peer,
		strerror(errno));
	return -1;
}

static void link_conn(struct recv_conn *c)
{
	struct recv_server *srv = c->srv;

	c->prev = NULL;
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
}

static void unlink_conn(struct recv_conn *c)
{
	struct recv_server *srv = c->srv;

	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = NULL;
	c->next = NULL;
}

/*
 * post_own_receives -- --no-srq: the connection's own buffers, every slot
 * posted before the accept (an eager sender never meets RNR); on failure
 * the request is rejected and c freed
 */
static int post_own_receives(struct recv_conn *c, struct rpma_conn_req **req, const char *peer)
{
	struct recv_server *srv = c->srv;
	int ret;

	if (setup_buffers(c, peer)) {
		free_buffers(c);
		free(c);
		reject(srv, req, peer, "no receive buffers (see above)");
		return -1;
	}
	for (uint32_t i = 0; i < c->slots; i++) {
		ret = rpma_conn_req_recv(*req, c->mr, (size_t)i * c->slot_size, c->slot_size,
			(const void *)(uintptr_t)i);
		if (ret) {
			free_buffers(c);
			free(c);
			reject(srv, req, peer, "posting receive %u of %u failed: %s", i + 1,
				srv->opts->slots, rpma_err_2str(ret));
			return -1;
		}
	}
	return 0;
}

/* map_conn -- with the SRQ: find the connection by its queue pair number */
static int map_conn(struct recv_conn *c)
{
	if (!c->srv->srq)
		return 0;
	if (recv_qpmap_put(c->srv->qps, c->qp_num, c)) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: out of memory", c->id, c->peer);
		return -1;
	}
	c->in_map = true;
	return 0;
}

/*
 * setup_confirm -- the sender offered receiver confirmation: take it, with
 * credits that are true. With --no-srq the connection's own slots, one kept
 * for a REQUEST. With the shared queue, a share of its receives is held for
 * this connection (returned when it ends) while the shares add up to no
 * more than the queue has; past that each connection still gets two, and
 * plain senders on the same queue are not held to any share (see
 * rpma-recv(1), FLOW CONTROL). On failure the connection goes on without.
 */
static void setup_confirm(struct recv_conn *c, const char *peer)
{
	struct recv_server *srv = c->srv;
	uint32_t slots = srv->opts->slots, share;
	int ret;

	if (srv->srq) {
		share = slots / 8;
		if (share > 64)
			share = 64;
		if (share > slots - srv->reserved)
			share = slots - srv->reserved;
		if (share < 2)
			share = 2;
	} else {
		share = slots < 2 ? 2 : slots;
	}
	ret = recv_confirm_new(srv->peer, (uint16_t)(share - 1), &c->confirm);
	if (ret) {
		recv_log(RECV_LOG_ERROR,
			"connection %s: cannot register its acknowledgement buffers (%s): it goes "
			"on without receiver confirmation",
			peer, ret < 0 ? strerror(-ret) : rpma_err_2str(ret));
		return;
	}
	if (srv->srq) {
		c->confirm->reserved = share;
		srv->reserved += share;
	}
}

static void drop_confirm(struct recv_conn *c)
{
	if (!c->confirm)
		return;
	c->srv->reserved -= c->confirm->reserved;
	c->srv->duplicates += c->confirm->duplicates;
	c->srv->acks += c->confirm->acks;
	recv_confirm_delete(&c->confirm);
}

void recv_conn_request(struct recv_server *srv, struct rpma_conn_req **req)
{
	const struct recv_options *opts = srv->opts;
	struct rpma_conn_private_data their = {NULL, 0};
	struct rpma_conn_private_data ours;
	uint8_t reply[RPMAFS_PDATA_LEN];
	struct rpmafs_pdata pd = {0};
	struct sockaddr_storage ss;
	enum rpmafs_pdata_kind kind;
	char peer[INET6_ADDRSTRLEN + 32];
	struct recv_conn *c;
	const char *why;
	bool known;
	int ret;

	known = peer_address(*req, &ss, peer, sizeof(peer));
	if (recv_allow_count(opts->allow) > 0 &&
		(!known || !recv_allow_match(opts->allow, (const struct sockaddr *)&ss))) {
		reject(srv, req, peer, "address not allowed by --allow");
		return;
	}

	if (rpma_conn_req_get_private_data(*req, &their)) {
		their.ptr = NULL;
		their.len = 0;
	}
	kind = rpmafs_pdata_parse(their.ptr, their.len, &pd, &why);
	if (kind == RPMAFS_PDATA_FOREIGN || kind == RPMAFS_PDATA_MALFORMED) {
		char hex[64];

		hex_prefix(their.ptr, their.len, hex, sizeof(hex));
		reject(srv, req, peer, "%s private data (%u bytes: %s%s): %s",
			kind == RPMAFS_PDATA_FOREIGN ? "foreign" : "malformed", (unsigned)their.len,
			hex, their.len > 16 ? " ..." : "", why);
		return;
	}

	if (srv->open >= opts->max_conns) {
		reject(srv, req, peer, "%u connections are open, the most --max-connections allows",
			srv->open);
		return;
	}

	c = calloc(1, sizeof(*c));
	if (!c) {
		reject(srv, req, peer, "out of memory");
		return;
	}
	c->srv = srv;
	c->event_fd = -1;
	c->cq_fd = -1;
	c->id = srv->accepted + 1;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	if (kind == RPMAFS_PDATA_OK && (pd.flags & RPMAFS_PDATA_F_ACK))
		setup_confirm(c, peer);
	if (kind == RPMAFS_PDATA_OK)
		snprintf(c->kind, sizeof(c->kind), "rpmafs sender, max_message %" PRIu32 "%s",
			pd.max_message, c->confirm ? ", acknowledged" : "");
	else
		snprintf(c->kind, sizeof(c->kind), "no rpmafs private data");

	if (!srv->srq && post_own_receives(c, req, peer))
		return;

	/*
	 * Credits are receives kept posted for this connection alone. With the
	 * shared queue none are: every receive may go to any connection, so
	 * the truthful figure is 0 (none promised); a sender then keeps its
	 * own window and RNR retry holds it back when the queue runs dry.
	 */
	if (c->confirm)
		/* the flag only in answer to a sender that offered it */
		rpmafs_pdata_encode(&(struct rpmafs_pdata){opts->max_message, c->confirm->credits,
					    RPMAFS_PDATA_F_ACK},
			reply);
	else
		rpmafs_pdata_encode(
			&(struct rpmafs_pdata){opts->max_message, srv->srq ? 0 : opts->slots, 0},
			reply);
	ours.ptr = reply;
	ours.len = sizeof(reply);
	ret = rpma_conn_req_connect(req, &ours, &c->conn);
	if (ret) {
		recv_log(RECV_LOG_ERROR, "accepting connection %s failed: %s", peer,
			rpma_err_2str(ret));
		free_buffers(c);
		drop_confirm(c);
		free(c);
		return;
	}
	if (watch_fds(c) || map_conn(c)) {
		(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->event_fd, NULL);
		if (c->cq_fd >= 0)
			(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->cq_fd, NULL);
		(void)rpma_conn_disconnect(c->conn);
		(void)rpma_conn_delete(&c->conn);
		free_buffers(c);
		drop_confirm(c);
		free(c);
		return;
	}

	srv->accepted++;
	srv->open++;
	srv->locked += c->buf_size;
	c->state = CONN_ACCEPTED;
	link_conn(c);
	if (srv->srq)
		recv_log(RECV_LOG_DEBUG,
			"connection %lu %s: accepting (%s); queue pair %" PRIu32
			" on the shared receive queue",
			c->id, c->peer, c->kind, c->qp_num);
	else
		recv_log(RECV_LOG_DEBUG,
			"connection %lu %s: accepting (%s); %u receives of %u bytes posted", c->id,
			c->peer, c->kind, c->slots, c->slot_size);
}

static void set_pending(struct recv_conn *c, bool pending)
{
	if (c->pending == pending)
		return;
	c->pending = pending;
	if (pending)
		c->srv->pending++;
	else
		c->srv->pending--;
}

static void drain_cq(struct recv_conn *c, unsigned budget);
static void drain_srq(struct recv_server *srv, unsigned budget);
static int send_ack(struct recv_conn *c);
static int last_acks(struct recv_server *srv);

/*
 * finish -- the connection is over: delete it and keep it for the reaper.
 * Called from the loop's top level only (never while completions are
 * being handled), so that it may drain the shared CQ: no completion of this
 * queue pair may stay there once the queue pair is gone, or its number,
 * reused by a later connection, would give that one a stranger's message.
 */
static void finish(struct recv_conn *c, const char *how)
{
	struct recv_server *srv = c->srv;
	char dropped[48] = "";
	int ret;

	if (c->state == CONN_DEAD)
		return;
	if (srv->srq)
		drain_srq(srv, 0);
	set_pending(c, false);
	if (c->state == CONN_SETTLING)
		srv->settling--;
	if (c->dropped)
		snprintf(dropped, sizeof(dropped), ", %" PRIu64 " dropped", c->dropped);
	recv_log(RECV_LOG_NOTICE, "connection %lu %s %s: %" PRIu64 " messages, %" PRIu64 " bytes%s",
		c->id, c->peer, how, c->messages, c->bytes, dropped);

	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->event_fd, NULL);
	if (c->cq_fd >= 0)
		(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->cq_fd, NULL);
	ret = rpma_conn_delete(&c->conn);
	if (ret)
		recv_log(RECV_LOG_ERROR, "connection %lu: deleting it: %s", c->id,
			rpma_err_2str(ret));
	if (c->in_map)
		recv_qpmap_remove(srv->qps, c->qp_num);
	c->in_map = false;
	free_buffers(c);
	if (c->owed) {
		struct recv_conn **pp = &srv->owed;

		while (*pp != c)
			pp = &(*pp)->owed_next;
		*pp = c->owed_next;
		c->owed = false;
	}
	drop_confirm(c);
	srv->locked -= c->buf_size;
	srv->open--;
	c->state = CONN_DEAD;

	unlink_conn(c);
	c->next = srv->dead;
	srv->dead = c;
}

int64_t recv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * start_settling -- the connection has stopped (its QP is in the error
 * state, or about to be destroyed): write out every message that arrived
 * before, then finish. A DEVICE_REMOVAL or a failed disconnect comes
 * without the CM round trip that would otherwise give rxe's responder
 * time to finish: a message it is taking in on the other CPU while the QP
 * goes to the error state still makes its completion, and its sender has
 * its acknowledgement. So the connection stays until its completions have
 * been quiet for SETTLE_QUIET_MS (at most SETTLE_MAX_MS; seen in the lab
 * without this: 2 acknowledged sync messages lost at a device removal).
 * The wait is the loop's (recv_conn_settle()), not a sleep: every other
 * connection goes on meanwhile.
 */
static void start_settling(struct recv_conn *c)
{
	struct recv_server *srv = c->srv;

	if (c->state >= CONN_SETTLING)
		return;
	c->state = CONN_SETTLING;
	srv->settling++;
	c->settle_start = recv_now_ms();
	c->quiet_since = c->settle_start;
	c->seen = c->messages + c->dropped;
	if (!srv->srq)
		drain_cq(c, 0);
}

int recv_conn_settle(struct recv_server *srv)
{
	int wait = last_acks(srv);
	struct recv_conn *c, *next;
	int64_t now;

	if (!srv->settling)
		return wait;
	/* take what has come meanwhile (the loop handles new events too) */
	if (srv->srq)
		drain_srq(srv, 0);
	now = recv_now_ms();
	for (c = srv->conns; c && srv->settling; c = next) {
		next = c->next;
		if (c->state != CONN_SETTLING)
			continue;
		if (!srv->srq)
			drain_cq(c, 0);
		if (c->messages + c->dropped != c->seen) {
			c->seen = c->messages + c->dropped;
			c->quiet_since = now;
		}
		if (now - c->quiet_since >= SETTLE_QUIET_MS ||
			now - c->settle_start >= SETTLE_MAX_MS)
			finish(c, c->close_why);
	}
	if (!srv->settling)
		return wait;
	return wait >= 0 && wait < SETTLE_POLL_MS ? wait : SETTLE_POLL_MS;
}

/*
 * close_conn -- disconnect on our side; RPMA_CONN_CLOSED finishes it. why
 * ends up in the connection's last log line.
 */
static void close_conn(struct recv_conn *c, const char *why)
{
	int ret;

	if (c->state >= CONN_CLOSING)
		return;
	snprintf(c->close_why, sizeof(c->close_why), "closed (%s)", why);
	c->state = CONN_CLOSING;
	ret = rpma_conn_disconnect(c->conn);
	if (ret) {
		recv_log(RECV_LOG_DEBUG, "connection %lu: disconnect: %s", c->id,
			rpma_err_2str(ret));
		/* no CLOSED event will come: what arrived is written, then it finishes */
		start_settling(c);
	}
}

/* the peer is gone: write what it sent before going, then finish */
static void peer_gone(struct recv_conn *c, const char *how)
{
	if (c->state < CONN_CLOSING) {
		snprintf(c->close_why, sizeof(c->close_why), "%s", how);
		c->state = CONN_CLOSING;
		/* moves the QP to the error state: what is left is flushed */
		(void)rpma_conn_disconnect(c->conn);
	}
	start_settling(c);
}

static void output_failed(struct recv_conn *c, int err, uint32_t len)
{
	struct recv_server *srv = c->srv;

	c->dropped++;
	if (err == -EPIPE || err == -EBADF) {
		if (srv->stop != RECV_STOP_OUTPUT_GONE)
			recv_log(RECV_LOG_ERROR,
				"connection %lu %s: cannot write a message of %" PRIu32 " bytes to "
				"%s: %s; the output is gone, closing every connection",
				c->id, c->peer, len, recv_output_name(srv->out), strerror(-err));
		srv->stop = RECV_STOP_OUTPUT_GONE;
		return;
	}
	recv_log(RECV_LOG_ERROR,
		"connection %lu %s: cannot write a message of %" PRIu32 " bytes to %s: %s; "
		"closing the connection",
		c->id, c->peer, len, recv_output_name(srv->out), strerror(-err));
	c->discard = true;
	close_conn(c, "output error");
}

/*
 * failed_receive -- a receive completed with an error: nothing to do for a
 * flush (a disconnect; the CM event tells the story), else the connection
 * is closed
 */
static void failed_receive(struct recv_conn *c, const struct ibv_wc *wc)
{
	char why[96];

	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return;
	snprintf(why, sizeof(why), "receive failed: %s%s", ibv_wc_status_str(wc->status),
		wc->status == IBV_WC_LOC_LEN_ERR ? ", a message over --max-message?" : "");
	recv_log(RECV_LOG_ERROR, "connection %lu %s: %s", c->id, c->peer, why);
	close_conn(c, why);
}

/* owe -- an acknowledgement may be due: recv_conn_acks() looks at it */
static void owe(struct recv_conn *c)
{
	if (c->owed)
		return;
	c->owed = true;
	c->owed_next = c->srv->owed;
	c->srv->owed = c;
}

static void flush_batch(struct recv_server *srv);

/* deliver -- take one received message for the batch (or drop it) */
static void deliver(struct recv_conn *c, const struct ibv_wc *wc, const uint8_t *msg)
{
	struct recv_server *srv = c->srv;
	uint32_t len = wc->byte_len, num = 0;
	struct recv_batch *b;
	const char *why;

	RECEIVED(msg, len);
	/* --count: what the batch holds counts as written already */
	if (c->discard || c->state == CONN_LAST_ACK || srv->stop == RECV_STOP_COUNT ||
		srv->stop == RECV_STOP_OUTPUT_GONE ||
		(srv->opts->count && srv->messages + srv->batch.n >= srv->opts->count)) {
		c->dropped++;
		return;
	}
	if (c->confirm) {
		switch (recv_confirm_take(c->confirm, wc, &num, &why)) {
		case RECV_TAKE_RECORD:
			break;
		case RECV_TAKE_DUPLICATE:
			recv_log(RECV_LOG_DEBUG, "connection %lu %s: message %" PRIu32
				" again: a duplicate, dropped", c->id, c->peer,
				ntohl(wc->imm_data) & RPMAFS_SEQ_MASK);
			owe(c);
			return;
		case RECV_TAKE_REQUEST:
			owe(c);
			return;
		case RECV_TAKE_BAD:
			recv_log(RECV_LOG_ERROR, "connection %lu %s: %s", c->id, c->peer, why);
			c->discard = true;
			c->dropped++;
			close_conn(c, why);
			return;
		}
	}
	/* written out with the rest of the poll's messages (flush_batch) */
	b = &srv->batch;
	if (b->n == RECV_BATCH_MAX)
		flush_batch(srv); /* a drain nested in a close added to it */
	b->rec[b->n] = (struct recv_record){msg, len};
	b->conn[b->n] = c;
	b->num[b->n++] = num;
}

/* written: the message is counted, and acknowledgeable (after its write(2) returned) */
static void written(struct recv_conn *c, uint32_t num, uint32_t len)
{
	struct recv_server *srv = c->srv;

	if (c->confirm) {
		recv_confirm_written(c->confirm, num, recv_now_ms());
		owe(c);
	}
	c->messages++;
	c->bytes += len;
	srv->messages++;
	srv->bytes += len;
	if (srv->opts->count && srv->messages >= srv->opts->count)
		srv->stop = RECV_STOP_COUNT;
}

/* post a slot's receive again once its message is written out (flush_batch) */
static void repost_later(struct recv_server *srv, struct recv_conn *c, uint32_t slot)
{
	struct recv_batch *b = &srv->batch;

	if (b->nslots == RECV_BATCH_MAX)
		flush_batch(srv);
	b->slot_conn[b->nslots] = c;
	b->slot[b->nslots++] = slot;
}

static int post_own_slots(struct recv_conn *c, const uint32_t *slots, unsigned n)
{
#ifdef RPMA_HAVE_EXT
	struct rpma_recv_desc d[RECV_BATCH_MAX];

	for (unsigned i = 0; i < n; i++)
		d[i] = (struct rpma_recv_desc){c->mr, (size_t)slots[i] * c->slot_size, c->slot_size,
			(const void *)(uintptr_t)slots[i]};
	return rpma_recv_batch(c->conn, d, n, NULL);
#else
	for (unsigned i = 0; i < n; i++) {
		int ret = rpma_recv(c->conn, c->mr, (size_t)slots[i] * c->slot_size, c->slot_size,
			(const void *)(uintptr_t)slots[i]);

		if (ret)
			return ret;
	}
	return 0;
#endif
}

/* the receives of the batch go again: one chain for the SRQ, one per connection */
static void repost_batch(struct recv_server *srv, const struct recv_batch *b)
{
	unsigned i = 0, k;
	uint32_t failed;
	int ret;

	while (i < b->nslots) {
		struct recv_conn *c = b->slot_conn[i];

		for (k = i + 1; k < b->nslots && b->slot_conn[k] == c; k++)
			;
		if (!c) {
			ret = recv_srq_post_slots(srv->srq, b->slot + i, k - i, &failed);
			if (ret)
				recv_log(RECV_LOG_ERROR,
					"shared receive queue: posting receive %" PRIu32
					" again failed: %s; %u of %u receives left posted",
					failed, rpma_err_2str(ret), srv->srq->posted,
					srv->srq->slots);
		} else if (c->state < CONN_CLOSING) {
			/* unless we are closing */
			ret = post_own_slots(c, b->slot + i, k - i);
			if (ret) {
				recv_log(RECV_LOG_ERROR,
					"connection %lu %s: posting a receive failed: %s", c->id,
					c->peer, rpma_err_2str(ret));
				close_conn(c, "receive not posted");
			}
		}
		i = k;
	}
}

/*
 * flush_batch -- write out what the poll brought, in arrival order, with
 * one recv_output_write_batch (one writev for raw and len); a record that
 * fails is the error of its connection (output_failed), and what comes after
 * it goes on as it would have one by one. Then the slots are posted again.
 */
static void flush_batch(struct recv_server *srv)
{
	/*
	 * Taken out first: a failure may close a connection, and a close may
	 * drain its CQ (start_settling), which fills and flushes a new batch.
	 */
	struct recv_batch taken = srv->batch, *b = &taken;
	size_t i = 0, done;
	int ret;

	srv->batch.n = 0;
	srv->batch.nslots = 0;

	while (i < b->n) {
		struct recv_conn *c = b->conn[i];

		if (c->discard || srv->stop == RECV_STOP_OUTPUT_GONE) {
			c->dropped++; /* an earlier record of the batch failed */
			i++;
			continue;
		}
		done = 0;
		ret = recv_output_write_batch(srv->out, b->rec + i, b->n - i, &done);
		for (size_t k = i; k < i + done; k++)
			written(b->conn[k], b->num[k], (uint32_t)b->rec[k].len);
		i += done;
		if (ret) {
			output_failed(b->conn[i], ret, (uint32_t)b->rec[i].len);
			i++;
		}
	}
	repost_batch(srv, b);
}

/* on_completion -- --no-srq: a completion of the connection's own receives */
static void on_completion(struct recv_conn *c, const struct ibv_wc *wc)
{
	uint64_t slot = wc->wr_id;
	const char *why;
	size_t offset;

	if ((slot & RECV_ACK_TAG) && c->confirm) {
		/* an acknowledgement went out (or failed to) */
		if (recv_confirm_sent(c->confirm, wc, &why) && wc->status != IBV_WC_WR_FLUSH_ERR) {
			recv_log(RECV_LOG_ERROR, "connection %lu %s: acknowledgement failed: %s",
				c->id, c->peer, why);
			close_conn(c, "acknowledgement failed");
		}
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		failed_receive(c, wc);
		return;
	}
	if (wc->opcode != IBV_WC_RECV || slot >= c->slots || wc->byte_len > c->slot_size) {
		recv_log(RECV_LOG_ERROR,
			"connection %lu %s: unexpected completion (opcode %d, slot %" PRIu64
			", %" PRIu32 " bytes)",
			c->id, c->peer, (int)wc->opcode, slot, wc->byte_len);
		close_conn(c, "unexpected completion");
		return;
	}

	offset = (size_t)slot * c->slot_size;
	deliver(c, wc, c->buf + offset);
	/* the slot is free again once its message is written out */
	repost_later(c->srv, c, (uint32_t)slot);
}

/*
 * on_srq_completion -- a completion of the shared receive queue: written
 * out for the connection its queue pair number names, and the slot, which
 * belongs to everyone, is posted again whatever became of the connection
 */
static void on_srq_completion(struct recv_server *srv, const struct ibv_wc *wc)
{
	struct recv_srq *q = srv->srq;
	struct recv_conn *c = recv_qpmap_get(srv->qps, wc->qp_num);
	uint64_t slot = wc->wr_id;

	if (slot >= q->slots) {
		/* not one of ours: nothing to post again */
		recv_log(RECV_LOG_ERROR,
			"shared receive queue: unexpected completion (opcode %d, wr_id %" PRIu64
			", queue pair %" PRIu32 ")",
			(int)wc->opcode, slot, wc->qp_num);
		return;
	}
	q->posted--;
	if (wc->status != IBV_WC_SUCCESS) {
		if (c)
			failed_receive(c, wc);
	} else if (!c) {
		/* its connection is gone (it cannot be: finish() drains first) */
		srv->stray++;
		recv_log(RECV_LOG_DEBUG,
			"shared receive queue: a message of %" PRIu32
			" bytes for queue pair %" PRIu32 ", which is no open connection: dropped",
			wc->byte_len, wc->qp_num);
	} else if (wc->opcode != IBV_WC_RECV || wc->byte_len > q->slot_size) {
		recv_log(RECV_LOG_ERROR,
			"connection %lu %s: unexpected completion (opcode %d, %" PRIu32 " bytes)",
			c->id, c->peer, (int)wc->opcode, wc->byte_len);
		close_conn(c, "unexpected completion");
	} else {
		deliver(c, wc, recv_srq_slot(q, (uint32_t)slot));
	}

	repost_later(srv, NULL, (uint32_t)slot);
}

/*
 * take_events -- take a completion channel's events (which re-arms it, so
 * a completion arriving meanwhile raises a new one)
 */
static int take_events(struct rpma_cq *cq, int fd, char *why, size_t size)
{
	int ret;

	while (fd_readable(fd)) {
		ret = rpma_cq_wait(cq);
		if (ret == RPMA_E_NO_COMPLETION)
			break;
		if (ret) {
			snprintf(why, size, "waiting for completions: %s", rpma_err_2str(ret));
			return -1;
		}
	}
	return 0;
}

/*
 * drain_cq -- --no-srq: handle the connection's completions: all of them,
 * or at most about budget, leaving the rest pending for the next turn
 */
static void drain_cq(struct recv_conn *c, unsigned budget)
{
	struct ibv_wc wc[WC_BATCH];
	char why[96];
	unsigned done = 0;
	int n, ret;

	if (take_events(c->cq, c->cq_fd, why, sizeof(why)))
		recv_log(RECV_LOG_ERROR, "connection %lu %s: %s", c->id, c->peer, why);

	while (budget == 0 || done < budget) {
		n = 0;
		ret = rpma_cq_get_wc(c->cq, WC_BATCH, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION) {
			set_pending(c, false);
			return;
		}
		if (ret) {
			recv_log(RECV_LOG_ERROR, "connection %lu %s: polling completions: %s",
				c->id, c->peer, rpma_err_2str(ret));
			set_pending(c, false);
			close_conn(c, "completion queue error");
			return;
		}
		for (int i = 0; i < n && c->state != CONN_DEAD; i++)
			on_completion(c, &wc[i]);
		flush_batch(c->srv);
		if (c->state == CONN_DEAD)
			return;
		done += (unsigned)n;
	}
	set_pending(c, true);
}

/*
 * drain_srq -- the same for the shared receive queue's CQ, in arrival
 * order, which keeps every connection's messages in its order. Never
 * nested: a nested drain would hand out completions polled after those
 * of the outer batch still in hand.
 */
static void drain_srq(struct recv_server *srv, unsigned budget)
{
	struct recv_srq *q = srv->srq;
	struct ibv_wc wc[WC_BATCH];
	char why[96];
	unsigned done = 0;
	int n, ret;

	if (srv->draining)
		return;
	srv->draining = true;
	if (take_events(q->rcq, q->rcq_fd, why, sizeof(why)))
		recv_log(RECV_LOG_ERROR, "shared receive queue: %s", why);

	srv->srq_pending = true;
	while (budget == 0 || done < budget) {
		n = 0;
		ret = rpma_cq_get_wc(q->rcq, WC_BATCH, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION) {
			srv->srq_pending = false;
			break;
		}
		if (ret) {
			/* nothing the loop could do about it: stop, write what is there */
			recv_log(RECV_LOG_ERROR, "shared receive queue: polling completions: %s",
				rpma_err_2str(ret));
			srv->srq_pending = false;
			if (srv->stop == RECV_RUNNING)
				srv->stop = RECV_STOP_ENDPOINT;
			break;
		}
		for (int i = 0; i < n; i++)
			on_srq_completion(srv, &wc[i]);
		flush_batch(srv);
		done += (unsigned)n;
	}
	srv->draining = false;
}

static const char *event_name(enum rpma_conn_event ev)
{
	switch (ev) {
	case RPMA_CONN_ESTABLISHED:
		return "established";
	case RPMA_CONN_CLOSED:
		return "closed";
	case RPMA_CONN_LOST:
		return "lost";
	case RPMA_CONN_REJECTED:
		return "rejected";
	case RPMA_CONN_UNREACHABLE:
		return "unreachable";
	default:
		return "undefined";
	}
}

static void on_events(struct recv_conn *c)
{
	enum rpma_conn_event ev;
	char how[64];
	int ret;

	while (c->state != CONN_DEAD && fd_readable(c->event_fd)) {
		ev = RPMA_CONN_UNDEFINED;
		ret = rpma_conn_next_event(c->conn, &ev);
		if (ret == RPMA_E_NO_EVENT)
			break;
		if (ret == RPMA_E_UNKNOWN) {
			recv_log(RECV_LOG_DEBUG, "connection %lu: an unexpected CM event, ignored",
				c->id);
			continue;
		}
		if (ret) {
			snprintf(how, sizeof(how), "lost (reading its events: %s)",
				rpma_err_2str(ret));
			peer_gone(c, how);
			return;
		}
		switch (ev) {
		case RPMA_CONN_ESTABLISHED:
			if (c->state == CONN_ACCEPTED) {
				c->state = CONN_ESTABLISHED;
				recv_log(RECV_LOG_NOTICE, "connection %lu %s accepted (%s)", c->id,
					c->peer, c->kind);
			}
			break;
		case RPMA_CONN_CLOSED:
			peer_gone(c, "closed by peer");
			return;
		default:
			snprintf(how, sizeof(how), "lost (%s)", event_name(ev));
			peer_gone(c, how);
			return;
		}
	}
}

void recv_conn_handle(struct recv_server *srv, struct recv_watch *watch)
{
	struct recv_conn *c = watch->conn;

	if (watch->kind == RECV_WATCH_SRQ_CQ) {
		drain_srq(srv, srv->srq->slots + WC_BATCH);
		return;
	}
	if (c->state == CONN_DEAD)
		return; /* closed earlier in this epoll batch */
	if (watch->kind == RECV_WATCH_CONN_EVENT)
		on_events(c);
	else
		drain_cq(c, c->slots + WC_BATCH);
}

void recv_conn_run_pending(struct recv_server *srv)
{
	struct recv_conn *c = srv->conns, *next;

	if (srv->srq_pending)
		drain_srq(srv, srv->srq->slots + WC_BATCH);
	for (; c && srv->pending; c = next) {
		next = c->next;
		if (c->pending)
			drain_cq(c, c->slots + WC_BATCH);
	}
}

static const char *stop_why(const struct recv_server *srv)
{
	switch (srv->stop) {
	case RECV_STOP_COUNT:
		return "--count reached";
	case RECV_STOP_OUTPUT_GONE:
		return "output gone";
	case RECV_STOP_ENDPOINT:
		return "endpoint lost";
	default:
		return "shutting down";
	}
}

/* still_owed -- what it wrote out is not all acknowledged, or a request not answered */
static bool still_owed(const struct recv_conn *c)
{
	return c->confirm && c->state < CONN_CLOSING && recv_confirm_due(c->confirm, 0) >= 0;
}

/*
 * start_last_ack -- at an orderly stop: acknowledge everything written
 * out, and keep the connection (CONN_LAST_ACK) until no acknowledgement
 * is in flight; a disconnect now would flush a send still queued, and its
 * sender would take its messages for lost. false: nothing in flight, it
 * may be closed at once.
 */
static bool start_last_ack(struct recv_conn *c, int64_t now)
{
	c->confirm->prompt = true;
	if (recv_confirm_due(c->confirm, now) == 0 && send_ack(c) < 0)
		return true; /* closed, and logged */
	if (!c->confirm->busy)
		return false;
	c->state = CONN_LAST_ACK;
	c->last_ack_by = now + LAST_ACK_MAX_MS;
	return true;
}

/*
 * last_ack_turn -- a connection in CONN_LAST_ACK: take the completions of
 * its acknowledgements, send the last one if no buffer was free for it
 * before, and close once none is owed or in flight, or at last_ack_by (a
 * peer that does not take it: dead, or hostile); true while it waits
 */
static bool last_ack_turn(struct recv_conn *c, int64_t now)
{
	struct rpma_cq *cq;
	const char *why;

	if (!c->srv->srq) {
		drain_cq(c, 0); /* its sends complete beside its receives */
	} else if (rpma_conn_get_cq(c->conn, &cq) == 0 && recv_confirm_poll(c->confirm, cq, &why)) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: acknowledgement failed: %s", c->id,
			c->peer, why);
		close_conn(c, "acknowledgement failed");
	}
	if (c->state != CONN_LAST_ACK)
		return false;
	if (recv_confirm_due(c->confirm, now) == 0 && send_ack(c) < 0)
		return false;
	if (!c->confirm->busy && recv_confirm_due(c->confirm, now) < 0) {
		close_conn(c, stop_why(c->srv));
		return false;
	}
	if (now < c->last_ack_by)
		return true;
	recv_log(RECV_LOG_NOTICE,
		"connection %lu %s: its last acknowledgement was not confirmed in %d ms: "
		"closing it anyway (its sender will send again what it did not see acknowledged)",
		c->id, c->peer, LAST_ACK_MAX_MS);
	close_conn(c, stop_why(c->srv));
	return false;
}

/* last_acks -- every connection in CONN_LAST_ACK has its turn: all wait at once */
static int last_acks(struct recv_server *srv)
{
	struct recv_conn *c, *next;
	bool waiting = false;
	int64_t now;

	if (srv->stop == RECV_RUNNING)
		return -1;
	now = recv_now_ms();
	for (c = srv->conns; c; c = next) {
		next = c->next;
		if (c->state == CONN_LAST_ACK && last_ack_turn(c, now))
			waiting = true;
	}
	return waiting ? LAST_ACK_POLL_MS : -1;
}

void recv_conn_shutdown_all(struct recv_server *srv, bool drain)
{
	/* nothing is acknowledged once the output is gone: who knows what it took */
	bool ack = srv->stop != RECV_STOP_OUTPUT_GONE;
	const char *why = stop_why(srv);
	struct recv_conn *c, *next;
	bool owed = false;
	int64_t now;
	int ret;

	if (drain && srv->srq)
		drain_srq(srv, 0);
	for (c = srv->conns; c; c = c->next) {
		if (drain && !srv->srq)
			drain_cq(c, 0);
		owed = owed || still_owed(c);
	}
	/* with --fsync, what is acknowledged is synced first: one sync for all */
	if (ack && owed && srv->opts->fsync) {
		ret = recv_output_sync(srv->out);
		if (ret) {
			recv_log(RECV_LOG_ERROR, "cannot sync %s: %s; nothing more is acknowledged",
				recv_output_name(srv->out), strerror(-ret));
			ack = false;
		}
	}
	now = recv_now_ms();
	for (c = srv->conns; c; c = next) {
		next = c->next;
		if (ack && c->confirm && c->state < CONN_CLOSING && start_last_ack(c, now))
			continue;
		if (c->state != CONN_DEAD)
			close_conn(c, why);
	}
}

void recv_conn_drop_all(struct recv_server *srv, const char *why)
{
	while (srv->conns) {
		struct recv_conn *c = srv->conns;

		if (c->state < CONN_CLOSING)
			snprintf(c->close_why, sizeof(c->close_why), "dropped (%s)", why);
		else
			snprintf(c->close_why + strlen(c->close_why),
				sizeof(c->close_why) - strlen(c->close_why), ", %s", why);
		finish(c, c->close_why);
	}
}

void recv_conn_reap(struct recv_server *srv)
{
	while (srv->dead) {
		struct recv_conn *c = srv->dead;

		srv->dead = c->next;
		free(c);
	}
}

/*
 * send_ack -- one connection's acknowledgement; 0, or 1 when its buffers
 * are all in flight (tried again at the next look)
 */
static int send_ack(struct recv_conn *c)
{
	struct rpma_cq *cq = NULL;
	const char *why;
	int ret;

	/* with the shared queue, the connection's own CQ holds only our sends */
	if (c->srv->srq && rpma_conn_get_cq(c->conn, &cq))
		cq = NULL;
	ret = recv_confirm_send(c->confirm, c->conn, cq, &why);
	if (ret < 0) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: sending an acknowledgement: %s",
			c->id, c->peer, why);
		close_conn(c, "acknowledgement not sent");
	}
	return ret;
}

int recv_conn_acks(struct recv_server *srv)
{
	struct recv_conn **pp = &srv->owed, *c;
	int64_t now = recv_now_ms();
	bool synced = false;
	int wait = -1, due;

	while ((c = *pp)) {
		due = c->state < CONN_CLOSING ? recv_confirm_due(c->confirm, now) : -1;
		if (due == 0 && srv->opts->fsync && !synced) {
			/* one sync for every acknowledgement of this round */
			int ret = recv_output_sync(srv->out);

			if (ret) {
				recv_log(RECV_LOG_ERROR, "cannot sync %s: %s; nothing more is "
					"acknowledged", recv_output_name(srv->out), strerror(-ret));
				srv->stop = RECV_STOP_OUTPUT_GONE;
				return -1;
			}
			synced = true;
		}
		if (due == 0 && send_ack(c) == 1)
			due = 1; /* every buffer in flight: look again in a moment */
		if (due == 0)
			due = recv_confirm_due(c->confirm, now);
		if (due < 0) {
			/* nothing owed: off the list until the next record */
			*pp = c->owed_next;
			c->owed = false;
			continue;
		}
		if (wait < 0 || due < wait)
			wait = due;
		pp = &c->owed_next;
	}
	return wait;
}
