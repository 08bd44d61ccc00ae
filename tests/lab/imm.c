// SPDX-License-Identifier: BSD-3-Clause
/*
 * imm.c -- rpma_send_with_imm delivers its immediate data
 *
 * Two sends with immediate data (one with a payload, one NULL/0/0) and a
 * plain send. The receiver sees IBV_WC_WITH_IMM on the first two, with the
 * value as sent (wc.imm_data is in network byte order, as verbs define
 * it), and not on the third.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"

#define PORT "7477"

static struct lab_env env;
static const uint32_t imms[] = {0xc0ffee01, 0x12345678};

static void receiver(void *arg)
{
	struct rpma_peer *peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_LOCAL, env.dev_b);
	struct rpma_ep *ep = lab_listen(peer, env.b, PORT);
	uint8_t *buf;
	struct rpma_mr_local *mr = lab_mr_new(peer, 3 * 64, RPMA_MR_USAGE_RECV, 0, &buf);
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct ibv_wc wc;

	(void)arg;
	lab_ready();
	req = lab_next_req(ep, NULL, LAB_SAFETY_MS);
	for (int i = 0; i < 3; i++)
		CHECK_RPMA(rpma_conn_req_recv(req, mr, (size_t)i * 64, 64, (void *)(uintptr_t)i));
	conn = lab_accept(&req);
	for (int i = 0; i < 2; i++) {
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_RECV, "%s, expected IBV_WC_RECV", lab_wc_str(&wc));
		CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "message %d: no IBV_WC_WITH_IMM", i);
		CHECK(ntohl(wc.imm_data) == imms[i], "message %d: imm_data 0x%08x, sent 0x%08x", i,
			ntohl(wc.imm_data), imms[i]);
		printf("receiver: message %d, %u bytes, immediate 0x%08x\n", i, wc.byte_len,
			ntohl(wc.imm_data));
	}
	CHECK(memcmp(buf, "hello", 5) == 0, "the payload of the first message is wrong");
	lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
	CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "a plain send arrived with IBV_WC_WITH_IMM");
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
	mr = lab_mr_new(peer, 64, RPMA_MR_USAGE_SEND, 0, &buf);
	memcpy(buf, "hello", 5);
	conn = lab_connect(peer, env.b, PORT, NULL);
	CHECK_RPMA(rpma_send_with_imm(conn, mr, 0, 5, RPMA_F_COMPLETION_ALWAYS, imms[0], NULL));
	CHECK_RPMA(rpma_send_with_imm(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, imms[1], NULL));
	CHECK_RPMA(rpma_send(conn, mr, 0, 5, RPMA_F_COMPLETION_ALWAYS, NULL));
	for (int i = 0; i < 3; i++) {
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.opcode == IBV_WC_SEND, "%s, expected IBV_WC_SEND", lab_wc_str(&wc));
	}
	lab_close(&conn);
	lab_reap(pid, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
