// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer-recv.c -- receive the lab's message sequence from one sender
 *
 *   peer-recv ADDR PORT READY-FILE
 *
 * Listens on ADDR:PORT, creates READY-FILE, accepts one connection with a
 * receive posted for each message of the sequence (lab_seq_size), checks
 * every message byte for byte and waits for the sender to disconnect.
 * Built twice, against Debian's librpma and against the project's rpma,
 * to show that each interoperates with the other (see pair.sh).
 */

#include <stdio.h>
#include <stdlib.h>

#include "lab.h"

int main(int argc, char **argv)
{
	struct lab_env env;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_mr_local *mr;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	uint8_t *buf;
	char what[64];
	FILE *ready;

	lab_env_get(&env);
	CHECK(argc == 4, "usage: peer-recv ADDR PORT READY-FILE");
	peer = lab_peer_new(argv[1], RPMA_UTIL_IBV_CONTEXT_LOCAL, NULL);
	mr = lab_mr_new(peer, (size_t)LAB_SEQ_N * LAB_SEQ_MAX, RPMA_MR_USAGE_RECV, 0xee, &buf);
	ep = lab_listen(peer, argv[1], argv[2]);
	ready = fopen(argv[3], "w");
	CHECK(ready != NULL, "cannot create %s", argv[3]);
	fclose(ready);

	req = lab_next_req(ep, NULL, LAB_SAFETY_MS);
	for (size_t i = 0; i < LAB_SEQ_N; i++)
		CHECK_RPMA(rpma_conn_req_recv(
			req, mr, i * LAB_SEQ_MAX, LAB_SEQ_MAX, (void *)(uintptr_t)i));
	conn = lab_accept(&req);
	for (size_t i = 0; i < LAB_SEQ_N; i++) {
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_RECV && wc.wr_id == i,
			"%s, expected IBV_WC_RECV of message %zu", lab_wc_str(&wc), i);
		CHECK(wc.byte_len == lab_seq_size[i], "message %zu: %u bytes, sent %zu", i,
			wc.byte_len, lab_seq_size[i]);
		snprintf(what, sizeof(what), "message %zu", i);
		lab_verify(buf + i * LAB_SEQ_MAX, lab_seq_size[i], (unsigned)i, what);
		CHECK(lab_seq_size[i] == LAB_SEQ_MAX ||
				buf[i * LAB_SEQ_MAX + lab_seq_size[i]] == 0xee,
			"message %zu: written past its end", i);
	}
	printf("peer-recv: %d messages ok\n", LAB_SEQ_N);
	lab_closed(&conn, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_ep_shutdown(&ep));
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
