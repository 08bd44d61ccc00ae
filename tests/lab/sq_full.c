// SPDX-License-Identifier: BSD-3-Clause
/*
 * sq_full.c -- a full send queue makes rpma_send fail with RPMA_E_PROVIDER
 *
 * The receiver posts no receive at first, so the sender's first message
 * waits for one (receiver-not-ready, retried forever with librpma's
 * rnr_retry_count of 7) and every later one queues behind it. The sender
 * asks for a send queue of 8 and posts RPMA_F_COMPLETION_ON_ERROR sends
 * until one fails: it must fail with RPMA_E_PROVIDER (ibv_post_send gave
 * ENOMEM), after at least 8 (a provider may round the queue up; the test
 * prints where it filled). Then the receiver posts its receives and every
 * send that was posted arrives, in order.
 *
 * Waiting for a receive is what keeps the sends in the queue here: rxe
 * frees the slot of an unsignaled send as soon as the send is acknowledged,
 * while the verbs contract (and other providers) keep it until a later
 * signaled completion is polled -- see on_error.c.
 */

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lab.h"

#define PORT "7476"
#define SQ 8
#define MAX 256

static struct lab_env env;

/* shared between sender and receiver */
struct shared {
	volatile uint32_t posted;   /* set by the sender once the queue is full */
	volatile uint32_t received; /* counted by the receiver */
};
static struct shared *sh;

static void receiver(void *arg)
{
	struct rpma_peer *peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_LOCAL, env.dev_b);
	struct rpma_ep *ep = lab_listen(peer, env.b, PORT);
	struct rpma_conn_cfg *cfg;
	uint8_t *buf;
	struct rpma_mr_local *mr = lab_mr_new(peer, MAX * 8, RPMA_MR_USAGE_RECV, 0, &buf);
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct ibv_wc wc;
	double deadline;
	uint32_t seq;

	(void)arg;
	CHECK_RPMA(rpma_conn_cfg_new(&cfg));
	CHECK_RPMA(rpma_conn_cfg_set_rq_size(cfg, MAX));
	CHECK_RPMA(rpma_conn_cfg_set_cq_size(cfg, MAX));
	lab_ready();
	req = lab_next_req(ep, cfg, LAB_SAFETY_MS);
	conn = lab_accept(&req);

	/* a safety net: the sender says when its queue is full */
	deadline = lab_now() + LAB_SAFETY_MS / 1000.0;
	while (sh->posted == 0)
		CHECK(lab_now() < deadline, "the sender's queue did not fill in %d s",
			LAB_SAFETY_MS / 1000);
	for (int i = 0; i < MAX; i++)
		CHECK_RPMA(rpma_recv(conn, mr, (size_t)i * 8, 8, (void *)(uintptr_t)i));
	while (sh->received < sh->posted) {
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
		seq = *(uint32_t *)(buf + wc.wr_id * 8);
		CHECK(seq == sh->received, "message %u arrived as number %u", seq, sh->received);
		sh->received++;
	}
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
	uint8_t *buf;
	uint32_t n;
	double deadline;
	int ret = 0;
	pid_t pid;

	lab_env_get(&env);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED, "mmap");
	pid = lab_fork(receiver, NULL);
	peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_REMOTE, env.dev_a);
	mr = lab_mr_new(peer, MAX * 4, RPMA_MR_USAGE_SEND, 0, &buf);
	CHECK_RPMA(rpma_conn_cfg_new(&cfg));
	CHECK_RPMA(rpma_conn_cfg_set_sq_size(cfg, SQ));
	conn = lab_connect(peer, env.b, PORT, cfg);

	for (n = 0; n < MAX; n++) {
		*(uint32_t *)(buf + n * 4) = n;
		ret = rpma_send(conn, mr, n * 4, 4, RPMA_F_COMPLETION_ON_ERROR, NULL);
		if (ret)
			break;
	}
	CHECK(ret == RPMA_E_PROVIDER, "send %u of %d returned %d (%s), expected RPMA_E_PROVIDER",
		n + 1, MAX, ret, rpma_err_2str(ret));
	CHECK(n >= SQ, "the queue of %d was full after %u sends", SQ, n);
	printf("sender: send queue of %d full after %u sends: RPMA_E_PROVIDER\n", SQ, n);
	sh->posted = n;

	/* a safety net: the receiver counts what it took in */
	deadline = lab_now() + LAB_SAFETY_MS / 1000.0;
	while (sh->received < n && lab_now() < deadline)
		usleep(10000);
	CHECK(sh->received == n, "the receiver got %u of the %u messages posted", sh->received, n);
	lab_expect_no_more_wc(conn, "after the unsignaled sends");
	printf("sender: all %u posted messages arrived once the receiver posted receives\n", n);
	lab_close(&conn);
	lab_reap(pid, LAB_SAFETY_MS);
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_conn_cfg_delete(&cfg));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
