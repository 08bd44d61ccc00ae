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

#include "conn.h"
#include "fd.h"
#include "log.h"
#include "pdata.h"

#define WC_BATCH 16
/*
 * After a connection is put in the error state, how long its completion
 * queue must stay quiet before it is taken to hold everything that arrived
 * (SETTLE_QUIET_MS), and how long that may take at most (SETTLE_MAX_MS).
 */
#define SETTLE_QUIET_MS 50
#define SETTLE_MAX_MS 1000

enum conn_state {
	CONN_ACCEPTED, /* accepted, RPMA_CONN_ESTABLISHED not seen yet */
	CONN_ESTABLISHED,
	CONN_CLOSING, /* we disconnected, RPMA_CONN_CLOSED not seen yet */
	CONN_DEAD,    /* deleted; freed by recv_conn_reap() */
};

struct recv_conn {
	struct recv_server *srv;
	struct recv_conn *prev, *next; /* in srv->conns, or next in srv->dead */
	unsigned long id;
	char peer[INET6_ADDRSTRLEN + 32]; /* "from ADDR:PORT" for log lines */
	char kind[64];			  /* what its private data said */

	struct rpma_conn *conn;
	struct rpma_cq *cq;
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

	uint64_t messages, bytes, dropped;
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
		ret = rpma_conn_get_cq(c->conn, &c->cq);
	if (!ret)
		ret = rpma_cq_get_fd(c->cq, &c->cq_fd);
	if (ret) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: cannot get its file descriptors: %s",
			c->id, c->peer, rpma_err_2str(ret));
		return -1;
	}
	if (fd_set_nonblock(c->event_fd) || fd_set_nonblock(c->cq_fd)) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: fcntl: %s", c->id, c->peer,
			strerror(errno));
		return -1;
	}

	c->event_watch = (struct recv_watch){RECV_WATCH_CONN_EVENT, c};
	c->cq_watch = (struct recv_watch){RECV_WATCH_CONN_CQ, c};
	ev.data.ptr = &c->event_watch;
	if (epoll_ctl(c->srv->epfd, EPOLL_CTL_ADD, c->event_fd, &ev))
		goto err;
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
	if (kind == RPMAFS_PDATA_OK)
		snprintf(c->kind, sizeof(c->kind), "rpmafs sender, max_message %" PRIu32,
			pd.max_message);
	else
		snprintf(c->kind, sizeof(c->kind), "no rpmafs private data");

	if (setup_buffers(c, peer)) {
		free_buffers(c);
		free(c);
		reject(srv, req, peer, "no receive buffers (see above)");
		return;
	}

	/* receives go up before the accept: an eager sender never meets RNR */
	for (uint32_t i = 0; i < c->slots; i++) {
		ret = rpma_conn_req_recv(*req, c->mr, (size_t)i * c->slot_size, c->slot_size,
			(const void *)(uintptr_t)i);
		if (ret) {
			free_buffers(c);
			free(c);
			reject(srv, req, peer, "posting receive %u of %u failed: %s", i + 1,
				srv->opts->slots, rpma_err_2str(ret));
			return;
		}
	}

	rpmafs_pdata_encode(&(struct rpmafs_pdata){opts->max_message, opts->slots}, reply);
	ours.ptr = reply;
	ours.len = sizeof(reply);
	ret = rpma_conn_req_connect(req, &ours, &c->conn);
	if (ret) {
		recv_log(RECV_LOG_ERROR, "accepting connection %s failed: %s", peer,
			rpma_err_2str(ret));
		free_buffers(c);
		free(c);
		return;
	}
	if (watch_fds(c)) {
		(void)rpma_conn_disconnect(c->conn);
		(void)rpma_conn_delete(&c->conn);
		free_buffers(c);
		free(c);
		return;
	}

	srv->accepted++;
	srv->locked += c->buf_size;
	c->state = CONN_ACCEPTED;
	link_conn(c);
	recv_log(RECV_LOG_DEBUG,
		"connection %lu %s: accepting (%s); %u receives of %u bytes posted", c->id, c->peer,
		c->kind, c->slots, c->slot_size);
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

/* finish -- the connection is over: delete it and keep it for the reaper */
static void finish(struct recv_conn *c, const char *how)
{
	struct recv_server *srv = c->srv;
	char dropped[48] = "";
	int ret;

	if (c->state == CONN_DEAD)
		return;
	set_pending(c, false);
	if (c->dropped)
		snprintf(dropped, sizeof(dropped), ", %" PRIu64 " dropped", c->dropped);
	recv_log(RECV_LOG_NOTICE, "connection %lu %s %s: %" PRIu64 " messages, %" PRIu64 " bytes%s",
		c->id, c->peer, how, c->messages, c->bytes, dropped);

	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->event_fd, NULL);
	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->cq_fd, NULL);
	ret = rpma_conn_delete(&c->conn);
	if (ret)
		recv_log(RECV_LOG_ERROR, "connection %lu: deleting it: %s", c->id,
			rpma_err_2str(ret));
	free_buffers(c);
	srv->locked -= c->buf_size;
	c->state = CONN_DEAD;

	unlink_conn(c);
	c->next = srv->dead;
	srv->dead = c;
}

static void drain_cq(struct recv_conn *c, unsigned budget);
static void settle(struct recv_conn *c);

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
		/* no CLOSED event will come: what arrived is written now */
		settle(c);
		if (c->state != CONN_DEAD)
			finish(c, c->close_why);
	}
}

int64_t recv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Write out every message that arrived before the connection stopped, the
 * QP being in the error state (or about to be destroyed). A DEVICE_REMOVAL
 * or a failed disconnect comes without the CM round trip that would
 * otherwise give rxe's responder time to finish: a message it is taking in
 * on the other CPU while the QP goes to the error state still makes its
 * completion, and its sender has its acknowledgement. So the queue is
 * drained until it has been quiet for SETTLE_QUIET_MS (seen in the lab
 * without this: 2 acknowledged sync messages lost at a device removal).
 */
static void settle(struct recv_conn *c)
{
	int64_t start = recv_now_ms(), quiet_since = start;
	uint64_t seen = c->messages + c->dropped;

	drain_cq(c, 0);
	while (c->state != CONN_DEAD && recv_now_ms() - quiet_since < SETTLE_QUIET_MS &&
		recv_now_ms() - start < SETTLE_MAX_MS) {
		usleep(5000);
		drain_cq(c, 0);
		if (c->messages + c->dropped != seen) {
			seen = c->messages + c->dropped;
			quiet_since = recv_now_ms();
		}
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
	settle(c);
	if (c->state != CONN_DEAD)
		finish(c, c->close_why);
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

static void on_completion(struct recv_conn *c, const struct ibv_wc *wc)
{
	struct recv_server *srv = c->srv;
	uint64_t slot = wc->wr_id;
	size_t offset;
	int ret;

	if (wc->status != IBV_WC_SUCCESS) {
		char why[96];

		/* receives flushed by a disconnect: the CM event tells the story */
		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			return;
		snprintf(why, sizeof(why), "receive failed: %s%s", ibv_wc_status_str(wc->status),
			wc->status == IBV_WC_LOC_LEN_ERR ? ", a message over --max-message?" : "");
		recv_log(RECV_LOG_ERROR, "connection %lu %s: %s", c->id, c->peer, why);
		close_conn(c, why);
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
	RECEIVED(c->buf + offset, wc->byte_len);
	if (c->discard || srv->stop == RECV_STOP_COUNT || srv->stop == RECV_STOP_OUTPUT_GONE) {
		c->dropped++;
	} else {
		ret = recv_output_write(srv->out, c->buf + offset, wc->byte_len);
		if (ret) {
			output_failed(c, ret, wc->byte_len);
		} else {
			c->messages++;
			c->bytes += wc->byte_len;
			srv->messages++;
			srv->bytes += wc->byte_len;
			if (srv->opts->count && srv->messages >= srv->opts->count)
				srv->stop = RECV_STOP_COUNT;
		}
	}

	/* the slot is free again: post it at once, unless we are closing */
	if (c->state >= CONN_CLOSING)
		return;
	ret = rpma_recv(c->conn, c->mr, offset, c->slot_size, (const void *)(uintptr_t)slot);
	if (ret) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: posting a receive failed: %s", c->id,
			c->peer, rpma_err_2str(ret));
		close_conn(c, "receive not posted");
	}
}

/*
 * drain_cq -- take the channel's events (which re-arms it, so a completion
 * arriving meanwhile raises a new one), then handle completions: all of
 * them, or at most about budget, leaving the rest pending for the next turn
 */
static void drain_cq(struct recv_conn *c, unsigned budget)
{
	struct ibv_wc wc[WC_BATCH];
	unsigned done = 0;
	int n, ret;

	while (fd_readable(c->cq_fd)) {
		ret = rpma_cq_wait(c->cq);
		if (ret == RPMA_E_NO_COMPLETION)
			break;
		if (ret) {
			recv_log(RECV_LOG_ERROR, "connection %lu %s: waiting for completions: %s",
				c->id, c->peer, rpma_err_2str(ret));
			break;
		}
	}

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
		for (int i = 0; i < n; i++) {
			on_completion(c, &wc[i]);
			if (c->state == CONN_DEAD)
				return;
		}
		done += (unsigned)n;
	}
	set_pending(c, true);
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

void recv_conn_handle(struct recv_watch *watch)
{
	struct recv_conn *c = watch->conn;

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

	for (; c && srv->pending; c = next) {
		next = c->next;
		if (c->pending)
			drain_cq(c, c->slots + WC_BATCH);
	}
}

void recv_conn_shutdown_all(struct recv_server *srv, bool drain)
{
	const char *why = srv->stop == RECV_STOP_COUNT	       ? "--count reached"
			  : srv->stop == RECV_STOP_OUTPUT_GONE ? "output gone"
			  : srv->stop == RECV_STOP_ENDPOINT    ? "endpoint lost"
							       : "shutting down";
	struct recv_conn *c = srv->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (drain)
			drain_cq(c, 0);
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
