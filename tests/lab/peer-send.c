// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer-send.c -- send the lab's message sequence to peer-recv
 *
 *   peer-send ADDR PORT           each message signaled, each completion checked
 *   peer-send ADDR PORT --fence   every message RPMA_F_COMPLETION_ON_ERROR, then a
 *                                 0-byte rpma_write (NULL/0/NULL/0/0) with
 *                                 RPMA_F_COMPLETION_ALWAYS as a fence: it must be
 *                                 the one completion, successful, and it means
 *                                 every send before it was delivered
 *
 * Built twice, against Debian's librpma and against the project's rpma.
 */

#include <stdio.h>
#include <string.h>

#include "lab.h"

#define FENCE ((void *)(uintptr_t)0xfe9ce)

int main(int argc, char **argv)
{
	struct lab_env env;
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	uint8_t *buf;
	int fence;
	size_t off;

	lab_env_get(&env);
	fence = argc == 4 && strcmp(argv[3], "--fence") == 0;
	CHECK(argc == 3 || fence, "usage: peer-send ADDR PORT [--fence]");
	peer = lab_peer_new(argv[1], RPMA_UTIL_IBV_CONTEXT_REMOTE, NULL);
	mr = lab_mr_new(peer, (size_t)LAB_SEQ_N * LAB_SEQ_MAX, RPMA_MR_USAGE_SEND, 0, &buf);
	conn = lab_connect(peer, argv[1], argv[2], NULL);

	for (size_t i = 0; i < LAB_SEQ_N; i++) {
		off = i * LAB_SEQ_MAX;
		lab_fill(buf + off, lab_seq_size[i], (unsigned)i);
		if (lab_seq_size[i] == 0 && i % 2 == 0)
			CHECK_RPMA(rpma_send(conn, NULL, 0, 0,
				fence ? RPMA_F_COMPLETION_ON_ERROR : RPMA_F_COMPLETION_ALWAYS,
				(void *)(uintptr_t)(i + 1)));
		else
			CHECK_RPMA(rpma_send(conn, mr, off, lab_seq_size[i],
				fence ? RPMA_F_COMPLETION_ON_ERROR : RPMA_F_COMPLETION_ALWAYS,
				(void *)(uintptr_t)(i + 1)));
		if (fence)
			continue;
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_SEND && wc.wr_id == i + 1,
			"%s, expected the send of message %zu", lab_wc_str(&wc), i);
	}
	if (fence) {
		CHECK_RPMA(rpma_write(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, FENCE));
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.wr_id == (uintptr_t)FENCE && wc.opcode == IBV_WC_RDMA_WRITE,
			"%s, expected the 0-byte write's IBV_WC_RDMA_WRITE", lab_wc_str(&wc));
		printf("peer-send: %d unsignaled sends, then the 0-byte write: %s\n", LAB_SEQ_N,
			lab_wc_str(&wc));
		lab_expect_no_more_wc(conn, "after the unsignaled sends and their fence");
	} else {
		printf("peer-send: %d messages sent\n", LAB_SEQ_N);
	}
	lab_close(&conn);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
