// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq-send.c -- a plain sender for the SRQ lab tests: connects to addr:port, sends <msgs>
 * messages (srq-msg.h) keeping up to <window> sends in flight, then one 0-byte message; every
 * send signaled and checked successful; then waits for the receiver to close. A receiver out
 * of receives makes the sends wait ("receiver not ready", retried without limit): they still
 * all complete. Built against both the project's rpma and Debian's librpma.
 */
#include <inttypes.h>
#include <librpma.h>
#include <stdlib.h>
#include <stdio.h>

#include "common-conn.h"
#include "srq-msg.h"

#define WINDOW_MAX 8

static int reap(struct rpma_cq *cq, int *in_flight)
{
	struct ibv_wc wc[WINDOW_MAX];
	int num_got = 0;
	int ret = rpma_cq_get_wc(cq, WINDOW_MAX, wc, &num_got);
	if (ret == RPMA_E_NO_COMPLETION) {
		if ((ret = rpma_cq_wait(cq)))
			return ret;
		return 0;
	}
	if (ret)
		return ret;
	for (int i = 0; i < num_got; i++) {
		if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_SEND) {
			fprintf(stderr, "send %" PRIu64 ": %s (opcode %d)\n", wc[i].wr_id,
				ibv_wc_status_str(wc[i].status), (int)wc[i].opcode);
			return -1;
		}
	}
	*in_flight -= num_got;
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s <addr> <port> <msgs> <window>\n", argv[0]);
		return 2;
	}
	char *addr = argv[1];
	char *port = argv[2];
	uint32_t msgs = (uint32_t)strtoul_noerror(argv[3]);
	int window = (int)strtoul_noerror(argv[4]);
	if (window < 1 || window > WINDOW_MAX) {
		fprintf(stderr, "window: 1 to %d\n", WINDOW_MAX);
		return 2;
	}

	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *cq = NULL;
	uint8_t *buf = malloc_aligned((size_t)WINDOW_MAX * SRQ_MSG_MAX);
	int ret, in_flight = 0;
	if (buf == NULL)
		return 1;

	if ((ret = client_peer_via_address(addr, &peer)))
		goto out_free;
	if ((ret = rpma_mr_reg(
		     peer, buf, (size_t)WINDOW_MAX * SRQ_MSG_MAX, RPMA_MR_USAGE_SEND, &mr)))
		goto out_peer;
	if ((ret = client_connect(peer, addr, port, NULL, NULL, &conn)))
		goto out_mr;
	if ((ret = rpma_conn_get_cq(conn, &cq)))
		goto out_conn;

	/* message seq uses slot seq % window, free again once in_flight drops below window */
	for (uint32_t seq = 0; seq <= msgs && ret == 0; seq++) {
		while (in_flight == window && ret == 0)
			ret = reap(cq, &in_flight);
		if (ret)
			break;
		size_t slot = (size_t)(seq % (uint32_t)window) * SRQ_MSG_MAX;
		if (seq < msgs) {
			srq_msg_fill(buf + slot, seq);
			ret = rpma_send(conn, mr, slot, srq_msg_len(seq), RPMA_F_COMPLETION_ALWAYS,
				(void *)(uintptr_t)seq);
		} else {
			/* the end: a 0-byte message */
			ret = rpma_send(
				conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)seq);
		}
		if (ret)
			fprintf(stderr, "rpma_send(%" PRIu32 "): %s\n", seq, rpma_err_2str(ret));
		else
			in_flight++;
	}
	while (in_flight > 0 && ret == 0)
		ret = reap(cq, &in_flight);

	if (ret == 0)
		printf("sent %" PRIu32 " messages and one of 0 bytes, all completed\n", msgs);
	fflush(stdout);

out_conn:
	ret |= common_wait_for_conn_close_and_disconnect(&conn);
out_mr:
	ret |= rpma_mr_dereg(&mr);
out_peer:
	ret |= rpma_peer_delete(&peer);
out_free:
	free(buf);
	return ret ? 1 : 0;
}
