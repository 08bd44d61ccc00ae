// SPDX-License-Identifier: BSD-3-Clause
/*
 * rpma-floor.c -- bench-rpma: the raw rpma_send floor, no file system
 *
 *   bench-rpma recv ADDR PORT [--max SIZE] [--slots N] [--srq]
 *   bench-rpma send ADDR PORT SIZE COUNT [--window W | --latency] [--warmup N]
 *
 * recv listens on ADDR:PORT and serves senders one after another until it
 * is killed: SLOTS receives of SIZE bytes (default 64 of 1 MiB) posted before
 * each connection is accepted, each re-posted as soon as its message is in.
 * --srq: the SLOTS receives are posted once, on one shared receive queue
 * with a CQ of its own, as rpma-recv receives by default: the plain
 * receive loop that rpma-recv's CPU per message is weighed against.
 *
 * send connects to ADDR:PORT and sends COUNT messages of SIZE bytes with
 * rpma_send(RPMA_F_COMPLETION_ALWAYS) -- what rpmafs does for every message
 * with completion = always -- after --warmup N untimed ones:
 *   rate (default)  W sends outstanding (default 16); prints count size
 *                   seconds msg_s mib_s, from the first post to the last
 *                   completion, and cpu_us_per_msg, the process's CPU time
 *                   (user + system, getrusage) over the same span / COUNT
 *   --latency       one send at a time, timed from rpma_send() to its
 *                   completion: prints median, p99, mean, min, max (µs)
 *
 * Both sides sleep on the completion channel between completions, as the
 * rpmafs engine and rpma-recv do, so the floor pays the same wake-ups.
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>

#include "measure.h"

#define PROG "bench-rpma"
#define WC_BATCH 32

#define CHECK_RPMA(expr)                                                         \
	do {                                                                     \
		int ret_ = (expr);                                               \
		if (ret_)                                                        \
			measure_die(PROG, "%s: %s", #expr, rpma_err_2str(ret_)); \
	} while (0)

static void usage(void)
{
	fprintf(stderr, "usage: " PROG " recv ADDR PORT [--max SIZE] [--slots N] [--srq]\n"
			"       " PROG " send ADDR PORT SIZE COUNT [--window W | --latency] "
			"[--warmup N]\n");
	exit(2);
}

static struct rpma_peer *peer_for(const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *ctx;
	struct rpma_peer *peer;

	CHECK_RPMA(rpma_utils_get_ibv_context(addr, type, &ctx));
	CHECK_RPMA(rpma_peer_new(ctx, &peer));
	return peer;
}

static struct rpma_mr_local *region(struct rpma_peer *peer, size_t size, int usage, char **ptr)
{
	struct rpma_mr_local *mr;
	void *p;

	if (posix_memalign(&p, 4096, size))
		measure_die(PROG, "cannot allocate %zu bytes", size);
	for (size_t k = 0; k < size; k++)
		((char *)p)[k] = (char)('a' + k % 26);
	CHECK_RPMA(rpma_mr_reg(peer, p, size, usage, &mr));
	*ptr = p;
	return mr;
}

static struct rpma_conn_cfg *conn_cfg(uint32_t sq, uint32_t rq)
{
	struct rpma_conn_cfg *cfg;

	CHECK_RPMA(rpma_conn_cfg_new(&cfg));
	CHECK_RPMA(rpma_conn_cfg_set_sq_size(cfg, sq));
	CHECK_RPMA(rpma_conn_cfg_set_rq_size(cfg, rq));
	CHECK_RPMA(rpma_conn_cfg_set_cq_size(cfg, sq + rq));
	return cfg;
}

static void expect_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event ev;

	CHECK_RPMA(rpma_conn_next_event(conn, &ev));
	if (ev != expected)
		measure_die(PROG, "connection event %s, expected %s",
			rpma_utils_conn_event_2str(ev), rpma_utils_conn_event_2str(expected));
}

/* ---- the receiver ---- */

/* the receive buffers: SLOTS of MAX bytes, on srq or each connection's queue */
struct receives {
	struct rpma_mr_local *mr;
	struct rpma_srq *srq; /* NULL: the connection's own receive queue */
	size_t max;
};

static void post_recv(struct rpma_conn *conn, const struct receives *rx, uint64_t slot)
{
	void *ctx = (void *)(uintptr_t)slot;

	if (rx->srq)
		CHECK_RPMA(rpma_srq_recv(rx->srq, rx->mr, slot * rx->max, rx->max, ctx));
	else
		CHECK_RPMA(rpma_recv(conn, rx->mr, slot * rx->max, rx->max, ctx));
}

/* serve one sender until it disconnects; returns the messages received */
static unsigned long serve(struct rpma_conn *conn, const struct receives *rx)
{
	struct ibv_wc wc[WC_BATCH];
	struct pollfd fds[2];
	struct rpma_cq *cq;
	unsigned long got = 0;
	enum rpma_conn_event ev;
	bool closed = false;

	if (rx->srq)
		CHECK_RPMA(rpma_srq_get_rcq(rx->srq, &cq));
	else
		CHECK_RPMA(rpma_conn_get_cq(conn, &cq));
	CHECK_RPMA(rpma_conn_get_event_fd(conn, &fds[0].fd));
	CHECK_RPMA(rpma_cq_get_fd(cq, &fds[1].fd));
	fds[0].events = fds[1].events = POLLIN;
	for (;;) {
		int n, ret;

		/* drain first: the CQ was armed when it was made */
		while ((ret = rpma_cq_get_wc(cq, WC_BATCH, wc, &n)) == 0) {
			for (int i = 0; i < n; i++) {
				if (wc[i].status != IBV_WC_SUCCESS)
					continue; /* flushed: the sender is going */
				got++;
				post_recv(conn, rx, wc[i].wr_id);
			}
		}
		if (ret != RPMA_E_NO_COMPLETION)
			measure_die(PROG, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
		/*
		 * closed: every message sent was in before the sender's last
		 * completion, so the drain above had them all (a shared queue's
		 * completions outlive the connection: none is left for the next)
		 */
		if (closed)
			return got;
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			measure_die(PROG, "poll: %s", strerror(errno));
		}
		if (fds[1].revents)
			CHECK_RPMA(rpma_cq_wait(cq));
		if (fds[0].revents) {
			CHECK_RPMA(rpma_conn_next_event(conn, &ev));
			if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
				closed = true;
		}
	}
}

static int run_recv(int argc, char **argv)
{
	const char *addr, *port;
	size_t max = 1 << 20;
	long slots = 64;
	bool srq = false;
	struct receives rx = {0};
	struct rpma_peer *peer;
	struct rpma_conn_cfg *cfg;
	struct rpma_ep *ep;
	char *buf;

	if (argc < 2)
		usage();
	addr = argv[0];
	port = argv[1];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
			max = measure_parse_size(PROG, "--max", argv[++i]);
		else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc)
			slots = measure_parse_count(PROG, "--slots", argv[++i]);
		else if (strcmp(argv[i], "--srq") == 0)
			srq = true;
		else
			usage();
	}
	if (max == 0)
		measure_die(PROG, "--max must be at least 1 byte");

	peer = peer_for(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	rx.max = max;
	rx.mr = region(peer, max * (size_t)slots, RPMA_MR_USAGE_RECV, &buf);
	cfg = conn_cfg(1, (uint32_t)slots);
	if (srq) {
		struct rpma_srq_cfg *scfg;

		/* one CQ entry per receive, as rpma-recv's shared queue */
		CHECK_RPMA(rpma_srq_cfg_new(&scfg));
		CHECK_RPMA(rpma_srq_cfg_set_rq_size(scfg, (uint32_t)slots));
		CHECK_RPMA(rpma_srq_cfg_set_rcq_size(scfg, (uint32_t)slots));
		CHECK_RPMA(rpma_srq_new(peer, scfg, &rx.srq));
		CHECK_RPMA(rpma_srq_cfg_delete(&scfg));
		CHECK_RPMA(rpma_conn_cfg_set_srq(cfg, rx.srq));
		for (long s = 0; s < slots; s++)
			post_recv(NULL, &rx, (uint64_t)s);
	}
	CHECK_RPMA(rpma_ep_listen(peer, addr, port, &ep));
	printf("listening on %s:%s, %ld receives of %zu bytes%s\n", addr, port, slots, max,
		srq ? " on a shared receive queue" : "");
	fflush(stdout);

	for (;;) {
		struct rpma_conn_req *req;
		struct rpma_conn *conn;
		unsigned long got;

		CHECK_RPMA(rpma_ep_next_conn_req(ep, cfg, &req));
		for (long s = 0; !srq && s < slots; s++)
			CHECK_RPMA(rpma_conn_req_recv(
				req, rx.mr, (size_t)s * max, max, (void *)(uintptr_t)s));
		CHECK_RPMA(rpma_conn_req_connect(&req, NULL, &conn));
		expect_event(conn, RPMA_CONN_ESTABLISHED);
		got = serve(conn, &rx);
		(void)rpma_conn_disconnect(conn);
		CHECK_RPMA(rpma_conn_delete(&conn));
		printf("connection closed after %lu messages\n", got);
		fflush(stdout);
	}
}

/* ---- the sender ---- */

struct sender {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *mr;
	size_t size;
	unsigned window;
	unsigned long posted, done;
};

static void post(struct sender *s)
{
	/* each outstanding send has a buffer of its own, as in rpmafs */
	size_t off = (s->posted % s->window) * s->size;

	CHECK_RPMA(rpma_send(s->conn, s->size ? s->mr : NULL, s->size ? off : 0, s->size,
		RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(s->posted + 1)));
	s->posted++;
}

/* wait for at least one completion; returns how many were reaped */
static int reap(struct sender *s)
{
	struct ibv_wc wc[WC_BATCH];
	int n, ret;

	while ((ret = rpma_cq_get_wc(s->cq, WC_BATCH, wc, &n)) == RPMA_E_NO_COMPLETION)
		CHECK_RPMA(rpma_cq_wait(s->cq));
	if (ret)
		measure_die(PROG, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			measure_die(PROG, "send %llu failed: %s", (unsigned long long)wc[i].wr_id,
				ibv_wc_status_str(wc[i].status));
	s->done += (unsigned long)n;
	return n;
}

/* send count messages, window of them outstanding, until all have completed */
static void send_window(struct sender *s, unsigned long count)
{
	unsigned long end = s->posted + count;

	while (s->done < end) {
		while (s->posted < end && s->posted - s->done < s->window)
			post(s);
		reap(s);
	}
}

static int run_send(int argc, char **argv)
{
	struct sender s = {0};
	struct rpma_peer *peer;
	struct rpma_conn_cfg *cfg;
	struct rpma_conn_req *req;
	bool latency = false;
	long count, warmup = 0, window = 16;
	char *buf;
	double t0, t1, c0, c1;

	if (argc < 4)
		usage();
	s.size = measure_parse_size(PROG, "SIZE", argv[2]);
	count = measure_parse_count(PROG, "COUNT", argv[3]);
	for (int i = 4; i < argc; i++) {
		if (strcmp(argv[i], "--latency") == 0)
			latency = true;
		else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc)
			window = measure_parse_count(PROG, "--window", argv[++i]);
		else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
			warmup = measure_parse_count(PROG, "--warmup", argv[++i]);
		else
			usage();
	}
	s.window = latency ? 1 : (unsigned)window;

	peer = peer_for(argv[0], RPMA_UTIL_IBV_CONTEXT_REMOTE);
	s.mr = region(peer, (s.size ? s.size : 1) * s.window, RPMA_MR_USAGE_SEND, &buf);
	cfg = conn_cfg(s.window, 1);
	CHECK_RPMA(rpma_conn_req_new(peer, argv[0], argv[1], cfg, &req));
	CHECK_RPMA(rpma_conn_req_connect(&req, NULL, &s.conn));
	expect_event(s.conn, RPMA_CONN_ESTABLISHED);
	CHECK_RPMA(rpma_conn_get_cq(s.conn, &s.cq));

	send_window(&s, (unsigned long)warmup);
	if (latency) {
		struct measure_summary sum;
		double *samples = calloc((size_t)count, sizeof(*samples));

		if (!samples)
			measure_die(PROG, "cannot allocate %ld samples", count);
		for (long k = 0; k < count; k++) {
			double w0 = measure_now();

			post(&s);
			reap(&s);
			samples[k] = measure_now() - w0;
		}
		measure_summarize(samples, (size_t)count, &sum);
		printf("count=%ld size=%zu median_us=%.2f p99_us=%.2f mean_us=%.2f min_us=%.2f "
		       "max_us=%.2f\n",
			count, s.size, sum.median, sum.p99, sum.mean, sum.min, sum.max);
		free(samples);
	} else {
		c0 = measure_cpu();
		t0 = measure_now();
		send_window(&s, (unsigned long)count);
		t1 = measure_now();
		c1 = measure_cpu();
		printf("count=%ld size=%zu window=%u seconds=%.6f msg_s=%.1f mib_s=%.3f "
		       "cpu_us_per_msg=%.2f\n",
			count, s.size, s.window, t1 - t0, (double)count / (t1 - t0),
			(double)count * (double)s.size / (t1 - t0) / 1048576.0,
			(c1 - c0) / (double)count * 1e6);
	}

	CHECK_RPMA(rpma_conn_disconnect(s.conn));
	expect_event(s.conn, RPMA_CONN_CLOSED);
	CHECK_RPMA(rpma_conn_delete(&s.conn));
	CHECK_RPMA(rpma_conn_cfg_delete(&cfg));
	CHECK_RPMA(rpma_mr_dereg(&s.mr));
	free(buf);
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "recv") == 0)
		return run_recv(argc - 2, argv + 2);
	if (strcmp(argv[1], "send") == 0)
		return run_send(argc - 2, argv + 2);
	usage();
}
