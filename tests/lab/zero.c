// SPDX-License-Identifier: BSD-3-Clause
/*
 * zero.c -- a NULL/0/0 rpma_send is a 0-byte message
 *
 * rpma_send(conn, NULL, 0, 0, ...) posts a send with no scatter-gather
 * entry. It must complete at the sender as IBV_WC_SEND and arrive as an
 * IBV_WC_RECV with byte_len 0 that leaves the receive buffer untouched;
 * a receive posted the same way (rpma_recv(conn, NULL, 0, 0, ...)) takes
 * one too.
 */

#include <stdio.h>

#include "lab.h"

#define PORT "7473"

static struct lab_env env;

static void receiver(void *arg)
{
	struct rpma_peer *peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_LOCAL, env.dev_b);
	struct rpma_ep *ep = lab_listen(peer, env.b, PORT);
	uint8_t *buf;
	struct rpma_mr_local *mr = lab_mr_new(peer, 4096, RPMA_MR_USAGE_RECV, 0xee, &buf);
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct ibv_wc wc;

	(void)arg;
	lab_ready();
	req = lab_next_req(ep, NULL, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_conn_req_recv(req, mr, 0, 4096, (void *)1));
	conn = lab_accept(&req);
	CHECK_RPMA(rpma_recv(conn, NULL, 0, 0, (void *)2));

	lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
	CHECK(wc.opcode == IBV_WC_RECV, "%s, expected IBV_WC_RECV", lab_wc_str(&wc));
	CHECK(wc.byte_len == 0, "%s, expected byte_len 0", lab_wc_str(&wc));
	CHECK(wc.wr_id == 1, "%s, expected wr_id 1", lab_wc_str(&wc));
	for (size_t i = 0; i < 4096; i++)
		CHECK(buf[i] == 0xee, "a 0-byte message changed byte %zu of the buffer", i);
	printf("receiver: %s\n", lab_wc_str(&wc));

	lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
	CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == 0 && wc.wr_id == 2,
		"%s, expected IBV_WC_RECV of 0 bytes, wr_id 2", lab_wc_str(&wc));
	printf("receiver: %s (NULL receive)\n", lab_wc_str(&wc));

	lab_closed(&conn, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_ep_shutdown(&ep));
	CHECK_RPMA(rpma_peer_delete(&peer));
}

int main(void)
{
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	pid_t pid;

	lab_env_get(&env);
	pid = lab_fork(receiver, NULL);
	peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_REMOTE, env.dev_a);
	conn = lab_connect(peer, env.b, PORT, NULL);

	for (uintptr_t i = 1; i <= 2; i++) {
		CHECK_RPMA(rpma_send(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, (void *)(10 + i)));
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_SEND && wc.wr_id == 10 + i,
			"%s, expected IBV_WC_SEND, wr_id %lu", lab_wc_str(&wc),
			(unsigned long)(10 + i));
		printf("sender: %s\n", lab_wc_str(&wc));
	}
	lab_close(&conn);
	lab_reap(pid, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
