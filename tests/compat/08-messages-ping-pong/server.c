// SPDX-License-Identifier: BSD-3-Clause
/*
 * server.c -- the messages ping-pong pattern (librpma's 08-messages-ping-pong): a receive
 * posted on the request before accepting, then per round: wait for the client's counter on the
 * main CQ, re-post the receive, send counter + 1 unsignaled (RPMA_F_COMPLETION_ON_ERROR)
 */
#include <inttypes.h>
#include <librpma.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#include "common-conn.h"
#include "common-messages-ping-pong.h"

#define USAGE_STR "usage: %s <server_address> <port>\n"

int main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, USAGE_STR, argv[0]);
		exit(-1);
	}

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);

	char *addr = argv[1];
	char *port = argv[2];
	int ret;

	struct rpma_mr_local *recv_mr, *send_mr;
	uint64_t *recv = malloc_aligned(MSG_SIZE);
	if (recv == NULL)
		return -1;
	uint64_t *send = malloc_aligned(MSG_SIZE);
	if (send == NULL) {
		free(recv);
		return -1;
	}

	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event conn_event = RPMA_CONN_UNDEFINED;
	struct rpma_cq *cq = NULL;

	if ((ret = server_peer_via_address(addr, &peer)))
		goto err_free;
	if ((ret = common_listen(peer, addr, port, &ep)))
		goto err_peer_delete;
	if ((ret = rpma_mr_reg(peer, recv, MSG_SIZE, RPMA_MR_USAGE_RECV, &recv_mr)))
		goto err_ep_shutdown;
	if ((ret = rpma_mr_reg(peer, send, MSG_SIZE, RPMA_MR_USAGE_SEND, &send_mr))) {
		(void)rpma_mr_dereg(&recv_mr);
		goto err_ep_shutdown;
	}

	if ((ret = rpma_ep_next_conn_req(ep, NULL, &req)))
		goto err_mr_dereg;

	/* the first message of the client may come as soon as the connection is up */
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, MSG_SIZE, recv))) {
		(void)rpma_conn_req_delete(&req);
		goto err_mr_dereg;
	}

	if ((ret = rpma_conn_req_connect(&req, NULL, &conn)))
		goto err_mr_dereg;

	if ((ret = rpma_conn_next_event(conn, &conn_event)))
		goto err_conn_disconnect;
	if (conn_event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "rpma_conn_next_event returned an unexpected event: %s\n",
			rpma_utils_conn_event_2str(conn_event));
		ret = -1;
		goto err_conn_disconnect;
	}

	if ((ret = rpma_conn_get_cq(conn, &cq)))
		goto err_conn_disconnect;

	while (1) {
		int recv_cmpl = 0;
		if ((ret = wait_and_process_completions(cq, recv, NULL, &recv_cmpl)))
			break;

		if (*recv == I_M_DONE)
			break;

		printf("Value received: %" PRIu64 "\n", *recv);
		*send = *recv + 1;

		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv)))
			break;

		printf("Value sent: %" PRIu64 "\n", *send);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL)))
			break;
	}

err_conn_disconnect:
	ret |= common_disconnect_and_wait_for_conn_close(&conn);

err_mr_dereg:
	ret |= rpma_mr_dereg(&send_mr);
	ret |= rpma_mr_dereg(&recv_mr);

err_ep_shutdown:
	ret |= rpma_ep_shutdown(&ep);

err_peer_delete:
	ret |= rpma_peer_delete(&peer);

err_free:
	free(send);
	free(recv);

	return ret ? -1 : 0;
}
