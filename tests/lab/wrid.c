// SPDX-License-Identifier: BSD-3-Clause
/*
 * wrid.c -- op_context comes back as wc.wr_id, on both sides
 *
 * Eight sends and eight receives, each with its own op_context: pointers
 * into an array and values with the high bits set. Every completion must
 * carry its operation's op_context, unchanged, in wc.wr_id (completions of
 * one queue arrive in posting order).
 */

#include <stdio.h>

#include "lab.h"

#define PORT "7474"
#define N 8

static struct lab_env env;
static int slots[N];

/* op_context of message i: even ones point into slots[], odd ones are big numbers */
static void *ctx_of(int side, int i)
{
	if (i % 2 == 0)
		return &slots[i];
	return (void *)(uintptr_t)(0xfedcba9800000000ull | (uint64_t)side << 16 | (uint64_t)i);
}

static void receiver(void *arg)
{
	struct rpma_peer *peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_LOCAL, env.dev_b);
	struct rpma_ep *ep = lab_listen(peer, env.b, PORT);
	uint8_t *buf;
	struct rpma_mr_local *mr = lab_mr_new(peer, N * 64, RPMA_MR_USAGE_RECV, 0, &buf);
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct ibv_wc wc;

	(void)arg;
	lab_ready();
	req = lab_next_req(ep, NULL, LAB_SAFETY_MS);
	for (int i = 0; i < N; i++)
		CHECK_RPMA(rpma_conn_req_recv(req, mr, (size_t)i * 64, 64, ctx_of(1, i)));
	conn = lab_accept(&req);
	for (int i = 0; i < N; i++) {
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.wr_id == (uintptr_t)ctx_of(1, i), "%s, expected wr_id %p", lab_wc_str(&wc),
			ctx_of(1, i));
		CHECK(buf[i * 64] == i, "receive %d holds message %d", i, buf[i * 64]);
	}
	printf("receiver: %d receive completions, each with its op_context\n", N);
	lab_closed(&conn, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_ep_shutdown(&ep));
	CHECK_RPMA(rpma_peer_delete(&peer));
}

int main(void)
{
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	uint8_t *buf;
	pid_t pid;

	lab_env_get(&env);
	pid = lab_fork(receiver, NULL);
	peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_REMOTE, env.dev_a);
	mr = lab_mr_new(peer, N * 64, RPMA_MR_USAGE_SEND, 0, &buf);
	conn = lab_connect(peer, env.b, PORT, NULL);
	for (int i = 0; i < N; i++) {
		buf[i * 64] = (uint8_t)i;
		CHECK_RPMA(rpma_send(
			conn, mr, (size_t)i * 64, 1, RPMA_F_COMPLETION_ALWAYS, ctx_of(0, i)));
	}
	for (int i = 0; i < N; i++) {
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_SEND, "%s, expected IBV_WC_SEND", lab_wc_str(&wc));
		CHECK(wc.wr_id == (uintptr_t)ctx_of(0, i), "%s, expected wr_id %p", lab_wc_str(&wc),
			ctx_of(0, i));
	}
	printf("sender: %d send completions, each with its op_context\n", N);
	lab_close(&conn);
	lab_reap(pid, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
