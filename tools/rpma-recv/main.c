// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c -- rpma-recv: receive RDMA messages and write them out
 *
 * Setup (device, endpoint, output, signals) and the one event loop that
 * serves the endpoint, every connection and the signals.
 */

#include <errno.h>
#include <limits.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <librpma.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "auth.h"
#include "confirm.h"
#include "conn.h"
#include "fd.h"
#include "log.h"
#include "options.h"
#include "output.h"
#include "promtext.h"
#include "sdnotify.h"

#define EXIT_USAGE 2
#define SHUTDOWN_WAIT_MS 3000 /* for peers to confirm the disconnect */
#define RECV_NONCES 4096      /* --keys: connect requests remembered against replays */

#ifdef RPMA_HAVE_EXT
#define HAVE_PEER_ADDR true
#else
#define HAVE_PEER_ADDR false
#endif

struct loop {
	struct recv_server srv;
	struct rpma_ep *ep;
	int sigfd;
	struct recv_watch ep_watch;
	struct recv_watch sig_watch;
	struct recv_watch srq_watch;
	bool stopping;
	int64_t deadline_ms;
	struct sdnotify_watchdog wd;	    /* WatchdogSec= in the unit: pinged from run() */
	struct promtext_file *metrics_file; /* --metrics: NULL without */
	struct promtext *metrics;
};

/*
 * check_device -- refuse settings the device cannot take now, with the
 * device's figures, rather than failing on every connection later
 */
static int check_device(struct ibv_context *dev, const struct recv_options *opts)
{
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	const char *name = ibv_get_device_name(dev->device);

	if (ibv_query_device(dev, &attr))
		return 0; /* nothing to compare with; the connections will tell */
	if (opts->srq && ((int64_t)opts->slots > attr.max_srq_wr || attr.max_srq == 0 ||
				 (int64_t)opts->slots > attr.max_cqe)) {
		fprintf(stderr,
			"rpma-recv: --slots %u is more than device %s takes in a shared receive "
			"queue (max_srq %d, max_srq_wr %d, max_cqe %d); see --no-srq\n",
			opts->slots, name, attr.max_srq, attr.max_srq_wr, attr.max_cqe);
		return -1;
	}
	if (!opts->srq &&
		((int64_t)opts->slots > attr.max_qp_wr || (int64_t)opts->slots > attr.max_cqe)) {
		fprintf(stderr,
			"rpma-recv: --slots %u is more than device %s takes (max_qp_wr %d, "
			"max_cqe %d)\n",
			opts->slots, name, attr.max_qp_wr, attr.max_cqe);
		return -1;
	}
	if (ibv_query_port(dev, 1, &port) == 0 &&
		(uint64_t)opts->max_message + (opts->keys ? RPMAFS_AUTH_TAG_BYTES : 0) >
			port.max_msg_sz) {
		fprintf(stderr,
			"rpma-recv: --max-message %u%s is more than device %s takes (max_msg_sz "
			"%u)\n",
			opts->max_message, opts->keys ? " and its tag (--keys)" : "", name,
			port.max_msg_sz);
		return -1;
	}
	return 0;
}

/*
 * raise_nofile -- a connection holds two descriptors (its CM event channel
 * and its completion channel): take the hard limit as the soft one, and
 * say when even that cannot hold --max-connections
 */
static void raise_nofile(const struct recv_options *opts)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 2 * (rlim_t)opts->max_conns + 64)
		recv_log(RECV_LOG_NOTICE,
			"the descriptor limit (RLIMIT_NOFILE, %llu) holds about %llu connections, "
			"fewer than --max-connections %u: raise it (ulimit -n, LimitNOFILE= in a "
			"systemd unit)",
			(unsigned long long)rl.rlim_cur,
			(unsigned long long)(rl.rlim_cur > 64 ? (rl.rlim_cur - 64) / 2 : 0),
			opts->max_conns);
}

static int setup_rpma(struct loop *lp, struct recv_options *opts)
{
	struct ibv_context *dev;
	int ret;

	ret = rpma_utils_get_ibv_context(opts->addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	if (ret) {
		fprintf(stderr, "rpma-recv: no RDMA device has address %s: %s\n", opts->addr,
			rpma_err_2str(ret));
		return -1;
	}
	if (check_device(dev, opts))
		return EXIT_USAGE;

	ret = rpma_peer_new(dev, &lp->srv.peer);
	if (ret) {
		fprintf(stderr, "rpma-recv: cannot use the RDMA device of %s: %s\n", opts->addr,
			rpma_err_2str(ret));
		return -1;
	}

	if (recv_rxq_new(&lp->srv, &lp->srv.rxq))
		return -1;

	ret = rpma_conn_cfg_new(&lp->srv.conn_cfg);
	if (!ret)
		ret = recv_rxq_conn_cfg(lp->srv.rxq, lp->srv.conn_cfg);
	if (ret) {
		fprintf(stderr, "rpma-recv: connection configuration: %s\n", rpma_err_2str(ret));
		return -1;
	}

	ret = rpma_ep_listen(lp->srv.peer, opts->addr, opts->port, &lp->ep);
	if (ret) {
		fprintf(stderr, "rpma-recv: cannot listen on %s port %s: %s\n", opts->addr,
			opts->port, rpma_err_2str(ret));
		return -1;
	}
	return 0;
}

static int watch(struct loop *lp, int fd, struct recv_watch *w, enum recv_watch_kind kind)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};

	w->kind = kind;
	w->conn = NULL;
	if (fd_set_nonblock(fd) || epoll_ctl(lp->srv.epfd, EPOLL_CTL_ADD, fd, &ev)) {
		fprintf(stderr, "rpma-recv: cannot watch fd %d: %s\n", fd, strerror(errno));
		return -1;
	}
	return 0;
}

static int setup_loop(struct loop *lp)
{
	sigset_t mask;
	int fd, ret;

	/* a closed pipe is an EPIPE from write(), reported per connection */
	signal(SIGPIPE, SIG_IGN);

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, NULL)) {
		fprintf(stderr, "rpma-recv: sigprocmask: %s\n", strerror(errno));
		return -1;
	}
	lp->sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	lp->srv.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (lp->sigfd < 0 || lp->srv.epfd < 0) {
		fprintf(stderr, "rpma-recv: signalfd/epoll: %s\n", strerror(errno));
		return -1;
	}
	ret = rpma_ep_get_fd(lp->ep, &fd);
	if (ret) {
		fprintf(stderr, "rpma-recv: endpoint fd: %s\n", rpma_err_2str(ret));
		return -1;
	}
	if (watch(lp, fd, &lp->ep_watch, RECV_WATCH_ENDPOINT) ||
		watch(lp, lp->sigfd, &lp->sig_watch, RECV_WATCH_SIGNAL))
		return -1;
	fd = recv_rxq_fd(lp->srv.rxq);
	if (fd >= 0 && watch(lp, fd, &lp->srq_watch, RECV_WATCH_SRQ_CQ))
		return -1;
	return 0;
}

static void on_endpoint(struct loop *lp)
{
	struct rpma_conn_req *req;
	int fd, ret;

	if (!lp->ep || rpma_ep_get_fd(lp->ep, &fd))
		return;
	while (fd_readable(fd)) {
		req = NULL;
		ret = rpma_ep_next_conn_req(lp->ep, lp->srv.conn_cfg, &req);
		if (ret == RPMA_E_NO_EVENT)
			break;
		if (ret == RPMA_E_INVAL) {
			/*
			 * An event other than a connection request: on a listening
			 * endpoint that is DEVICE_REMOVAL (or ADDR_CHANGE). The
			 * endpoint will never take a connection again, and while we
			 * hold the device, `rdma link delete` waits for us in the
			 * kernel (rxe cannot take a device from a running process).
			 * Stop: write what has arrived, let go of the device, exit 1
			 * for a supervisor to start us again.
			 */
			recv_log(RECV_LOG_ERROR,
				"the endpoint listening on %s port %s failed (its RDMA device was "
				"removed?): stopping",
				lp->srv.opts->addr, lp->srv.opts->port);
			if (lp->srv.stop == RECV_RUNNING)
				lp->srv.stop = RECV_STOP_ENDPOINT;
			break;
		}
		if (ret) {
			/* one bad request (e.g. no resources) must not stop the others */
			recv_log(RECV_LOG_ERROR, "taking a connection request failed: %s",
				rpma_err_2str(ret));
			continue;
		}
		recv_conn_request(&lp->srv, &req);
	}
}

static void on_signal(struct loop *lp)
{
	struct signalfd_siginfo si;

	while (read(lp->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (lp->stopping) {
			/* a second signal: stop waiting for peers */
			lp->deadline_ms = recv_now_ms();
			continue;
		}
		recv_log(RECV_LOG_NOTICE, "SIG%s: stopping", sigabbrev_np((int)si.ssi_signo));
		if (lp->srv.stop == RECV_RUNNING)
			lp->srv.stop = RECV_STOP_SIGNAL;
	}
}

/*
 * begin_stop -- no new connections; write out what has arrived (after a
 * signal), then disconnect everyone and wait a little for their goodbyes
 */
static void begin_stop(struct loop *lp)
{
	int fd;

	lp->stopping = true;
	lp->deadline_ms = recv_now_ms() + SHUTDOWN_WAIT_MS;
	(void)sdnotify_send("STOPPING=1");
	if (lp->ep) {
		if (rpma_ep_get_fd(lp->ep, &fd) == 0)
			(void)epoll_ctl(lp->srv.epfd, EPOLL_CTL_DEL, fd, NULL);
		(void)rpma_ep_shutdown(&lp->ep);
	}
	recv_conn_shutdown_all(
		&lp->srv, lp->srv.stop == RECV_STOP_SIGNAL || lp->srv.stop == RECV_STOP_ENDPOINT);
	recv_conn_reap(&lp->srv);
}

/* what systemctl status shows: one line */
static void summary(const struct loop *lp, char *buf, size_t size)
{
	snprintf(buf, size,
		"listening on %s port %s: %u connections, %" PRIu64 " messages, %" PRIu64
		" bytes, %lu rejected",
		lp->srv.opts->addr, lp->srv.opts->port, lp->srv.open, lp->srv.messages,
		lp->srv.bytes, lp->srv.rejected);
}

/*
 * WATCHDOG=1 from the event loop, so that a loop that is stuck gets the
 * service restarted; returns how long the loop may sleep before the next
 * one is due (-1: no watchdog)
 */
static int watchdog(struct loop *lp)
{
	uint64_t now = (uint64_t)recv_now_ms(), next;
	char status[512], state[560];

	if (sdnotify_watchdog_due(&lp->wd, now)) {
		summary(lp, status, sizeof(status));
		sdnotify_state(state, sizeof(state), "WATCHDOG=1", status);
		(void)sdnotify_send(state);
	}
	next = sdnotify_watchdog_next(&lp->wd);
	if (!next)
		return -1;
	return next - now > INT_MAX ? INT_MAX : (int)(next - now);
}

/*
 * setup_state -- exactly once (docs/design.md §8.6): the sessions table,
 * and where the output lasts, its state file: loaded, the output cut
 * back to what it says was acknowledged, then written anew (state.h).
 * --fresh: the file truncated, the state forgotten. 0, or -1 (said).
 */
static int setup_state(struct recv_server *srv, const struct recv_options *opts)
{
	struct rpmafs_sessions_limits lim = {opts->max_sessions, opts->session_ttl_ms};
	char path[PATH_MAX];
	uint64_t position = 0, cut = 0;
	const char *why = "ok";
	int loaded = 0, ret;

	ret = rpmafs_sessions_new(&lim, &srv->sessions);
	if (ret) {
		fprintf(stderr, "rpma-recv: the sessions table: %s\n", strerror(-ret));
		return -1;
	}
	if (!opts->output || !recv_output_lasts(srv->out)) {
		if (opts->output || opts->fresh)
			recv_log(RECV_LOG_DEBUG, "%s does not last: no state file (at least once)",
				recv_output_name(srv->out));
		return 0;
	}
	if (recv_state_path(opts->format, opts->output, path, sizeof(path))) {
		fprintf(stderr, "rpma-recv: %s: the state file's path is too long\n", opts->output);
		return -1;
	}
	if (opts->fresh) {
		ret = recv_output_truncate(srv->out);
		if (!ret)
			ret = recv_state_remove(path);
		if (ret) {
			fprintf(stderr, "rpma-recv: --fresh: %s: %s\n", opts->output,
				strerror(-ret));
			return -1;
		}
	} else {
		loaded = recv_state_load(path, opts->format, srv->sessions, &position, &why);
		if (loaded < 0) {
			bool io = loaded != -EINVAL && loaded != -EMEDIUMTYPE;

			fprintf(stderr,
				"rpma-recv: the state file %s: %s%s%s%s; start with --fresh to "
				"begin anew, or move it away to keep %s as it is (then it is "
				"continued after its last whole record)\n",
				path, why, io ? " (" : "", io ? strerror(-loaded) : "",
				io ? ")" : "", opts->output);
			return -1;
		}
	}
	ret = recv_output_recover(srv->out, loaded ? &position : NULL, &cut);
	if (ret) {
		fprintf(stderr, "rpma-recv: recovering %s: %s\n", opts->output, strerror(-ret));
		return -1;
	}
	ret = recv_state_create(path, opts->format, opts->max_sessions,
		recv_output_position(srv->out), srv->sessions, &srv->state);
	if (ret) {
		fprintf(stderr, "rpma-recv: cannot write the state file %s: %s\n", path,
			strerror(-ret));
		return -1;
	}
	recv_log(RECV_LOG_NOTICE,
		"%s: %s%s; continuing at %s %" PRIu64 " (%" PRIu64 " %s past it removed), "
		"%u sessions remembered",
		recv_output_name(srv->out),
		opts->fresh ? "--fresh, state forgotten"
		: loaded    ? "state loaded from "
			    : "no state file yet",
		!opts->fresh && loaded ? path : "",
		opts->format == RECV_FORMAT_DIR ? "number" : "byte", recv_output_position(srv->out),
		cut, opts->format == RECV_FORMAT_DIR ? "files" : "bytes",
		rpmafs_sessions_count(srv->sessions));
	return 0;
}

static void metric1(struct promtext *pt, const char *name, enum promtext_type type,
	const char *help, uint64_t n)
{
	promtext_family(pt, name, type, help);
	promtext_sample(pt, NULL, NULL, n);
}

/*
 * --metrics: the receiver's figures, for node_exporter's textfile
 * collector. Totals for the whole receiver: a connection's own counters
 * end with it, and senders come and go. Written from run() between two
 * epoll_wait()s, and once more at the end (final: nothing listens).
 */
static void metrics_write(struct loop *lp, bool final)
{
	const struct recv_server *srv = &lp->srv;
	struct promtext *pt = lp->metrics;
	uint64_t acks, dups;
	char why[PATH_MAX + 256];

	recv_conn_totals(srv, &acks, &dups);
	promtext_reset(pt);
	metric1(pt, "rpma_recv_messages_total", PROMTEXT_COUNTER, "Messages written out.",
		srv->messages);
	metric1(pt, "rpma_recv_bytes_total", PROMTEXT_COUNTER, "Payload bytes written out.",
		srv->bytes);
	metric1(pt, "rpma_recv_connections_accepted_total", PROMTEXT_COUNTER,
		"Connections accepted.", srv->accepted);
	metric1(pt, "rpma_recv_connections_rejected_total", PROMTEXT_COUNTER,
		"Connection requests rejected (--allow, private data, --max-connections).",
		srv->rejected);
	metric1(pt, "rpma_recv_auth_failures_total", PROMTEXT_COUNTER,
		"Connection requests rejected and connections dropped for their key (--keys): "
		"no key proved, an unknown key, a replayed request, no proof, a bad tag.",
		srv->auth_failures);
	metric1(pt, "rpma_recv_acks_total", PROMTEXT_COUNTER,
		"Acknowledgements sent to receiver-confirmed senders.", acks);
	metric1(pt, "rpma_recv_duplicates_total", PROMTEXT_COUNTER,
		"Messages acknowledged but not written again: a number already taken on "
		"their connection, or of their session.",
		dups);
	metric1(pt, "rpma_recv_sessions", PROMTEXT_GAUGE,
		"Sender sessions remembered for duplicates.",
		srv->sessions ? rpmafs_sessions_count(srv->sessions) : 0);
	metric1(pt, "rpma_recv_sessions_evicted_total", PROMTEXT_COUNTER,
		"Sessions forgotten because the table was full (--max-sessions).",
		srv->sessions ? rpmafs_sessions_evicted(srv->sessions) : 0);
	metric1(pt, "rpma_recv_sessions_expired_total", PROMTEXT_COUNTER,
		"Sessions forgotten after --session-ttl-ms unseen.",
		srv->sessions ? rpmafs_sessions_expired(srv->sessions) : 0);
	metric1(pt, "rpma_recv_connections", PROMTEXT_GAUGE, "Connections open now.", srv->open);
	metric1(pt, "rpma_recv_registered_bytes", PROMTEXT_GAUGE,
		"Bytes of registered (pinned) receive buffers.", srv->locked);
	metric1(pt, "rpma_recv_listening", PROMTEXT_GAUGE,
		"1 while connection requests are taken, 0 once stopping or stopped.",
		!final && !lp->stopping && lp->ep != NULL);
	/* a failing write is said once per kind of error; receiving goes on */
	if (promtext_file_write(lp->metrics_file, pt, why, sizeof(why)) && why[0])
		recv_log(RECV_LOG_ERROR, "metrics: %s", why);
	else if (why[0])
		recv_log(RECV_LOG_NOTICE, "metrics: %s", why);
}

/* the metrics file when it is due; how long the loop may sleep before the next (-1: none) */
static int metrics_tick(struct loop *lp)
{
	uint64_t now = (uint64_t)recv_now_ms(), next;

	if (!lp->metrics_file)
		return -1;
	if (promtext_file_due(lp->metrics_file, now))
		metrics_write(lp, false);
	next = promtext_file_next(lp->metrics_file);
	return next <= now ? 0 : next - now > INT_MAX ? INT_MAX : (int)(next - now);
}

/* READY=1: connection requests are taken from now on; the watchdog starts */
static void notify_ready(struct loop *lp)
{
	char status[512], state[560];
	int ret;

	summary(lp, status, sizeof(status));
	sdnotify_state(state, sizeof(state), "READY=1", status);
	ret = sdnotify_send(state);
	if (ret)
		recv_log(RECV_LOG_ERROR,
			"cannot tell the service manager we are ready (NOTIFY_SOCKET): %s",
			strerror(-ret));
	sdnotify_watchdog_init(&lp->wd, (uint64_t)recv_now_ms());
}

static int run(struct loop *lp)
{
	struct recv_server *srv = &lp->srv;
	struct epoll_event evs[32];
	int timeout, settle, acks, ping, n;

	for (;;) {
		if (!lp->stopping && srv->stop != RECV_RUNNING)
			begin_stop(lp);
		if (lp->stopping) {
			if (!srv->conns)
				return 0;
			if (recv_now_ms() >= lp->deadline_ms) {
				recv_conn_drop_all(srv, "no disconnect confirmation in time");
				recv_conn_reap(srv);
				return 0;
			}
		}

		/*
		 * idle: wait without a timeout, so an idle receiver uses no CPU;
		 * a connection settling wants a look every few milliseconds
		 */
		settle = recv_conn_settle(srv);
		acks = recv_conn_acks(srv);
		if (acks >= 0 && (settle < 0 || acks < settle))
			settle = acks;
		acks = recv_conn_proofs(srv);
		if (acks >= 0 && (settle < 0 || acks < settle))
			settle = acks;
		recv_conn_reap(srv);
		if (recv_rxq_pending(srv->rxq))
			timeout = 0;
		else if (lp->stopping)
			timeout = (int)(lp->deadline_ms > recv_now_ms()
						? lp->deadline_ms - recv_now_ms()
						: 0);
		else
			timeout = -1;
		if (settle >= 0 && (timeout < 0 || settle < timeout))
			timeout = settle;
		ping = watchdog(lp);
		if (ping >= 0 && (timeout < 0 || ping < timeout))
			timeout = ping;
		ping = metrics_tick(lp);
		if (ping >= 0 && (timeout < 0 || ping < timeout))
			timeout = ping;
		if (lp->stopping && !srv->conns)
			continue; /* the last one finished: the top of the loop returns */

		n = epoll_wait(srv->epfd, evs, (int)(sizeof(evs) / sizeof(evs[0])), timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			recv_log(RECV_LOG_ERROR, "epoll_wait: %s", strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct recv_watch *w = evs[i].data.ptr;

			switch (w->kind) {
			case RECV_WATCH_ENDPOINT:
				on_endpoint(lp);
				break;
			case RECV_WATCH_SIGNAL:
				on_signal(lp);
				break;
			default:
				recv_conn_handle(srv, w);
				break;
			}
		}
		recv_conn_run_pending(srv);
		recv_conn_reap(srv);
	}
}

static void teardown(struct loop *lp)
{
	if (lp->ep)
		(void)rpma_ep_shutdown(&lp->ep);
	if (lp->srv.conn_cfg)
		(void)rpma_conn_cfg_delete(&lp->srv.conn_cfg);
	/* after the connections, before the peer */
	recv_rxq_delete(&lp->srv.rxq);
	if (lp->srv.peer)
		(void)rpma_peer_delete(&lp->srv.peer);
	if (lp->srv.epfd >= 0)
		close(lp->srv.epfd);
	if (lp->sigfd >= 0)
		close(lp->sigfd);
	promtext_file_delete(&lp->metrics_file);
	promtext_delete(&lp->metrics);
	rpmafs_nonces_delete(&lp->srv.nonces);
	rpmafs_keyring_delete(&lp->srv.keys); /* the keys wiped */
}

/*
 * setup_keys -- --keys DIR: every *.key file of DIR loaded now; a key
 * file that is not safe or not a key refuses the start, naming its path.
 * 0, or -1 (said).
 */
static int setup_keys(struct recv_server *srv, const struct recv_options *opts)
{
	char err[PATH_MAX + 256];

	if (!opts->keys)
		return 0;
	if (rpmafs_auth_init()) {
		fprintf(stderr, "rpma-recv: --keys: the crypto library (libsodium) cannot start\n");
		return -1;
	}
	err[0] = '\0';
	if (rpmafs_keyring_load(opts->keys, &srv->keys, err, sizeof(err))) {
		fprintf(stderr, "rpma-recv: --keys %s: %s\n", opts->keys,
			err[0] ? err : "cannot load the keys");
		return -1;
	}
	if (rpmafs_nonces_new(RECV_NONCES, &srv->nonces)) {
		fprintf(stderr, "rpma-recv: out of memory\n");
		return -1;
	}
	recv_log(RECV_LOG_NOTICE, "--keys %s: %u keys; only senders that prove one are accepted",
		opts->keys, rpmafs_keyring_count(srv->keys));
	return 0;
}

int main(int argc, char *argv[])
{
	struct recv_options opts;
	struct loop lp = {.srv.epfd = -1, .sigfd = -1};
	int status = EXIT_SUCCESS, ret;
	uint32_t unposted = 0, slots = 0;
	uint64_t stray = 0;

	switch (recv_options_parse(argc, argv, HAVE_PEER_ADDR, &opts)) {
	case RECV_PARSE_OK:
		break;
	case RECV_PARSE_EXIT:
		recv_options_fini(&opts);
		return EXIT_SUCCESS;
	default:
		recv_options_fini(&opts);
		return EXIT_USAGE;
	}
	recv_log_init(opts.verbosity);
	recv_log_route_rpma();
	lp.srv.opts = &opts;
	if (setup_keys(&lp.srv, &opts)) {
		teardown(&lp);
		recv_options_fini(&opts);
		return EXIT_USAGE;
	}

	ret = recv_output_open(opts.format, opts.output, &lp.srv.out);
	if (!ret)
		recv_output_set_durable(lp.srv.out, opts.fsync);
	if (ret == -EWOULDBLOCK) {
		fprintf(stderr,
			"rpma-recv: %s is in use: another rpma-recv holds its lock (one "
			"receiver per output)\n",
			opts.output);
		recv_options_fini(&opts);
		return EXIT_FAILURE;
	}
	if (ret) {
		fprintf(stderr, "rpma-recv: cannot open %s%s: %s\n",
			opts.output ? opts.output : "standard output",
			opts.format == RECV_FORMAT_DIR ? " as the output directory" : "",
			strerror(-ret));
		recv_options_fini(&opts);
		return EXIT_FAILURE;
	}
	if (setup_state(&lp.srv, &opts)) {
		recv_state_close(&lp.srv.state);
		rpmafs_sessions_delete(&lp.srv.sessions);
		(void)recv_output_close(&lp.srv.out);
		recv_options_fini(&opts);
		return EXIT_FAILURE;
	}

	raise_nofile(&opts);
	ret = setup_rpma(&lp, &opts);
	if (!ret)
		ret = setup_loop(&lp);
	if (ret) {
		teardown(&lp);
		recv_state_close(&lp.srv.state);
		rpmafs_sessions_delete(&lp.srv.sessions);
		(void)recv_output_close(&lp.srv.out);
		recv_options_fini(&opts);
		return ret == EXIT_USAGE ? EXIT_USAGE : EXIT_FAILURE;
	}

	/* the first metrics at the loop's first round */
	if (opts.metrics && (promtext_new(&lp.metrics) ||
				    promtext_file_new(opts.metrics, opts.metrics_interval_ms,
					    (uint64_t)recv_now_ms(), &lp.metrics_file))) {
		fprintf(stderr, "rpma-recv: out of memory\n");
		teardown(&lp);
		recv_state_close(&lp.srv.state);
		rpmafs_sessions_delete(&lp.srv.sessions);
		(void)recv_output_close(&lp.srv.out);
		recv_options_fini(&opts);
		return EXIT_FAILURE;
	}
	recv_log(RECV_LOG_NOTICE,
		"listening on %s port %s: format %s to %s, max message %u bytes, %u slots %s",
		opts.addr, opts.port, recv_format_name(opts.format), recv_output_name(lp.srv.out),
		opts.max_message, opts.slots,
		opts.srq ? "shared by all connections" : "per connection (--no-srq)");
	notify_ready(&lp);

	if (run(&lp))
		status = EXIT_FAILURE;
	if (lp.srv.stop == RECV_STOP_OUTPUT_GONE || lp.srv.stop == RECV_STOP_ENDPOINT)
		status = EXIT_FAILURE;

	recv_conn_drop_all(&lp.srv, "exiting");
	recv_conn_reap(&lp.srv);
	/* the last records into the state too (synced first with --fsync) */
	if (lp.srv.state && lp.srv.state_dirty && lp.srv.stop != RECV_STOP_OUTPUT_GONE &&
		(!opts.fsync || !recv_output_sync(lp.srv.out)))
		(void)recv_state_flush(&lp.srv);
	if (lp.metrics_file)
		metrics_write(&lp, true);
	if (lp.srv.rxq) {
		unposted = recv_rxq_unposted(lp.srv.rxq, &slots);
		stray = recv_rxq_stray(lp.srv.rxq);
	}
	teardown(&lp);

	recv_state_close(&lp.srv.state);
	rpmafs_sessions_delete(&lp.srv.sessions);
	ret = recv_output_close(&lp.srv.out);
	if (ret) {
		fprintf(stderr, "rpma-recv: closing the output: %s\n", strerror(-ret));
		status = EXIT_FAILURE;
	}
	recv_log(RECV_LOG_NOTICE,
		"%lu connections, %" PRIu64 " messages, %" PRIu64 " bytes, %lu rejected",
		lp.srv.accepted, lp.srv.messages, lp.srv.bytes, lp.srv.rejected);
	/*
	 * Every receive comes back with a completion, except one a provider
	 * took for a message that a connection's end cut short: say so, it is
	 * capacity the queue lost (none has been seen in the lab).
	 */
	if (unposted)
		recv_log(RECV_LOG_NOTICE,
			"shared receive queue: %u of %u receives were still posted at the end",
			slots - unposted, slots);
	if (stray)
		recv_log(RECV_LOG_NOTICE,
			"%" PRIu64 " messages of connections already closed were dropped", stray);
	recv_options_fini(&opts);
	return status;
}
