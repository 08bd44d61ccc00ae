// SPDX-License-Identifier: BSD-3-Clause
/*
 * send-auth.c -- a test sender for rpma-recv --keys (issue 25, common/auth.h):
 * honest, or hostile on request; built on the project's rpma
 *
 * send-auth --connect ADDR[:PORT] [--key FILE] [--count N] [--sizes LIST]
 *           [--marker TEXT] [--ack] [--encrypt] [--bad-at K] [--no-proof]
 *           [--capture FILE] [--replay FILE] [--expect FILE] [--quiet]
 *
 * With --key: a version 3 connect request (a fresh nonce), the receiver's
 * accept checked (rpmafs_auth_accept_check), the proof of key as the first
 * SEND, then COUNT messages sealed (payload + 16-byte tag). Without --key:
 * an rpmafs version 1 request, messages without a tag (an rpmafs without a
 * key). Message k (0, 1, ...) is sizes[k % n] bytes (0 allowed) of the
 * text "MARKER-k|" repeated.
 *
 *   --ack        F_ACK: numbered messages (immediate data, the last PROMPT),
 *                at most the receiver's credits past its last
 *                acknowledgement; every acknowledgement (32 bytes) checked
 *                with rpmafs_auth_open_ack; waits until the last is acknowledged
 *   --encrypt    asks for encrypt (and refuses an accept without it)
 *   --bad-at K   message K's tag has a flipped bit; all COUNT are sent, then
 *                the receiver must end the connection (exit 0 when it does)
 *   --no-proof   no proof of key: the messages (if any) are sent, then the
 *                receiver must end the connection (exit 0 when it does)
 *   --capture F  write the connect request's private data to F
 *   --replay F   send F's bytes as the connect request's private data (no
 *                key): a recorded connect replayed; accepted, a 16-byte
 *                "proof" of zeros is sent (not with --no-proof) and the end
 *                of the connection awaited (exit 6 when it ends)
 *   --expect F   write what rpma-recv --format len should write of the
 *                messages: those before K with --bad-at, all without
 *
 * Exit status: 0 done (all sent and completed, acknowledged with --ack; or
 * disconnected as expected); 1 error; 3 rejected at connect; 4 the
 * connection ended too early; 5 the receiver's accept failed its check
 * (why printed); 6 a replayed request was accepted, then dropped;
 * 7 a bad acknowledgement.
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

#include "ack.h"
#include "auth.h"
#include "pdata.h"

#define EXIT_REJECTED 3
#define EXIT_CLOSED 4
#define EXIT_ACCEPT_BAD 5
#define EXIT_REPLAY_DROPPED 6
#define EXIT_BAD_ACK 7
#define RECVS 32
#define WINDOW 32
#define RECV_TAG (1ull << 63)
#define SEALED_ACK (RPMAFS_ACK_LEN + RPMAFS_AUTH_TAG_BYTES)
#define MAX_SIZES 64
#define WAIT_MS 60000 /* a safety net: every wait ends at its event */

static struct rpma_conn *conn;
static struct rpma_cq *cq;
static struct rpma_mr_local *send_mr, *recv_mr;
static uint8_t *send_buf, *recv_buf;
static size_t slot_size;
static int cq_fd, ev_fd;
static uint32_t acked, credits, inflight;
static bool acked_any, closed, quiet;
static struct rpmafs_auth *auth;

static int die(const char *what, int ret)
{
	fprintf(stderr, "send-auth: %s: %s\n", what, rpma_err_2str(ret));
	return 1;
}

static void fill(uint8_t *buf, const char *marker, uint64_t k, size_t size)
{
	char unit[96];
	int n = snprintf(unit, sizeof(unit), "%s-%" PRIu64 "|", marker, k);

	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)unit[i % (size_t)n];
}

/* the connection's end: an event on its CM channel */
static bool ended(int timeout_ms)
{
	struct pollfd p = {.fd = ev_fd, .events = POLLIN};
	enum rpma_conn_event ev;

	if (closed)
		return true;
	if (poll(&p, 1, timeout_ms) <= 0)
		return false;
	if (rpma_conn_next_event(conn, &ev) == 0 && ev == RPMA_CONN_ESTABLISHED)
		return false;
	closed = true;
	return true;
}

/*
 * pump -- take completions (sleeping for them); tolerant: a failed
 * completion or the end of the connection is not an error (the caller
 * expects it). 0, or the exit status.
 */
static int pump(bool tolerant)
{
	struct ibv_wc wc[16];
	struct pollfd p[2];
	struct rpmafs_ack ack;
	const char *why;
	int n = 0, ret;

	for (;;) {
		ret = rpma_cq_get_wc(cq, 16, wc, &n);
		if (ret && ret != RPMA_E_NO_COMPLETION)
			return tolerant ? EXIT_CLOSED : die("rpma_cq_get_wc", ret);
		if (!ret)
			break;
		p[0] = (struct pollfd){.fd = cq_fd, .events = POLLIN};
		p[1] = (struct pollfd){.fd = ev_fd, .events = POLLIN};
		if (poll(p, 2, WAIT_MS) <= 0) {
			fprintf(stderr, "send-auth: nothing in %d ms\n", WAIT_MS);
			return 1;
		}
		if ((p[1].revents & POLLIN) && ended(0)) {
			if (!tolerant)
				fprintf(stderr, "send-auth: the receiver ended the connection\n");
			return EXIT_CLOSED;
		}
		ret = rpma_cq_wait(cq);
		if (ret && ret != RPMA_E_NO_COMPLETION)
			return die("rpma_cq_wait", ret);
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			if (!tolerant)
				fprintf(stderr, "send-auth: a completion failed: %s\n",
					ibv_wc_status_str(wc[i].status));
			return EXIT_CLOSED;
		}
		if (!(wc[i].wr_id & RECV_TAG)) {
			inflight--;
			continue;
		}
		size_t slot = (size_t)(wc[i].wr_id & ~RECV_TAG);
		uint8_t *b = recv_buf + slot * SEALED_ACK;

		if (auth && (wc[i].byte_len != SEALED_ACK ||
				    rpmafs_auth_open_ack(
					    auth, b, RPMAFS_ACK_LEN, b + RPMAFS_ACK_LEN))) {
			fprintf(stderr,
				"send-auth: acknowledgement refused: MAC (%" PRIu32 " bytes)\n",
				wc[i].byte_len);
			return EXIT_BAD_ACK;
		}
		if (rpmafs_ack_parse(b, auth ? RPMAFS_ACK_LEN : wc[i].byte_len, &ack, &why)) {
			fprintf(stderr, "send-auth: a bad acknowledgement: %s\n", why);
			return EXIT_BAD_ACK;
		}
		acked = ack.acked;
		acked_any = true;
		credits = ack.credits ? ack.credits : 1;
		ret = rpma_recv(conn, recv_mr, slot * SEALED_ACK, SEALED_ACK,
			(const void *)(uintptr_t)(RECV_TAG | slot));
		if (ret)
			return die("rpma_recv", ret);
	}
	return 0;
}

static int read_file(const char *path, uint8_t *buf, size_t size, size_t *len)
{
	FILE *f = fopen(path, "rb");

	if (!f) {
		fprintf(stderr, "send-auth: %s: %s\n", path, strerror(errno));
		return -1;
	}
	*len = fread(buf, 1, size, f);
	fclose(f);
	return 0;
}

static int write_file(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "send-auth: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

/* wait_end -- the receiver must end the connection: 0 when it does */
static int wait_end(int ok_status)
{
	if (!ended(WAIT_MS)) {
		fprintf(stderr, "send-auth: the receiver did not end the connection in %d ms\n",
			WAIT_MS);
		return 1;
	}
	if (!quiet)
		fprintf(stderr, "send-auth: the receiver ended the connection, as expected\n");
	return ok_status;
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"key", required_argument, NULL, 'k'},
		{"count", required_argument, NULL, 'n'},
		{"sizes", required_argument, NULL, 's'},
		{"marker", required_argument, NULL, 'm'},
		{"ack", no_argument, NULL, 'a'},
		{"encrypt", no_argument, NULL, 'e'},
		{"bad-at", required_argument, NULL, 'b'},
		{"no-proof", no_argument, NULL, 'P'},
		{"capture", required_argument, NULL, 'C'},
		{"replay", required_argument, NULL, 'R'},
		{"expect", required_argument, NULL, 'E'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	char addr[256] = "", port[8] = "7204", *colon, *tok, *save, err[512];
	const char *key_path = NULL, *marker = "RPMAFSMARK", *capture = NULL, *replay = NULL;
	const char *expect = NULL, *why;
	size_t sizes[MAX_SIZES] = {64}, max_size = 0, len;
	unsigned nsizes = 1;
	uint64_t count = 1, bad_at = UINT64_MAX, sent = 0;
	bool ack_mode = false, encrypt = false, proof = true;
	struct rpmafs_key *key = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct ibv_context *dev;
	uint8_t pdata[64] = {0};
	struct rpma_conn_private_data mine = {pdata, 0}, theirs = {NULL, 0};
	struct rpmafs_pdata pd;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	struct pollfd p;
	FILE *exp = NULL;
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
		case 'k':
			key_path = optarg;
			break;
		case 'n':
			count = strtoull(optarg, NULL, 10);
			break;
		case 's':
			nsizes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok && nsizes < MAX_SIZES;
				tok = strtok_r(NULL, ",", &save))
				sizes[nsizes++] = strtoull(tok, NULL, 10);
			break;
		case 'm':
			marker = optarg;
			break;
		case 'a':
			ack_mode = true;
			break;
		case 'e':
			encrypt = true;
			break;
		case 'b':
			bad_at = strtoull(optarg, NULL, 10);
			break;
		case 'P':
			proof = false;
			break;
		case 'C':
			capture = optarg;
			break;
		case 'R':
			replay = optarg;
			break;
		case 'E':
			expect = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			return 1;
		}
	}
	if (!addr[0] || !nsizes || (replay && key_path) || (encrypt && !key_path) ||
		(bad_at != UINT64_MAX && !key_path)) {
		fprintf(stderr, "send-auth: --connect is needed; --replay goes without --key; "
				"--encrypt and --bad-at need --key\n");
		return 1;
	}
	for (unsigned i = 0; i < nsizes; i++)
		if (sizes[i] > max_size)
			max_size = sizes[i];
	slot_size = max_size + RPMAFS_AUTH_TAG_BYTES;

	if (expect) {
		/* what rpma-recv --format len writes of what is to be delivered */
		uint8_t *m = malloc(max_size + 1), l[4];

		exp = fopen(expect, "wb");
		if (!m || !exp)
			return 1;
		for (uint64_t k = 0; k < count && k < bad_at; k++) {
			size_t size = sizes[k % nsizes];

			fill(m, marker, k, size);
			for (int i = 0; i < 4; i++)
				l[i] = (uint8_t)(size >> (8 * i));
			if (fwrite(l, 1, 4, exp) != 4 || fwrite(m, 1, size, exp) != size)
				return 1;
		}
		if (fclose(exp))
			return 1;
		free(m);
	}

	pd = (struct rpmafs_pdata){.max_message = (uint32_t)(max_size ? max_size : 1),
		.flags = ack_mode ? RPMAFS_PDATA_F_ACK : 0};
	if (key_path) {
		if (rpmafs_auth_init() || rpmafs_key_load(key_path, NULL, &key, err, sizeof(err))) {
			fprintf(stderr, "send-auth: %s\n", err);
			return 1;
		}
		mine.len = (uint8_t)rpmafs_auth_request_encode(key, &pd, encrypt, pdata);
	} else if (replay) {
		if (read_file(replay, pdata, sizeof(pdata), &len) || !len)
			return 1;
		mine.len = (uint8_t)len;
	} else {
		mine.len = (uint8_t)rpmafs_pdata_encode(&pd, pdata);
	}
	if (capture && write_file(capture, pdata, mine.len))
		return 1;

	send_buf = calloc(WINDOW, slot_size);
	recv_buf = calloc(RECVS, SEALED_ACK);
	if (!send_buf || !recv_buf)
		return 1;
	if ((ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev)) ||
		(ret = rpma_peer_new(dev, &peer)))
		return die("device", ret);
	if ((ret = rpma_mr_reg(peer, send_buf, slot_size * WINDOW, RPMA_MR_USAGE_SEND, &send_mr)) ||
		(ret = rpma_mr_reg(
			 peer, recv_buf, RECVS * SEALED_ACK, RPMA_MR_USAGE_RECV, &recv_mr)))
		return die("rpma_mr_reg", ret);
	if ((ret = rpma_conn_cfg_new(&cfg)) || (ret = rpma_conn_cfg_set_sq_size(cfg, WINDOW + 1)) ||
		(ret = rpma_conn_cfg_set_rq_size(cfg, RECVS)) ||
		(ret = rpma_conn_cfg_set_cq_size(cfg, WINDOW + 1 + RECVS)) ||
		(ret = rpma_conn_req_new(peer, addr, port, cfg, &req)))
		return die("connection request", ret);
	for (size_t i = 0; i < RECVS; i++)
		if ((ret = rpma_conn_req_recv(req, recv_mr, i * SEALED_ACK, SEALED_ACK,
			     (const void *)(uintptr_t)(RECV_TAG | i))))
			return die("rpma_conn_req_recv", ret);
	if ((ret = rpma_conn_req_connect(&req, &mine, &conn)))
		return die("rpma_conn_req_connect", ret);
	(void)rpma_conn_cfg_delete(&cfg);
	(void)rpma_conn_get_event_fd(conn, &ev_fd);
	p = (struct pollfd){.fd = ev_fd, .events = POLLIN};
	if (poll(&p, 1, WAIT_MS) <= 0 || rpma_conn_next_event(conn, &ev)) {
		fprintf(stderr, "send-auth: no answer to the connect\n");
		return 1;
	}
	if (ev == RPMA_CONN_REJECTED) {
		if (!quiet)
			fprintf(stderr, "send-auth: rejected\n");
		return EXIT_REJECTED;
	}
	if (ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "send-auth: not established (event %d)\n", (int)ev);
		return EXIT_CLOSED;
	}
	(void)rpma_conn_get_private_data(conn, &theirs);
	(void)rpma_conn_get_cq(conn, &cq);
	(void)rpma_cq_get_fd(cq, &cq_fd);

	if (replay) {
		/* a replayer holds no key: it cannot make the proof */
		fprintf(stderr, "send-auth: the replayed request was accepted\n");
		if (proof && (ret = rpma_send(conn, send_mr, 0, RPMAFS_AUTH_TAG_BYTES,
				      RPMA_F_COMPLETION_ALWAYS, NULL)))
			return die("rpma_send", ret);
		return wait_end(EXIT_REPLAY_DROPPED);
	}
	if (key && rpmafs_auth_accept_check(
			   key, pdata, theirs.ptr, theirs.len, encrypt, &auth, &why)) {
		fprintf(stderr, "send-auth: %s\n", why);
		return EXIT_ACCEPT_BAD;
	}
	if (rpmafs_pdata_parse(theirs.ptr, theirs.len, &pd, &why) != RPMAFS_PDATA_OK) {
		fprintf(stderr, "send-auth: the accept: %s\n", why);
		return 1;
	}
	if (ack_mode && !(pd.flags & RPMAFS_PDATA_F_ACK)) {
		fprintf(stderr, "send-auth: the receiver does not acknowledge\n");
		return 1;
	}
	credits = pd.credits;
	if (!quiet)
		fprintf(stderr, "send-auth: connected%s%s, credits %" PRIu32 "\n",
			auth ? ", key " : "", auth ? rpmafs_key_name(key) : "", credits);

	if (auth && proof) {
		rpmafs_auth_seal_proof(auth, send_buf);
		if ((ret = rpma_send(conn, send_mr, 0, RPMAFS_AUTH_TAG_BYTES,
			     RPMA_F_COMPLETION_ALWAYS, NULL)))
			return die("rpma_send (proof)", ret);
		inflight++;
	}

	/* hostile ends: everything is sent, then the receiver must end it */
	bool tolerant = bad_at != UINT64_MAX || !proof;

	for (; sent < count; sent++) {
		size_t size = sizes[sent % nsizes], off;
		uint32_t num = (uint32_t)((sent + 1) & RPMAFS_SEQ_MASK), imm = 0;
		uint32_t done = acked_any ? acked : 0;

		/* a free buffer (one is the proof's), within the credits */
		while (inflight >= WINDOW - 1 ||
			(ack_mode && sent - done >= (credits ? credits : 1)) ||
			(!ack_mode && credits && inflight >= credits)) {
			if ((ret = pump(tolerant)))
				return tolerant && ret == EXIT_CLOSED ? wait_end(0) : ret;
			done = acked_any ? acked : 0;
		}
		off = (size_t)((sent + 1) % WINDOW) * slot_size;
		fill(send_buf + off, marker, sent, size);
		if (ack_mode)
			imm = num | (sent + 1 == count ? RPMAFS_IMM_PROMPT : 0);
		if (auth) {
			rpmafs_auth_seal(auth, imm, send_buf + off, size, send_buf + off + size);
			if (sent == bad_at)
				send_buf[off + size] ^= 0x01; /* one bit of its tag */
			size += RPMAFS_AUTH_TAG_BYTES;
		}
		if (ack_mode)
			ret = rpma_send_with_imm(
				conn, send_mr, off, size, RPMA_F_COMPLETION_ALWAYS, imm, NULL);
		else
			ret = rpma_send(conn, send_mr, off, size, RPMA_F_COMPLETION_ALWAYS, NULL);
		if (ret) {
			if (tolerant)
				return wait_end(0);
			return die("rpma_send", ret);
		}
		inflight++;
	}
	if (tolerant)
		return wait_end(0);
	while (inflight || (ack_mode && count && (!acked_any || acked != (uint32_t)count)))
		if ((ret = pump(false)))
			return ret;
	if (!quiet)
		fprintf(stderr, "send-auth: %" PRIu64 " messages sent%s\n", count,
			ack_mode ? " and acknowledged" : "");
	if (rpma_conn_disconnect(conn) == 0)
		(void)ended(5000);
	(void)rpma_conn_delete(&conn);
	rpmafs_auth_delete(&auth);
	rpmafs_key_delete(&key);
	(void)rpma_mr_dereg(&send_mr);
	(void)rpma_mr_dereg(&recv_mr);
	(void)rpma_peer_delete(&peer);
	free(send_buf);
	free(recv_buf);
	return 0;
}
