// SPDX-License-Identifier: BSD-3-Clause
/*
 * fan-in.c -- many plain librpma senders in one process, for rpma-recv
 *
 * fan-in --connect ADDR[:PORT] --conns K [--count M] [--sizes LIST]
 *        [--base-id B] [--window W] [--batch N] [--wait-stdin] [--churn]
 *        [--seconds S | --until-stdin] [--quiet]
 *
 * Opens K connections to one receiver (no private data: plain librpma
 * senders, built against the system's librpma), then sends M messages on
 * each, round robin, at most W in flight per connection, and waits for
 * every completion. Connection i is sender B + i of seq.h: check-seq
 * checks every message of every connection, its order and its bytes.
 *
 *   --wait-stdin  after all K are established, print "fan-in: K connected"
 *                 and read a line from stdin before sending; after the last
 *                 completion print "fan-in: done" and read another line (or
 *                 EOF) before disconnecting: the caller measures the
 *                 receiver in between
 *   --churn       K connect/send/disconnect cycles, one connection at a
 *                 time (a fresh id each), instead of K at once
 *   --seconds S   a flood: every connection sends (M is ignored) as fast as
 *                 its window allows until S seconds passed; the count each
 *                 connection completed is printed as "fan-in: sender ID
 *                 sent N"
 *   --until-stdin the same flood, until a line (or EOF) on stdin
 *   --batch N     connection requests in flight at once (default 16)
 *
 * Exit status: 0 every message completed; 1 error; 4 a connection ended
 * early (its completions failed or the receiver closed it).
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <librpma.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "seq.h"

#define EXIT_CLOSED 4
#define CONNECT_TIMEOUT_MS 30000
#define COMPLETION_TIMEOUT_MS 60000

struct fconn {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int ev_fd, cq_fd;
	uint32_t id;
	uint64_t sent, completed;
	bool established, closed;
};

struct fan {
	char addr[256];
	char port[8];
	unsigned conns;
	uint64_t count;
	size_t sizes[SEQ_MAX_SIZES];
	int nsizes;
	size_t max_size;
	uint32_t base_id;
	unsigned window;
	unsigned batch;
	unsigned seconds;
	bool wait_stdin, until_stdin, churn, quiet;

	struct rpma_peer *peer;
	struct rpma_conn_cfg *cfg;
	struct rpma_mr_local *mr;
	uint8_t *buf;
	struct fconn *c;
	int epfd;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(const char *msg, const char *arg)
{
	fprintf(stderr, "fan-in: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return -1;
}

static int parse_args(int argc, char *argv[], struct fan *f)
{
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"conns", required_argument, NULL, 'k'},
		{"count", required_argument, NULL, 'n'},
		{"sizes", required_argument, NULL, 's'},
		{"base-id", required_argument, NULL, 'b'},
		{"window", required_argument, NULL, 'w'},
		{"batch", required_argument, NULL, 'B'},
		{"seconds", required_argument, NULL, 'S'},
		{"wait-stdin", no_argument, NULL, 'W'},
		{"until-stdin", no_argument, NULL, 'U'},
		{"churn", no_argument, NULL, 'C'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	char *colon;
	int opt;

	strcpy(f->port, "7204");
	f->conns = 1;
	f->count = 1;
	f->sizes[0] = 64;
	f->nsizes = 1;
	f->window = 4;
	f->batch = 16;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			snprintf(f->addr, sizeof(f->addr), "%s", optarg);
			colon = strrchr(f->addr, ':');
			if (colon && strchr(f->addr, ':') == colon) {
				*colon = '\0';
				snprintf(f->port, sizeof(f->port), "%s", colon + 1);
			}
			break;
		case 'k':
			f->conns = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			f->count = strtoull(optarg, NULL, 10);
			break;
		case 's':
			f->nsizes = seq_parse_sizes(optarg, f->sizes);
			if (f->nsizes <= 0)
				return usage("bad --sizes", optarg);
			break;
		case 'b':
			f->base_id = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			f->window = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'B':
			f->batch = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'S':
			f->seconds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'W':
			f->wait_stdin = true;
			break;
		case 'U':
			f->until_stdin = true;
			break;
		case 'C':
			f->churn = true;
			break;
		case 'q':
			f->quiet = true;
			break;
		default:
			return -1;
		}
	}
	if (!f->addr[0])
		return usage("--connect ADDR[:PORT] is required", NULL);
	if (f->wait_stdin && f->until_stdin)
		return usage("--wait-stdin and --until-stdin both read stdin", NULL);
	if (f->conns == 0 || f->window == 0 || f->batch == 0)
		return usage("--conns, --window and --batch must be at least 1", NULL);
	for (int i = 0; i < f->nsizes; i++) {
		if (f->sizes[i] < SEQ_HDR_LEN)
			return usage("every size must hold seq.h's header (16 bytes)", optarg);
		if (f->sizes[i] > f->max_size)
			f->max_size = f->sizes[i];
	}
	return 0;
}

/*
 * raise_nofile -- two descriptors per connection (its CM event channel and
 * its completion channel): lift the soft limit to the hard one
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int setup(struct fan *f)
{
	unsigned slots = f->churn ? f->window : f->conns * f->window;
	size_t size = (size_t)slots * f->max_size;
	struct ibv_context *dev;
	int ret;

	ret = rpma_utils_get_ibv_context(f->addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev);
	if (!ret)
		ret = rpma_peer_new(dev, &f->peer);
	if (!ret)
		ret = rpma_conn_cfg_new(&f->cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(f->cfg, f->window);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(f->cfg, f->window);
	/* it receives nothing */
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(f->cfg, 1);
	if (!ret)
		ret = rpma_conn_cfg_set_timeout(f->cfg, CONNECT_TIMEOUT_MS);
	if (ret) {
		fprintf(stderr, "fan-in: setting up a peer for %s: %s\n", f->addr,
			rpma_err_2str(ret));
		return 1;
	}
	f->buf = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
	if (!f->buf)
		return 1;
	ret = rpma_mr_reg(f->peer, f->buf, size, RPMA_MR_USAGE_SEND, &f->mr);
	if (ret) {
		fprintf(stderr, "fan-in: rpma_mr_reg %zu bytes: %s\n", size, rpma_err_2str(ret));
		return 1;
	}
	f->c = calloc(f->conns, sizeof(*f->c));
	f->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!f->c || f->epfd < 0)
		return 1;
	return 0;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -1 : 0;
}

/* start -- send a connection request (no private data) */
static int start(struct fan *f, struct fconn *c)
{
	struct rpma_conn_req *req = NULL;
	int ret;

	ret = rpma_conn_req_new(f->peer, f->addr, f->port, f->cfg, &req);
	if (!ret)
		ret = rpma_conn_req_connect(&req, NULL, &c->conn);
	if (!ret)
		ret = rpma_conn_get_event_fd(c->conn, &c->ev_fd);
	if (ret) {
		fprintf(stderr, "fan-in: connection %u to %s:%s: %s\n", c->id, f->addr, f->port,
			rpma_err_2str(ret));
		return 1;
	}
	return 0;
}

/* wait_established -- the connection's first CM event must be ESTABLISHED */
static int wait_established(struct fan *f, struct fconn *c)
{
	struct pollfd p = {.fd = c->ev_fd, .events = POLLIN};
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret;

	if (poll(&p, 1, CONNECT_TIMEOUT_MS) <= 0 || rpma_conn_next_event(c->conn, &ev) ||
		ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "fan-in: connection %u to %s:%s not established (%s)\n", c->id,
			f->addr, f->port,
			ev == RPMA_CONN_UNDEFINED  ? "no event"
			: ev == RPMA_CONN_REJECTED ? "rejected"
						   : "closed or lost");
		return 1;
	}
	c->established = true;
	ret = rpma_conn_get_cq(c->conn, &c->cq);
	if (!ret)
		ret = rpma_cq_get_fd(c->cq, &c->cq_fd);
	if (ret || set_nonblock(c->cq_fd) || set_nonblock(c->ev_fd)) {
		fprintf(stderr, "fan-in: connection %u: its descriptors: %s\n", c->id,
			rpma_err_2str(ret));
		return 1;
	}
	return 0;
}

/*
 * print_pdata -- what the receiver advertised in its accept, read by hand
 * as any plain sender could (rpma-recv(1), PRIVATE DATA)
 */
static void print_pdata(struct fconn *c)
{
	struct rpma_conn_private_data pd = {NULL, 0};
	const uint8_t *p;

	if (rpma_conn_get_private_data(c->conn, &pd) || pd.len < 16 || memcmp(pd.ptr, "RPMF", 4)) {
		fprintf(stderr, "fan-in: the receiver sent no rpmafs private data\n");
		return;
	}
	p = pd.ptr;
	fprintf(stderr,
		"fan-in: the receiver advertises max_message %" PRIu64 ", credits %" PRIu64 "\n",
		seq_get_le(p + 8, 4), seq_get_le(p + 12, 4));
}

/* watch -- both of its descriptors in the epoll set; data.u64 = index * 2 + is_event */
static int watch(struct fan *f, struct fconn *c, unsigned index)
{
	struct epoll_event ev = {.events = EPOLLIN};

	ev.data.u64 = (uint64_t)index * 2;
	if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, c->cq_fd, &ev))
		return -1;
	ev.data.u64 = (uint64_t)index * 2 + 1;
	return epoll_ctl(f->epfd, EPOLL_CTL_ADD, c->ev_fd, &ev);
}

static void unwatch(struct fan *f, struct fconn *c)
{
	(void)epoll_ctl(f->epfd, EPOLL_CTL_DEL, c->cq_fd, NULL);
	(void)epoll_ctl(f->epfd, EPOLL_CTL_DEL, c->ev_fd, NULL);
}

/* connect_range -- connections first..first+n-1, f->batch requests at a time */
static int connect_range(struct fan *f, unsigned first, unsigned n)
{
	for (unsigned b = first; b < first + n; b += f->batch) {
		unsigned end = b + f->batch < first + n ? b + f->batch : first + n;

		for (unsigned i = b; i < end; i++) {
			f->c[i].id = f->base_id + i;
			if (start(f, &f->c[i]))
				return 1;
		}
		for (unsigned i = b; i < end; i++)
			if (wait_established(f, &f->c[i]) || watch(f, &f->c[i], i))
				return 1;
		if (b == 0 && !f->quiet)
			print_pdata(&f->c[0]);
	}
	return 0;
}

#define STDIN_EVENT UINT64_MAX

/* flood -- whether sending goes on until told (time or stdin), not to a count */
static bool flood(const struct fan *f)
{
	return f->seconds || f->until_stdin;
}

/* post -- send the connection's next messages while its window has room */
static int post(struct fan *f, struct fconn *c, unsigned index, bool more)
{
	while (more && c->sent - c->completed < f->window && (flood(f) || c->sent < f->count)) {
		uint64_t seq = c->sent;
		size_t len = f->sizes[seq % (uint64_t)f->nsizes];
		size_t slot = f->churn ? 0 : (size_t)index * f->window;
		size_t off = (slot + (size_t)(seq % f->window)) * f->max_size;
		int ret;

		/* the slot is free: its previous message completed */
		seq_fill(f->buf + off, c->id, seq, len);
		ret = rpma_send(c->conn, f->mr, off, len, RPMA_F_COMPLETION_ALWAYS,
			(const void *)(uintptr_t)seq);
		if (ret) {
			fprintf(stderr, "fan-in: sender %u: rpma_send message %" PRIu64 ": %s\n",
				c->id, seq, rpma_err_2str(ret));
			return EXIT_CLOSED;
		}
		c->sent++;
	}
	return 0;
}

/* reap -- the connection's completions; fails on an error completion */
static int reap(struct fconn *c)
{
	struct ibv_wc wc[16];
	int n, ret;

	/*
	 * take the channel's events and re-arm it; librpma 1.2 logs an empty
	 * non-blocking channel as an error, so ask the descriptor first
	 */
	for (;;) {
		struct pollfd p = {.fd = c->cq_fd, .events = POLLIN};

		if (poll(&p, 1, 0) <= 0 || rpma_cq_wait(c->cq))
			break;
	}
	for (;;) {
		n = 0;
		ret = rpma_cq_get_wc(c->cq, 16, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION)
			return 0;
		if (ret) {
			fprintf(stderr, "fan-in: sender %u: rpma_cq_get_wc: %s\n", c->id,
				rpma_err_2str(ret));
			return 1;
		}
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr,
					"fan-in: sender %u: message %" PRIu64 " failed: %s\n",
					c->id, (uint64_t)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return EXIT_CLOSED;
			}
			c->completed++;
		}
	}
}

/*
 * send_range -- every connection of the range sends its messages, all at
 * once; returns when each has its last completion
 */
static int send_range(struct fan *f, unsigned first, unsigned n)
{
	double stop_at = f->seconds ? now_s() + f->seconds : 0;
	unsigned busy = 0;
	bool more = true;
	int ret;

	if (f->until_stdin) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = STDIN_EVENT};

		if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, 0, &ev)) {
			perror("fan-in: epoll_ctl(stdin)");
			return 1;
		}
	}
	for (unsigned i = first; i < first + n; i++) {
		if ((ret = post(f, &f->c[i], i, true)))
			return ret;
		if (f->c[i].sent > f->c[i].completed)
			busy++;
	}
	while (busy) {
		struct epoll_event evs[64];
		int k = epoll_wait(f->epfd, evs, 64, COMPLETION_TIMEOUT_MS);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fprintf(stderr, "fan-in: no completion in %d s, %u connections waiting\n",
				COMPLETION_TIMEOUT_MS / 1000, busy);
			return 1;
		}
		if (stop_at && now_s() >= stop_at)
			more = false;
		for (int e = 0; e < k; e++) {
			unsigned i = (unsigned)(evs[e].data.u64 / 2);
			struct fconn *c = &f->c[i];
			bool was_busy;

			if (evs[e].data.u64 == STDIN_EVENT) {
				(void)epoll_ctl(f->epfd, EPOLL_CTL_DEL, 0, NULL);
				more = false;
				continue;
			}
			was_busy = c->sent > c->completed;
			if (evs[e].data.u64 % 2) {
				fprintf(stderr,
					"fan-in: sender %u: the receiver ended the connection after "
					"%" PRIu64 " of %" PRIu64 " messages\n",
					c->id, c->completed, c->sent);
				return EXIT_CLOSED;
			}
			if ((ret = reap(c)) || (ret = post(f, c, i, more)))
				return ret;
			if (was_busy && c->sent == c->completed)
				busy--;
		}
	}
	return 0;
}

static void disconnect(struct fan *f, struct fconn *c)
{
	enum rpma_conn_event ev;
	struct pollfd p = {.fd = c->ev_fd, .events = POLLIN};

	if (!c->conn)
		return;
	unwatch(f, c);
	if (c->established && rpma_conn_disconnect(c->conn) == 0 && poll(&p, 1, 5000) > 0)
		(void)rpma_conn_next_event(c->conn, &ev);
	(void)rpma_conn_delete(&c->conn);
}

static void wait_line(void)
{
	char line[64];

	(void)!fgets(line, sizeof(line), stdin);
}

static int run_all(struct fan *f)
{
	double t0, t1, t2;
	uint64_t total = 0;
	int ret;

	t0 = now_s();
	if ((ret = connect_range(f, 0, f->conns)))
		return ret;
	t1 = now_s();
	fprintf(stderr, "fan-in: %u connected in %.2f s\n", f->conns, t1 - t0);
	if (f->wait_stdin)
		wait_line();
	t1 = now_s();
	ret = send_range(f, 0, f->conns);
	t2 = now_s();
	for (unsigned i = 0; i < f->conns; i++)
		total += f->c[i].completed;
	if (flood(f))
		for (unsigned i = 0; i < f->conns; i++)
			fprintf(stderr, "fan-in: sender %u sent %" PRIu64 "\n", f->c[i].id,
				f->c[i].completed);
	fprintf(stderr,
		"fan-in: %u connections, %" PRIu64 " messages completed in %.3f s (%.0f msg/s)%s\n",
		f->conns, total, t2 - t1, t2 > t1 ? (double)total / (t2 - t1) : 0.0,
		ret ? ", FAILED" : "");
	if (ret)
		return ret;
	fprintf(stderr, "fan-in: done\n");
	if (f->wait_stdin)
		wait_line();
	return 0;
}

/* run_churn -- one connection at a time: connect, send, disconnect */
static int run_churn(struct fan *f)
{
	double t0 = now_s();
	uint64_t total = 0;
	int ret;

	for (unsigned i = 0; i < f->conns; i++) {
		if ((ret = connect_range(f, i, 1)) || (ret = send_range(f, i, 1)))
			return ret;
		total += f->c[i].completed;
		disconnect(f, &f->c[i]);
		if (!f->quiet && (i + 1) % 100 == 0)
			fprintf(stderr, "fan-in: %u cycles\n", i + 1);
	}
	fprintf(stderr, "fan-in: %u connect/disconnect cycles, %" PRIu64 " messages in %.2f s\n",
		f->conns, total, now_s() - t0);
	return 0;
}

int main(int argc, char *argv[])
{
	struct fan f = {.epfd = -1};
	int ret;

	setvbuf(stderr, NULL, _IOLBF, 0);
	if (parse_args(argc, argv, &f))
		return 1;
	raise_nofile();
	ret = setup(&f);
	if (!ret)
		ret = f.churn ? run_churn(&f) : run_all(&f);
	for (unsigned i = 0; f.c && i < f.conns; i++)
		disconnect(&f, &f.c[i]);
	free(f.c);
	if (f.mr)
		(void)rpma_mr_dereg(&f.mr);
	free(f.buf);
	if (f.cfg)
		(void)rpma_conn_cfg_delete(&f.cfg);
	if (f.peer)
		(void)rpma_peer_delete(&f.peer);
	if (f.epfd >= 0)
		close(f.epfd);
	return ret;
}
