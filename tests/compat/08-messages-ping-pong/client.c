// SPDX-License-Identifier: BSD-3-Clause
/*
 * client.c -- the messages ping-pong pattern (librpma's 08-messages-ping-pong), also the
 * client of the SRQ servers (08srq, 13): per round post a receive, send the counter signaled,
 * wait on the main CQ for both completions, take the answer as the next counter; I_M_DONE at
 * the end, then the server closes
 *
 * No <stdio.h> here, as in librpma's clients: printf() and stderr come through <librpma.h>.
 */
#include <librpma.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "common-conn.h"
#include "common-messages-ping-pong.h"

#define USAGE_STR "usage: %s <server_address> <port> <seed> <rounds> [<sleep>]\n"

int main(int argc, char *argv[])
{
	if (argc < 5) {
		fprintf(stderr, USAGE_STR, argv[0]);
		exit(-1);
	}

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);

	char *addr = argv[1];
	char *port = argv[2];
	uint64_t cntr = strtoul_noerror(argv[3]);
	uint64_t rounds = strtoul_noerror(argv[4]);
	uint64_t sleep_usec = argc >= 6 ? strtoul_noerror(argv[5]) : 0;
	int ret;

	if (rounds == 0) {
		fprintf(stderr, "rounds must be at least 1\n");
		return -1;
	}

	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;

	struct rpma_mr_local *recv_mr, *send_mr;
	uint64_t *recv = malloc_aligned(MSG_SIZE);
	if (recv == NULL)
		return -1;
	uint64_t *send = malloc_aligned(MSG_SIZE);
	if (send == NULL) {
		free(recv);
		return -1;
	}

	if ((ret = client_peer_via_address(addr, &peer)))
		goto err_mr_free;

	if ((ret = rpma_mr_reg(peer, recv, MSG_SIZE, RPMA_MR_USAGE_RECV, &recv_mr)))
		goto err_peer_delete;
	if ((ret = rpma_mr_reg(peer, send, MSG_SIZE, RPMA_MR_USAGE_SEND, &send_mr))) {
		(void)rpma_mr_dereg(&recv_mr);
		goto err_peer_delete;
	}

	if ((ret = client_connect(peer, addr, port, NULL, NULL, &conn)))
		goto err_mr_dereg;

	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq)))
		goto err_conn_disconnect;

	pid_t pid = getpid();
	do {
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv)))
			break;

		printf("[client #%d] value sent: %" PRIu64 "\n", (int)pid, cntr);
		*send = cntr;
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL)))
			break;

		int send_cmpl = 0;
		int recv_cmpl = 0;
		if ((ret = wait_and_process_completions(cq, recv, &send_cmpl, &recv_cmpl)))
			break;

		if (*recv != cntr + 1) {
			fprintf(stderr,
				"[client #%d] sent %" PRIu64 ", the answer is %" PRIu64 "\n",
				(int)pid, cntr, *recv);
			ret = -1;
			break;
		}
		cntr = *recv;
		printf("[client #%d] value received: %" PRIu64 "\n", (int)pid, cntr);

		if (sleep_usec > 0)
			(void)usleep(sleep_usec);
	} while (--rounds);

	/* the last message; the server closes the connection when it has it */
	*send = I_M_DONE;
	ret |= rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL);

err_conn_disconnect:
	ret |= common_wait_for_conn_close_and_disconnect(&conn);

err_mr_dereg:
	ret |= rpma_mr_dereg(&send_mr);
	ret |= rpma_mr_dereg(&recv_mr);

err_peer_delete:
	ret |= rpma_peer_delete(&peer);

err_mr_free:
	free(send);
	free(recv);

	return ret ? -1 : 0;
}
