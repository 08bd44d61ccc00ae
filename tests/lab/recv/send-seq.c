// SPDX-License-Identifier: BSD-3-Clause
/*
 * send-seq.c -- a test sender: connect, send numbered messages, report
 *
 * send-seq --connect ADDR[:PORT] [--id N] [--count N] [--sizes LIST]
 *          [--pdata rpmafs|none|hex:HEX] [--window N] [--interval-us N]
 *          [--hold-ms N] [--quiet]
 *
 * Message seq (0, 1, ...) is sizes[seq % nsizes] bytes made by seq_fill()
 * (seq.h). Every send is signaled; at most --window are in flight (and no
 * more than the credits the receiver advertises). --pdata chooses the
 * connect private data: an rpmafs header (default), nothing, or any bytes.
 * --hold-ms keeps the connection open and idle after the last completion.
 *
 * Exit status: 0 all sent and completed; 1 error; 3 the receiver rejected
 * the connection; 4 the connection ended before every message completed.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <librpma.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pdata.h"
#include "seq.h"

#define EXIT_REJECTED 3
#define EXIT_CLOSED 4

struct sender {
	char addr[256];
	char port[8];
	uint32_t id;
	uint64_t count;
	size_t sizes[SEQ_MAX_SIZES];
	int nsizes;
	size_t max_size;
	uint8_t pdata[64];
	size_t pdata_len; /* 0: send no private data */
	unsigned window;
	unsigned interval_us;
	unsigned hold_ms;
	bool quiet;

	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *mr;
	uint8_t *buf;
	int cq_fd, ev_fd;
	uint64_t sent, completed, bytes;
};

static int die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "send-seq: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return -1;
}

static int parse_hex(const char *hex, uint8_t *out, size_t max, size_t *len)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

static int parse_args(int argc, char *argv[], struct sender *s)
{
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"id", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'n'},
		{"sizes", required_argument, NULL, 's'},
		{"pdata", required_argument, NULL, 'p'},
		{"window", required_argument, NULL, 'w'},
		{"interval-us", required_argument, NULL, 'I'},
		{"hold-ms", required_argument, NULL, 'H'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	const char *pdata = "rpmafs";
	char *colon;
	int opt;

	strcpy(s->port, "7204");
	s->count = 1;
	s->sizes[0] = 64;
	s->nsizes = 1;
	s->window = 16;
	while ((opt = getopt_long(argc, argv, "c:i:n:s:p:w:I:H:q", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			snprintf(s->addr, sizeof(s->addr), "%s", optarg);
			colon = strrchr(s->addr, ':');
			if (colon && strchr(s->addr, ':') == colon) {
				*colon = '\0';
				snprintf(s->port, sizeof(s->port), "%s", colon + 1);
			}
			break;
		case 'i':
			s->id = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			s->count = strtoull(optarg, NULL, 10);
			break;
		case 's':
			s->nsizes = seq_parse_sizes(optarg, s->sizes);
			if (s->nsizes <= 0)
				return die_usage("bad --sizes", optarg);
			break;
		case 'p':
			pdata = optarg;
			break;
		case 'w':
			s->window = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'I':
			s->interval_us = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'H':
			s->hold_ms = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'q':
			s->quiet = true;
			break;
		default:
			return -1;
		}
	}
	if (!s->addr[0])
		return die_usage("--connect ADDR[:PORT] is required", NULL);
	if (s->window == 0)
		return die_usage("--window must be at least 1", NULL);
	for (int i = 0; i < s->nsizes; i++)
		if (s->sizes[i] > s->max_size)
			s->max_size = s->sizes[i];

	if (strcmp(pdata, "none") == 0) {
		s->pdata_len = 0;
	} else if (strcmp(pdata, "rpmafs") == 0) {
		struct rpmafs_pdata pd = {.max_message = (uint32_t)(s->max_size ? s->max_size : 1)};

		s->pdata_len = rpmafs_pdata_encode(&pd, s->pdata);
	} else if (strncmp(pdata, "hex:", 4) == 0) {
		if (parse_hex(pdata + 4, s->pdata, sizeof(s->pdata), &s->pdata_len) ||
			s->pdata_len == 0)
			return die_usage("bad --pdata hex (1 to 64 bytes)", pdata);
	} else {
		return die_usage("--pdata is rpmafs, none or hex:HEX", pdata);
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* wait for the connection's next CM event, at most timeout_ms */
static int next_event(struct sender *s, int timeout_ms, enum rpma_conn_event *ev)
{
	struct pollfd p = {.fd = s->ev_fd, .events = POLLIN};

	if (poll(&p, 1, timeout_ms) <= 0)
		return -1;
	return rpma_conn_next_event(s->conn, ev) ? -1 : 0;
}

static int connect_to(struct sender *s)
{
	struct rpma_conn_private_data mine = {s->pdata, (uint8_t)s->pdata_len};
	struct rpma_conn_private_data theirs = {NULL, 0};
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct ibv_context *dev;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	struct rpmafs_pdata pd;
	const char *why;
	int ret;

	ret = rpma_utils_get_ibv_context(s->addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev);
	if (!ret)
		ret = rpma_peer_new(dev, &s->peer);
	if (!ret)
		ret = rpma_conn_cfg_new(&cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(cfg, s->window);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, s->window);
	if (!ret)
		ret = rpma_conn_req_new(s->peer, s->addr, s->port, cfg, &req);
	if (!ret)
		ret = rpma_conn_req_connect(&req, s->pdata_len ? &mine : NULL, &s->conn);
	if (cfg)
		(void)rpma_conn_cfg_delete(&cfg);
	if (ret) {
		fprintf(stderr, "send-seq %u: connecting to %s:%s: %s\n", s->id, s->addr, s->port,
			rpma_err_2str(ret));
		return 1;
	}
	(void)rpma_conn_get_event_fd(s->conn, &s->ev_fd);
	if (next_event(s, 10000, &ev) || ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "send-seq %u: connection to %s:%s not established (%s)\n", s->id,
			s->addr, s->port,
			ev == RPMA_CONN_UNDEFINED  ? "no event"
			: ev == RPMA_CONN_REJECTED ? "rejected"
						   : "closed or lost");
		return ev == RPMA_CONN_REJECTED ? EXIT_REJECTED : 1;
	}

	/* what the receiver advertised: respect it like rpmafs does */
	(void)rpma_conn_get_private_data(s->conn, &theirs);
	switch (rpmafs_pdata_parse(theirs.ptr, theirs.len, &pd, &why)) {
	case RPMAFS_PDATA_OK:
		if (s->max_size > pd.max_message) {
			fprintf(stderr, "send-seq %u: receiver takes at most %u bytes, not %zu\n",
				s->id, pd.max_message, s->max_size);
			return 1;
		}
		if (pd.credits && pd.credits < s->window)
			s->window = pd.credits;
		break;
	case RPMAFS_PDATA_NONE:
		break;
	default:
		fprintf(stderr, "send-seq %u: receiver's private data: %s\n", s->id, why);
		return 1;
	}

	(void)rpma_conn_get_cq(s->conn, &s->cq);
	(void)rpma_cq_get_fd(s->cq, &s->cq_fd);
	return 0;
}

/*
 * wait_completion -- take one batch of send completions, sleeping on the
 * completion channel (and watching the CM events: the receiver may go)
 */
static int wait_completion(struct sender *s)
{
	struct ibv_wc wc[16];
	int n, ret;

	for (;;) {
		ret = rpma_cq_get_wc(s->cq, 16, wc, &n);
		if (ret == 0) {
			for (int i = 0; i < n; i++) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					fprintf(stderr,
						"send-seq %u: message %" PRIu64 " failed: %s\n",
						s->id, (uint64_t)wc[i].wr_id,
						ibv_wc_status_str(wc[i].status));
					return EXIT_CLOSED;
				}
				s->completed++;
			}
			return 0;
		}
		if (ret != RPMA_E_NO_COMPLETION) {
			fprintf(stderr, "send-seq %u: rpma_cq_get_wc: %s\n", s->id,
				rpma_err_2str(ret));
			return 1;
		}

		struct pollfd p[2] = {
			{.fd = s->cq_fd, .events = POLLIN}, {.fd = s->ev_fd, .events = POLLIN}};

		if (poll(p, 2, 30000) <= 0) {
			fprintf(stderr, "send-seq %u: no completion in 30 s\n", s->id);
			return 1;
		}
		if (p[0].revents & POLLIN) {
			ret = rpma_cq_wait(s->cq); /* takes the event and re-arms the CQ */
			if (ret && ret != RPMA_E_NO_COMPLETION) {
				fprintf(stderr, "send-seq %u: rpma_cq_wait: %s\n", s->id,
					rpma_err_2str(ret));
				return 1;
			}
		} else if (p[1].revents & POLLIN) {
			fprintf(stderr,
				"send-seq %u: the receiver ended the connection after %" PRIu64
				" completed messages\n",
				s->id, s->completed);
			return EXIT_CLOSED;
		}
	}
}

static int send_all(struct sender *s)
{
	size_t slot_size = s->max_size ? s->max_size : 1;
	size_t size = slot_size * s->window;
	int ret;

	s->buf = malloc(size);
	if (!s->buf)
		return 1;
	ret = rpma_mr_reg(s->peer, s->buf, size, RPMA_MR_USAGE_SEND, &s->mr);
	if (ret) {
		fprintf(stderr, "send-seq %u: rpma_mr_reg %zu bytes: %s\n", s->id, size,
			rpma_err_2str(ret));
		return 1;
	}

	for (uint64_t seq = 0; seq < s->count; seq++) {
		size_t len = s->sizes[seq % (uint64_t)s->nsizes];
		size_t off = (size_t)(seq % s->window) * slot_size;

		while (s->sent - s->completed >= s->window)
			if ((ret = wait_completion(s)))
				return ret;

		/* the slot is free: its previous message has completed */
		seq_fill(s->buf + off, s->id, seq, len);
		if (len)
			ret = rpma_send(s->conn, s->mr, off, len, RPMA_F_COMPLETION_ALWAYS,
				(const void *)(uintptr_t)seq);
		else
			ret = rpma_send(s->conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS,
				(const void *)(uintptr_t)seq);
		if (ret) {
			fprintf(stderr, "send-seq %u: rpma_send message %" PRIu64 ": %s\n", s->id,
				seq, rpma_err_2str(ret));
			return EXIT_CLOSED;
		}
		s->sent++;
		s->bytes += len;
		if (s->interval_us)
			usleep(s->interval_us);
	}
	while (s->completed < s->sent)
		if ((ret = wait_completion(s)))
			return ret;
	return 0;
}

static void disconnect(struct sender *s)
{
	enum rpma_conn_event ev;

	if (!s->conn)
		return;
	if (rpma_conn_disconnect(s->conn) == 0)
		(void)next_event(s, 5000, &ev);
	(void)rpma_conn_delete(&s->conn);
}

int main(int argc, char *argv[])
{
	struct sender s = {0};
	double t0, t1;
	int ret;

	if (parse_args(argc, argv, &s))
		return 1;
	ret = connect_to(&s);
	if (ret) {
		if (s.conn)
			(void)rpma_conn_delete(&s.conn);
		goto out;
	}
	t0 = now_s();
	ret = send_all(&s);
	t1 = now_s();
	if (!s.quiet || ret)
		fprintf(stderr,
			"send-seq %u: %" PRIu64 " of %" PRIu64 " messages completed, %" PRIu64
			" bytes, %.3f s (%.0f msg/s)\n",
			s.id, s.completed, s.count, s.bytes, t1 - t0,
			t1 > t0 ? (double)s.completed / (t1 - t0) : 0.0);
	if (!ret && s.hold_ms)
		usleep(s.hold_ms * 1000u);
	disconnect(&s);
out:
	if (s.mr)
		(void)rpma_mr_dereg(&s.mr);
	free(s.buf);
	if (s.peer)
		(void)rpma_peer_delete(&s.peer);
	return ret;
}
