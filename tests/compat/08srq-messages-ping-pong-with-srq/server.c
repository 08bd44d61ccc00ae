// SPDX-License-Identifier: BSD-3-Clause
/*
 * server.c -- the simple ping-pong with a shared RQ (librpma's 08srq): the receives are posted
 * on an SRQ and complete, by the third argument, on
 *   s (default) the SRQ's own receive CQ (rpma_srq_get_rcq()),
 *   m           the connection's main CQ (an SRQ with rcq_size 0),
 *   r           the connection's receive CQ (an SRQ with rcq_size 0, the connection's rcq_size 10),
 * each completion's qp_num must be the connection's; the client is the 08 ping-pong client
 */
#include <inttypes.h>
#include <librpma.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common-conn.h"
#include "common-messages-ping-pong.h"

#define USAGE_STR "usage: %s <server_address> <port> [m|r]\n"
#define RCQ_SIZE 10

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
	char rcq_flag = 's';
	int ret;

	if (argc >= 4) {
		if (strcmp(argv[3], "m") == 0) {
			rcq_flag = 'm';
		} else if (strcmp(argv[3], "r") == 0) {
			rcq_flag = 'r';
		} else {
			fprintf(stderr, "The third parameter should be m or r (%s given)\n",
				argv[3]);
			return -1;
		}
	}

	struct rpma_mr_local *recv_mr, *send_mr;
	uint64_t *recv = malloc_aligned(MSG_SIZE);
	if (recv == NULL)
		return -1;
	uint64_t *send = malloc_aligned(MSG_SIZE);
	if (send == NULL) {
		ret = -1;
		goto err_free_recv;
	}

	struct rpma_peer *peer = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_srq_cfg *srq_cfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_cfg *conn_cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_cq *rcq = NULL;
	uint32_t qp_num = 0;
	struct ibv_wc wc;

	if ((ret = server_peer_via_address(addr, &peer)))
		goto err_free_send;

	if ((ret = rpma_srq_cfg_new(&srq_cfg)))
		goto err_peer_delete;

	/* m and r: no receive CQ of the SRQ, the connection decides where receives complete */
	if (rcq_flag != 's') {
		if ((ret = rpma_srq_cfg_set_rcq_size(srq_cfg, 0)))
			goto err_srq_cfg_delete;
	}

	if ((ret = rpma_srq_new(peer, srq_cfg, &srq)))
		goto err_srq_cfg_delete;

	if ((ret = rpma_conn_cfg_new(&conn_cfg)))
		goto err_srq_delete;

	if (rcq_flag == 'r') {
		if ((ret = rpma_conn_cfg_set_rcq_size(conn_cfg, RCQ_SIZE)))
			goto err_conn_cfg_delete;
	}

	if ((ret = rpma_conn_cfg_set_srq(conn_cfg, srq)))
		goto err_conn_cfg_delete;

	if ((ret = common_listen(peer, addr, port, &ep)))
		goto err_conn_cfg_delete;

	if ((ret = rpma_mr_reg(peer, recv, MSG_SIZE, RPMA_MR_USAGE_RECV, &recv_mr)))
		goto err_ep_shutdown;
	if ((ret = rpma_mr_reg(peer, send, MSG_SIZE, RPMA_MR_USAGE_SEND, &send_mr)))
		goto err_recv_mr_dereg;

	/* the receive for the client's first message, on the SRQ before any connection */
	if ((ret = rpma_srq_recv(srq, recv_mr, 0, MSG_SIZE, recv)))
		goto err_send_mr_dereg;

	if ((ret = server_accept_connection(ep, conn_cfg, NULL, &conn)))
		goto err_send_mr_dereg;

	if ((ret = rpma_conn_get_qp_num(conn, &qp_num)))
		goto err_conn_disconnect;

	switch (rcq_flag) {
	case 's':
		ret = rpma_srq_get_rcq(srq, &rcq);
		break;
	case 'm':
		ret = rpma_conn_get_cq(conn, &rcq);
		break;
	default:
		ret = rpma_conn_get_rcq(conn, &rcq);
		break;
	}
	if (ret)
		goto err_conn_disconnect;
	if (rcq == NULL) {
		fprintf(stderr, "no CQ to wait on in mode %c\n", rcq_flag);
		ret = -1;
		goto err_conn_disconnect;
	}

	while (1) {
		int recv_cmpl = 0;
		do {
			if ((ret = rpma_cq_wait(rcq)))
				goto err_conn_disconnect;

			int num_got = 0;
			ret = rpma_cq_get_wc(rcq, 1, &wc, &num_got);
			if (ret == RPMA_E_NO_COMPLETION)
				continue;
			if (ret)
				goto err_conn_disconnect;

			int send_cmpl; /* sends are unsignaled: none comes */
			if ((ret = validate_wc(&wc, recv, &send_cmpl, &recv_cmpl)))
				goto err_conn_disconnect;
		} while (recv_cmpl == 0);

		if (qp_num != wc.qp_num) {
			fprintf(stderr,
				"the completion's qp_num (%" PRIu32
				") is not the connection's (%" PRIu32 ")\n",
				wc.qp_num, qp_num);
			ret = -1;
			break;
		}

		if (*recv == I_M_DONE)
			break;

		printf("Value received: %" PRIu64 "\n", *recv);
		*send = *recv + 1;

		if ((ret = rpma_srq_recv(srq, recv_mr, 0, MSG_SIZE, recv)))
			break;

		printf("Value sent: %" PRIu64 "\n", *send);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL)))
			break;
	}

err_conn_disconnect:
	ret |= common_disconnect_and_wait_for_conn_close(&conn);

err_send_mr_dereg:
	ret |= rpma_mr_dereg(&send_mr);

err_recv_mr_dereg:
	ret |= rpma_mr_dereg(&recv_mr);

err_ep_shutdown:
	ret |= rpma_ep_shutdown(&ep);

err_conn_cfg_delete:
	ret |= rpma_conn_cfg_delete(&conn_cfg);

err_srq_delete:
	ret |= rpma_srq_delete(&srq);

err_srq_cfg_delete:
	ret |= rpma_srq_cfg_delete(&srq_cfg);

err_peer_delete:
	ret |= rpma_peer_delete(&peer);

err_free_send:
	free(send);

err_free_recv:
	free(recv);

	return ret ? -1 : 0;
}
