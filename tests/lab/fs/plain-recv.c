// SPDX-License-Identifier: BSD-3-Clause
/*
 * plain-recv.c -- a receiver that knows nothing of rpmafs
 *
 *   plain-recv ADDR PORT COUNT READY-FILE OUT-FILE [SLOT]
 *
 * Written against librpma's messaging API and built against Debian's
 * librpma: listens on ADDR:PORT, creates READY-FILE, accepts one connection
 * without private data of its own (as a plain librpma receiver does),
 * receives COUNT messages of up to SLOT bytes (default 64 KiB) and writes each one to OUT-FILE
 * as a 4-byte little-endian length and the payload, then waits for the
 * sender to disconnect. The file system's interop test drives it.
 */

#include <stdio.h>
#include <stdlib.h>

#include "lab.h"

#define DEFAULT_SLOT (64 * 1024)

int main(int argc, char **argv)
{
	struct lab_env env;
	struct rpma_conn_private_data pd;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_mr_local *mr;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	unsigned count;
	uint8_t *buf;
	FILE *out, *ready;
	size_t slot = DEFAULT_SLOT;
	double accepted;

	lab_env_get(&env);
	CHECK(argc == 6 || argc == 7,
		"usage: plain-recv ADDR PORT COUNT READY-FILE OUT-FILE [SLOT]");
	count = (unsigned)atoi(argv[3]);
	CHECK(count > 0 && count <= 256, "COUNT must be 1..256");
	if (argc == 7)
		slot = (size_t)atol(argv[6]);
	/* at most 64 MiB of receive buffers */
	CHECK(slot > 0 && slot <= (1u << 20) && count * slot <= (64u << 20),
		"SLOT must be 1..1048576 bytes, COUNT * SLOT at most 64 MiB");
	out = fopen(argv[5], "wb");
	CHECK(out != NULL, "cannot create %s", argv[5]);

	peer = lab_peer_new(argv[1], RPMA_UTIL_IBV_CONTEXT_LOCAL, NULL);
	mr = lab_mr_new(peer, (size_t)count * slot, RPMA_MR_USAGE_RECV, 0, &buf);
	ep = lab_listen(peer, argv[1], argv[2]);
	ready = fopen(argv[4], "w");
	CHECK(ready != NULL, "cannot create %s", argv[4]);
	fclose(ready);

	req = lab_next_req(ep, NULL, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_conn_req_get_private_data(req, &pd));
	printf("plain-recv: the sender's private data is %u bytes (not looked at)\n", pd.len);
	for (unsigned i = 0; i < count; i++)
		CHECK_RPMA(
			rpma_conn_req_recv(req, mr, (size_t)i * slot, slot, (void *)(uintptr_t)i));
	conn = lab_accept(&req);
	accepted = lab_now();

	for (unsigned i = 0; i < count; i++) {
		uint8_t len[4];

		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_RECV && wc.wr_id == i, "%s, expected message %u",
			lab_wc_str(&wc), i);
		for (int k = 0; k < 4; k++)
			len[k] = (uint8_t)(wc.byte_len >> (8 * k));
		CHECK(fwrite(len, 1, 4, out) == 4 &&
				fwrite(buf + (size_t)i * slot, 1, wc.byte_len, out) == wc.byte_len,
			"cannot write %s", argv[5]);
		fflush(out);
		/* when each came: a test that fails on a late message shows the gap */
		printf("plain-recv: message %u, %u bytes, %.3f s after the accept\n", i,
			wc.byte_len, lab_now() - accepted);
		fflush(stdout);
	}
	fclose(out);
	printf("plain-recv: %u messages\n", count);
	lab_closed(&conn, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_ep_shutdown(&ep));
	CHECK_RPMA(rpma_peer_delete(&peer));
	free(buf);
	return 0;
}
