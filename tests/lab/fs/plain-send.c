// SPDX-License-Identifier: BSD-3-Clause
/*
 * plain-send.c -- a sender that knows nothing of rpmafs, for the inbox
 *
 *   plain-send [--pdata HEX] [--size N] [--idle] ADDR PORT [MSG...]
 *
 * Written against librpma's messaging API and built against Debian's
 * librpma. Connects to ADDR:PORT (with HEX as the connect private data
 * when --pdata is given, else none), then sends each MSG as one message
 * (an empty argument is a 0-byte message), then one of N bytes of 'x' with
 * --size; each send signaled and its completion waited for. With --idle it
 * says "plain-send: connected" and holds the connection until stdin ends.
 * Prints "plain-send: N sent, last completion at T" (T: CLOCK_MONOTONIC in
 * seconds, the clock Python's time.monotonic() reads). Exit 0; 3 when the
 * connection was not established (rejected); 4 when a send failed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab.h"

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned v;

	while (hex[0] && hex[1] && n < cap && sscanf(hex, "%2x", &v) == 1) {
		out[n++] = (uint8_t)v;
		hex += 2;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct rpma_conn_private_data pd = {NULL, 0};
	struct lab_env env;
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	struct ibv_wc wc;
	uint8_t pdata[56];
	size_t size = 0, cap = 1;
	int idle = 0, i = 1, sent = 0;
	double last = 0;
	uint8_t *buf;

	lab_env_get(&env);
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--idle") == 0) {
			idle = 1;
		} else if (strcmp(argv[i], "--pdata") == 0 && i + 1 < argc) {
			pd.len = (uint8_t)unhex(argv[++i], pdata, sizeof(pdata));
			pd.ptr = pdata;
		} else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
			size = strtoul(argv[++i], NULL, 0);
		} else {
			CHECK(0, "usage: plain-send [--pdata HEX] [--size N] [--idle] ADDR PORT [MSG...]");
		}
	}
	CHECK(argc - i >= 2, "usage: plain-send [--pdata HEX] [--size N] [--idle] ADDR PORT [MSG...]");
	for (int k = i + 2; k < argc; k++)
		if (strlen(argv[k]) > cap)
			cap = strlen(argv[k]);
	if (size > cap)
		cap = size;
	peer = lab_peer_new(argv[i], RPMA_UTIL_IBV_CONTEXT_REMOTE, NULL);
	mr = lab_mr_new(peer, cap, RPMA_MR_USAGE_SEND, 'x', &buf);
	CHECK_RPMA(rpma_conn_req_new(peer, argv[i], argv[i + 1], NULL, &req));
	CHECK_RPMA(rpma_conn_req_connect(&req, pd.len ? &pd : NULL, &conn));
	if (lab_next_event(conn, &ev, LAB_SAFETY_MS) || ev != RPMA_CONN_ESTABLISHED) {
		printf("plain-send: not established (event %d)\n", (int)ev);
		return 3;
	}
	if (idle) {
		char c;

		printf("plain-send: connected\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	for (int k = i + 2; k <= argc; k++) {
		size_t len;

		if (k == argc) {
			if (!size)
				break;
			memset(buf, 'x', size);
			len = size;
		} else {
			len = strlen(argv[k]);
			memcpy(buf, argv[k], len);
		}
		CHECK_RPMA(rpma_send(conn, len ? mr : NULL, 0, len, RPMA_F_COMPLETION_ALWAYS,
			(void *)(uintptr_t)(k + 1)));
		CHECK(lab_next_wc(conn, &wc, LAB_SAFETY_MS) == 0, "no completion for message %d",
			sent);
		if (wc.status != IBV_WC_SUCCESS) {
			printf("plain-send: message %d failed: %s\n", sent, lab_wc_str(&wc));
			return 4;
		}
		last = lab_now();
		sent++;
	}
	printf("plain-send: %d sent, last completion at %.6f\n", sent, last);
	fflush(stdout);
	lab_close(&conn);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
