// SPDX-License-Identifier: BSD-3-Clause
/*
 * sizes.c -- messages of 0 B, 1 B, 4 KiB and 1 MiB arrive whole
 *
 * The receiver posts one receive per message, each into its own 1 MiB
 * region filled with 0xee, before it accepts. The sender sends each
 * message from registered memory (the 0 B one as offset 0, length 0 of a
 * region) and waits for its completion. The receiver checks every byte,
 * and that the byte after the message was not touched.
 */

#include <stdio.h>

#include "lab.h"

#define PORT "7472"
#define SLOT (1 << 20)

static const size_t sizes[] = {0, 1, 4096, 1 << 20};
#define N (sizeof(sizes) / sizeof(sizes[0]))

static struct lab_env env;

static void receiver(void *arg)
{
	struct rpma_peer *peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_LOCAL, env.dev_b);
	struct rpma_ep *ep = lab_listen(peer, env.b, PORT);
	/* one slot more than needed, so that "the byte after" always exists */
	uint8_t *buf;
	struct rpma_mr_local *mr = lab_mr_new(peer, (N + 1) * SLOT, RPMA_MR_USAGE_RECV, 0xee, &buf);
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	char what[64];

	(void)arg;
	lab_ready();
	req = lab_next_req(ep, NULL, LAB_SAFETY_MS);
	for (size_t i = 0; i < N; i++)
		CHECK_RPMA(rpma_conn_req_recv(req, mr, i * SLOT, SLOT, (void *)(uintptr_t)(i + 1)));
	conn = lab_accept(&req);

	for (size_t i = 0; i < N; i++) {
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_RECV, "%s, expected IBV_WC_RECV", lab_wc_str(&wc));
		CHECK(wc.wr_id == i + 1, "%s, expected wr_id %zu", lab_wc_str(&wc), i + 1);
		CHECK(wc.byte_len == sizes[i], "%s, expected %zu bytes", lab_wc_str(&wc), sizes[i]);
		snprintf(what, sizeof(what), "message %zu (%zu B)", i, sizes[i]);
		lab_verify(buf + i * SLOT, sizes[i], (unsigned)i, what);
		CHECK(buf[i * SLOT + sizes[i]] == 0xee, "%s: written past its end", what);
		printf("receiver: %s ok\n", what);
	}
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
	mr = lab_mr_new(peer, N * SLOT, RPMA_MR_USAGE_SEND, 0, &buf);
	conn = lab_connect(peer, env.b, PORT, NULL);

	for (size_t i = 0; i < N; i++) {
		lab_fill(buf + i * SLOT, sizes[i], (unsigned)i);
		CHECK_RPMA(rpma_send(conn, mr, i * SLOT, sizes[i], RPMA_F_COMPLETION_ALWAYS,
			(void *)(uintptr_t)(100 + i)));
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_SEND, "%s, expected IBV_WC_SEND", lab_wc_str(&wc));
		CHECK(wc.wr_id == 100 + i, "%s, expected wr_id %zu", lab_wc_str(&wc), 100 + i);
	}
	printf("sender: %zu messages sent\n", N);
	lab_close(&conn);
	lab_reap(pid, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
