// SPDX-License-Identifier: BSD-3-Clause
/*
 * send-session.c -- a test sender with a session: receiver confirmation
 * (common/ack.h) and a version 2 connect header (common/pdata.h), as
 * rpmafs sends; for rpma-recv's exactly-once tests
 *
 * send-session --connect ADDR[:PORT] --session HEX [--first N] [--count N]
 *              [--id N] [--size N] [--no-wait]
 *
 * Sends the messages numbered FIRST .. FIRST+COUNT-1 (the immediate data;
 * the last one PROMPT), message n being seq_fill(id, n - 1, size) (seq.h),
 * at most the receiver's credits past its last acknowledgement, and waits
 * until the last is acknowledged. A re-send is the same numbers again.
 * --no-wait: leaves once the sends completed, acknowledged or not (a
 * sender whose connection is lost before the receiver confirms).
 *
 * Exit status: 0 all acknowledged (--no-wait: all sent); 1 error; 4 the
 * connection ended first ("acknowledged through N" says how far it got).
 */

#include <getopt.h>
#include <inttypes.h>
#include <librpma.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ack.h"
#include "pdata.h"
#include "seq.h"

#define EXIT_CLOSED 4
#define RECVS 32
#define WINDOW 32
#define RECV_TAG (1ull << 63)

static struct rpma_conn *conn;
static struct rpma_cq *cq;
static struct rpma_mr_local *send_mr, *recv_mr;
static uint8_t *send_buf, *recv_buf;
static int cq_fd, ev_fd;
static uint32_t acked, credits = 1, inflight;
static bool acked_any;

static int die(const char *what, int ret)
{
	fprintf(stderr, "send-session: %s: %s\n", what, rpma_err_2str(ret));
	return 1;
}

/* take completions (sleeping for them): sends done, acknowledgements in */
static int pump(void)
{
	struct ibv_wc wc[16];
	struct pollfd p[2] = {{.fd = 0, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
	const char *why;
	int n, ret;

	for (;;) {
		ret = rpma_cq_get_wc(cq, 16, wc, &n);
		if (ret && ret != RPMA_E_NO_COMPLETION)
			return die("rpma_cq_get_wc", ret);
		if (!ret)
			break;
		p[0].fd = cq_fd;
		p[1].fd = ev_fd;
		if (poll(p, 2, 30000) <= 0) {
			fprintf(stderr, "send-session: nothing in 30 s\n");
			return 1;
		}
		if (p[1].revents & POLLIN) {
			fprintf(stderr, "send-session: the receiver ended the connection\n");
			return EXIT_CLOSED;
		}
		ret = rpma_cq_wait(cq);
		if (ret && ret != RPMA_E_NO_COMPLETION)
			return die("rpma_cq_wait", ret);
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "send-session: a completion failed: %s\n",
				ibv_wc_status_str(wc[i].status));
			return EXIT_CLOSED;
		}
		if (!(wc[i].wr_id & RECV_TAG)) {
			inflight--;
			continue;
		}
		size_t slot = (size_t)(wc[i].wr_id & ~RECV_TAG);
		struct rpmafs_ack ack;

		if (rpmafs_ack_parse(
			    recv_buf + slot * RPMAFS_ACK_LEN, wc[i].byte_len, &ack, &why)) {
			fprintf(stderr, "send-session: a bad acknowledgement: %s\n", why);
			return 1;
		}
		acked = ack.acked;
		acked_any = true;
		credits = ack.credits ? ack.credits : 1;
		ret = rpma_recv(conn, recv_mr, slot * RPMAFS_ACK_LEN, RPMAFS_ACK_LEN,
			(const void *)(uintptr_t)(RECV_TAG | slot));
		if (ret)
			return die("rpma_recv", ret);
	}
	return 0;
}

/* a failed run: what was acknowledged, for a re-send after it */
static int report(int ret)
{
	if (acked_any)
		fprintf(stderr, "send-session: acknowledged through %" PRIu32 "\n", acked);
	else
		fprintf(stderr, "send-session: nothing acknowledged\n");
	return ret;
}

/* numbers acknowledged of first .. sent on this connection */
static uint32_t done_of(uint32_t first)
{
	return acked_any && !rpmafs_seq_after(first, acked) ? acked - first + 1 : 0;
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"session", required_argument, NULL, 'S'},
		{"first", required_argument, NULL, 'f'},
		{"count", required_argument, NULL, 'n'},
		{"id", required_argument, NULL, 'i'},
		{"size", required_argument, NULL, 's'},
		{"no-wait", no_argument, NULL, 'W'},
		{NULL, 0, NULL, 0},
	};
	char addr[256] = "", port[8] = "7204", *colon;
	uint64_t session = 0;
	uint32_t first = 1, count = 1, id = 0, size = 64, sent = 0;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct ibv_context *dev;
	uint8_t pdata[RPMAFS_PDATA_MAX_LEN];
	struct rpma_conn_private_data mine = {pdata, 0}, theirs = {NULL, 0};
	struct rpmafs_pdata pd;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	struct pollfd p;
	bool no_wait = false;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			snprintf(addr, sizeof(addr), "%s", optarg);
			colon = strrchr(addr, ':');
			if (colon && strchr(addr, ':') == colon) {
				*colon = '\0';
				snprintf(port, sizeof(port), "%s", colon + 1);
			}
			break;
		case 'S':
			session = strtoull(optarg, NULL, 16);
			break;
		case 'f':
			first = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			count = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'i':
			id = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 's':
			size = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'W':
			no_wait = true;
			break;
		default:
			return 1;
		}
	}
	if (!addr[0] || !session || !first || !count || size < SEQ_HDR_LEN) {
		fprintf(stderr, "send-session: --connect, --session (non-zero), --first, "
				"--count and --size >= 16 are needed\n");
		return 1;
	}
	mine.len = (uint8_t)rpmafs_pdata_encode(
		&(struct rpmafs_pdata){
			.max_message = size, .flags = RPMAFS_PDATA_F_ACK, .session = session},
		pdata);

	send_buf = malloc((size_t)size * WINDOW);
	recv_buf = calloc(RECVS, RPMAFS_ACK_LEN);
	if (!send_buf || !recv_buf)
		return 1;
	if ((ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev)) ||
		(ret = rpma_peer_new(dev, &peer)))
		return die("device", ret);
	if ((ret = rpma_mr_reg(
		     peer, send_buf, (size_t)size * WINDOW, RPMA_MR_USAGE_SEND, &send_mr)) ||
		(ret = rpma_mr_reg(
			 peer, recv_buf, RECVS * RPMAFS_ACK_LEN, RPMA_MR_USAGE_RECV, &recv_mr)))
		return die("rpma_mr_reg", ret);
	if ((ret = rpma_conn_cfg_new(&cfg)) || (ret = rpma_conn_cfg_set_sq_size(cfg, WINDOW)) ||
		(ret = rpma_conn_cfg_set_rq_size(cfg, RECVS)) ||
		(ret = rpma_conn_cfg_set_cq_size(cfg, WINDOW + RECVS)) ||
		(ret = rpma_conn_req_new(peer, addr, port, cfg, &req)))
		return die("connection request", ret);
	for (size_t i = 0; i < RECVS; i++)
		if ((ret = rpma_conn_req_recv(req, recv_mr, i * RPMAFS_ACK_LEN, RPMAFS_ACK_LEN,
			     (const void *)(uintptr_t)(RECV_TAG | i))))
			return die("rpma_conn_req_recv", ret);
	if ((ret = rpma_conn_req_connect(&req, &mine, &conn)))
		return die("rpma_conn_req_connect", ret);
	(void)rpma_conn_cfg_delete(&cfg);
	(void)rpma_conn_get_event_fd(conn, &ev_fd);
	p = (struct pollfd){.fd = ev_fd, .events = POLLIN};
	if (poll(&p, 1, 10000) <= 0 || rpma_conn_next_event(conn, &ev) ||
		ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "send-session: not established\n");
		return EXIT_CLOSED;
	}
	(void)rpma_conn_get_private_data(conn, &theirs);
	if (rpmafs_pdata_parse(theirs.ptr, theirs.len, &pd, NULL) != RPMAFS_PDATA_OK ||
		!(pd.flags & RPMAFS_PDATA_F_ACK)) {
		fprintf(stderr, "send-session: the receiver does not acknowledge\n");
		return 1;
	}
	credits = pd.credits ? pd.credits : 1;
	(void)rpma_conn_get_cq(conn, &cq);
	(void)rpma_cq_get_fd(cq, &cq_fd);

	while (sent < count) {
		uint32_t n = first + sent, imm = n & RPMAFS_SEQ_MASK;
		size_t off = (size_t)(sent % WINDOW) * size;

		/* within the credits past the last acknowledgement, and a free buffer */
		while (sent - done_of(first) >= credits || inflight >= WINDOW)
			if ((ret = pump()))
				return report(ret);
		if (sent + 1 == count)
			imm |= RPMAFS_IMM_PROMPT;
		seq_fill(send_buf + off, id, n - 1, size);
		ret = rpma_send_with_imm(conn, send_mr, off, size, RPMA_F_COMPLETION_ALWAYS, imm,
			(const void *)(uintptr_t)n);
		if (ret)
			return report(die("rpma_send_with_imm", ret));
		inflight++;
		sent++;
	}
	while ((!no_wait && done_of(first) < count) || inflight)
		if ((ret = pump()))
			return report(ret);
	fprintf(stderr, "send-session: %" PRIu32 " .. %" PRIu32 " %s\n", first, first + count - 1,
		no_wait ? "sent" : "acknowledged");
	if (rpma_conn_disconnect(conn) == 0) {
		p = (struct pollfd){.fd = ev_fd, .events = POLLIN};
		if (poll(&p, 1, 5000) > 0)
			(void)rpma_conn_next_event(conn, &ev);
	}
	(void)rpma_conn_delete(&conn);
	(void)rpma_mr_dereg(&send_mr);
	(void)rpma_mr_dereg(&recv_mr);
	(void)rpma_peer_delete(&peer);
	free(send_buf);
	free(recv_buf);
	return 0;
}
