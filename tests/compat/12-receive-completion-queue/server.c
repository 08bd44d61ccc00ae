// SPDX-License-Identifier: BSD-3-Clause
/*
 * server.c -- the separate receive CQ pattern (librpma's 12-receive-completion-queue): the 08
 * ping-pong with rcq_size set, receives waited for on rpma_conn_get_rcq(), the signaled sends
 * on the main CQ
 */
#include <inttypes.h>
#include <librpma.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#include "common-conn.h"
#include "receive-completion-queue-common.h"

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
	enum rpma_conn_event conn_event = RPMA_CONN_UNDEFINED;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct ibv_wc wc;

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

	if ((ret = rpma_conn_cfg_new(&cfg)))
		goto err_mr_dereg;
	if ((ret = rpma_conn_cfg_set_rcq_size(cfg, RCQ_SIZE)))
		goto err_cfg_delete;

	if ((ret = rpma_ep_next_conn_req(ep, cfg, &req)))
		goto err_cfg_delete;
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, MSG_SIZE, recv))) {
		(void)rpma_conn_req_delete(&req);
		goto err_cfg_delete;
	}
	if ((ret = rpma_conn_req_connect(&req, NULL, &conn)))
		goto err_cfg_delete;

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
	if ((ret = rpma_conn_get_rcq(conn, &rcq)))
		goto err_conn_disconnect;
	if (rcq == NULL) {
		fprintf(stderr, "rpma_conn_get_rcq(): no receive CQ with rcq_size %d\n", RCQ_SIZE);
		ret = -1;
		goto err_conn_disconnect;
	}

	while (1) {
		if ((ret = get_wc_and_validate(rcq, IBV_WC_RECV, &wc)))
			break;

		if (*recv == I_M_DONE)
			break;

		printf("SERVER: Value received: %" PRIu64 "\n", *recv);
		*send = *recv + 1;

		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv)))
			break;

		printf("SERVER: Value sent: %" PRIu64 "\n", *send);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL)))
			break;

		if ((ret = get_wc_and_validate(cq, IBV_WC_SEND, &wc)))
			break;
	}

err_conn_disconnect:
	ret |= common_disconnect_and_wait_for_conn_close(&conn);

err_cfg_delete:
	ret |= rpma_conn_cfg_delete(&cfg);

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
