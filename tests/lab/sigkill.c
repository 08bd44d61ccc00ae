// SPDX-License-Identifier: BSD-3-Clause
/*
 * sigkill.c -- the receiver dies mid-stream: an event, then failed completions
 *
 * The sender streams signaled messages; after the first few the receiver
 * is killed with SIGKILL. The sender keeps sending, one message every
 * 20 ms while its send queue has room, and watches completions and
 * connection events. It must see RPMA_CONN_CLOSED or RPMA_CONN_LOST within
 * 30 s (the dying process's kernel disconnects it). It then watches 3 s
 * more, calls rpma_conn_disconnect, as a user of librpma does on that
 * event, and every send still outstanding must complete, with an error
 * status, within 10 s. What it saw, and when, is printed.
 *
 * Seen on rxe: CLOSED within milliseconds, and no completion at all until
 * the disconnect -- rxe retries a send forever when retry_count is 7, as
 * librpma sets it -- then IBV_WC_WR_FLUSH_ERR for every outstanding send.
 */

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"

#define PORT "7480"
#define BEFORE 3 /* messages that arrive before the kill */

static struct lab_env env;
static int posted, completed, failed;
static double t_kill, t_error = -1;

static void receiver(void *arg)
{
	struct rpma_peer *peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_LOCAL, env.dev_b);
	struct rpma_ep *ep = lab_listen(peer, env.b, PORT);
	uint8_t *buf;
	struct rpma_mr_local *mr = lab_mr_new(peer, BEFORE * 64, RPMA_MR_USAGE_RECV, 0, &buf);
	struct rpma_conn_req *req;
	struct rpma_conn *conn;

	(void)arg;
	lab_ready();
	req = lab_next_req(ep, NULL, LAB_SAFETY_MS);
	for (int i = 0; i < BEFORE; i++)
		CHECK_RPMA(rpma_conn_req_recv(req, mr, (size_t)i * 64, 64, NULL));
	conn = lab_accept(&req);
	(void)conn;
	pause(); /* until killed */
}

/* take every completion there is; say what failed */
static void reap(struct rpma_conn *conn, int timeout_ms)
{
	struct ibv_wc wc;

	while (lab_next_wc(conn, &wc, timeout_ms) == 0) {
		completed++;
		if (wc.status == IBV_WC_SUCCESS)
			continue;
		if (failed++ < 3)
			printf("sender: %.3f s after the kill: %s\n", lab_now() - t_kill,
				lab_wc_str(&wc));
		if (t_error < 0)
			t_error = lab_now() - t_kill;
	}
}

int main(void)
{
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_conn *conn;
	enum rpma_conn_event event;
	struct ibv_wc wc;
	uint8_t *buf;
	double t_event = -1, deadline;
	int status;
	pid_t pid;

	lab_env_get(&env);
	pid = lab_fork(receiver, NULL);
	peer = lab_peer_new(env.b, RPMA_UTIL_IBV_CONTEXT_REMOTE, env.dev_a);
	mr = lab_mr_new(peer, 64, RPMA_MR_USAGE_SEND, 0, &buf);
	conn = lab_connect(peer, env.b, PORT, NULL);
	for (int i = 0; i < BEFORE; i++) {
		CHECK_RPMA(rpma_send(conn, mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, NULL));
		lab_expect_wc(conn, &wc, IBV_WC_SUCCESS, LAB_SAFETY_MS);
	}

	CHECK(kill(pid, SIGKILL) == 0, "cannot kill the receiver");
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status), "the receiver did not die");
	t_kill = lab_now();
	printf("sender: receiver killed after %d messages\n", BEFORE);

	/* stream on until the event (a safety net if it never comes), then 3 s more */
	deadline = t_kill + LAB_SAFETY_MS / 1000.0;
	while (lab_now() < deadline) {
		if (rpma_send(conn, mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, NULL) == 0)
			posted++;
		reap(conn, 0);
		if (t_event < 0 && lab_next_event(conn, &event, 20) == 0) {
			t_event = lab_now() - t_kill;
			printf("sender: %.3f s after the kill: %s\n", t_event,
				rpma_utils_conn_event_2str(event));
			CHECK(event == RPMA_CONN_CLOSED || event == RPMA_CONN_LOST,
				"event %s, expected CLOSED or LOST",
				rpma_utils_conn_event_2str(event));
			deadline = lab_now() + 3;
		}
	}
	CHECK(t_event >= 0, "no connection event in %d s after the kill", LAB_SAFETY_MS / 1000);
	printf("sender: after the kill, %d sends posted, %d completed (%d failed)\n", posted,
		completed, failed);
	printf("sender: rpma_conn_disconnect\n");

	CHECK_RPMA(rpma_conn_disconnect(conn));
	/* the disconnect flushes what is left: a safety net if it does not */
	deadline = lab_now() + LAB_SAFETY_MS / 1000.0;
	while (completed < posted && lab_now() < deadline)
		reap(conn, 100);
	printf("sender: %d completed (%d failed) %.3f s after the kill\n", completed, failed,
		lab_now() - t_kill);
	CHECK(completed == posted, "%d of %d sends never completed", posted - completed, posted);
	CHECK(failed > 0 && failed == completed, "%d of %d completions after the kill failed",
		failed, completed);

	CHECK_RPMA(rpma_conn_delete(&conn));
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return 0;
}
