// SPDX-License-Identifier: BSD-3-Clause
/*
 * on_error.c -- RPMA_F_COMPLETION_ON_ERROR sends complete silently
 *
 * With a send queue of 16, the sender posts rounds of 15 sends with
 * RPMA_F_COMPLETION_ON_ERROR and one with RPMA_F_COMPLETION_ALWAYS. Each
 * round must give exactly one completion, the signaled one's, and then
 * nothing. Ten rounds post 160 sends through a queue of 16, which is how
 * portable code uses unsignaled sends: by the verbs contract, their slots
 * are free only once a later signaled completion has been polled (rxe
 * frees them earlier; see sq_full.c). The receiver gets all 160 messages,
 * in order.
 */

#include <stdio.h>

#include "lab.h"

#define PORT "7475"
#define SQ 16
#define ROUNDS 10
#define TOTAL (ROUNDS * SQ)

static struct lab_env env;

static void receiver(void *arg)
{
	struct rpma_peer *peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_LOCAL, env.dev_b);
	struct rpma_ep *ep = lab_listen(peer, env.b, PORT);
	struct rpma_conn_cfg *cfg;
	uint8_t *buf;
	struct rpma_mr_local *mr = lab_mr_new(peer, TOTAL * 8, RPMA_MR_USAGE_RECV, 0, &buf);
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	uint32_t seq;

	(void)arg;
	CHECK_RPMA(rpma_conn_cfg_new(&cfg));
	CHECK_RPMA(rpma_conn_cfg_set_rq_size(cfg, TOTAL));
	CHECK_RPMA(rpma_conn_cfg_set_cq_size(cfg, TOTAL));
	lab_ready();
	req = lab_next_req(ep, cfg, LAB_SAFETY_MS);
	for (int i = 0; i < TOTAL; i++)
		CHECK_RPMA(rpma_conn_req_recv(req, mr, (size_t)i * 8, 8, (void *)(uintptr_t)i));
	conn = lab_accept(&req);
	for (uint32_t i = 0; i < TOTAL; i++) {
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.byte_len == 4, "%s, expected 4 bytes", lab_wc_str(&wc));
		seq = *(uint32_t *)(buf + wc.wr_id * 8);
		CHECK(seq == i, "message %u arrived as number %u", seq, i);
	}
	printf("receiver: %d messages in order\n", TOTAL);
	lab_closed(&conn, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_conn_cfg_delete(&cfg));
	CHECK_RPMA(rpma_ep_shutdown(&ep));
	CHECK_RPMA(rpma_peer_delete(&peer));
}

int main(void)
{
	struct rpma_conn_cfg *cfg;
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	uint8_t *buf;
	uint32_t n = 0;
	int flags;
	pid_t pid;

	lab_env_get(&env);
	pid = lab_fork(receiver, NULL);
	peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_REMOTE, env.dev_a);
	mr = lab_mr_new(peer, TOTAL * 4, RPMA_MR_USAGE_SEND, 0, &buf);
	CHECK_RPMA(rpma_conn_cfg_new(&cfg));
	CHECK_RPMA(rpma_conn_cfg_set_sq_size(cfg, SQ));
	conn = lab_connect(peer, env.b, PORT, cfg);

	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < SQ; i++, n++) {
			*(uint32_t *)(buf + n * 4) = n;
			flags = i == SQ - 1 ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
			CHECK_RPMA(
				rpma_send(conn, mr, n * 4, 4, flags, (void *)(uintptr_t)(n + 1)));
		}
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		CHECK(wc.wr_id == n, "round %d: %s, expected the signaled send's wr_id %u", r,
			lab_wc_str(&wc), n);
		lab_expect_no_more_wc(conn, "after a round of unsignaled sends");
	}
	printf("sender: %d rounds of %d sends through a queue of %d, one completion each\n", ROUNDS,
		SQ, SQ);
	lab_close(&conn);
	lab_reap(pid, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_conn_cfg_delete(&cfg));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
