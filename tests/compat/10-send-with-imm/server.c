// SPDX-License-Identifier: BSD-3-Clause
/*
 * server.c -- the send-with-immediate pattern (librpma's 10-send-with-imm): the client puts the
 * immediate value it will send in the connection request's private data; the server posts a
 * receive on the request, accepts, and checks that the one message carries IBV_WC_WITH_IMM
 * and that value (the wire carries it in network byte order), with or without a payload
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <librpma.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common-conn.h"

#define USAGE_STR "usage: %s <server_address> <port>\n"

int main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, USAGE_STR, argv[0]);
		return -1;
	}

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);

	char *addr = argv[1];
	char *port = argv[2];

	char *recv = malloc_aligned(KILOBYTE);
	if (!recv)
		return -1;

	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *recv_mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event conn_event = RPMA_CONN_UNDEFINED;
	struct ibv_wc wc;
	int ret;

	ret = server_peer_via_address(addr, &peer);
	if (ret)
		goto err_mr_free;

	ret = rpma_mr_reg(peer, recv, KILOBYTE, RPMA_MR_USAGE_RECV, &recv_mr);
	if (ret)
		goto err_peer_delete;

	ret = common_listen(peer, addr, port, &ep);
	if (ret)
		goto err_mr_dereg;

	ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (ret)
		goto err_ep_shutdown;

	ret = rpma_conn_req_recv(req, recv_mr, 0, KILOBYTE, NULL);
	if (ret) {
		(void)rpma_conn_req_delete(&req);
		goto err_ep_shutdown;
	}

	ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret)
		goto err_ep_shutdown;

	ret = rpma_conn_next_event(conn, &conn_event);
	if (ret)
		goto err_conn_disconnect;
	if (conn_event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "rpma_conn_next_event() returned an unexpected event: %s\n",
			rpma_utils_conn_event_2str(conn_event));
		ret = -1;
		goto err_conn_disconnect;
	}

	struct rpma_conn_private_data pdata;
	ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret)
		goto err_conn_disconnect;
	if (pdata.len < sizeof(uint32_t)) {
		fprintf(stderr, "the connection's private data is too small (%u < %zu)\n",
			pdata.len, sizeof(uint32_t));
		ret = -1;
		goto err_conn_disconnect;
	}
	uint32_t exp_imm;
	memcpy(&exp_imm, pdata.ptr, sizeof(exp_imm));

	struct rpma_cq *cq = NULL;
	ret = rpma_conn_get_cq(conn, &cq);
	if (ret)
		goto err_conn_disconnect;

	ret = rpma_cq_wait(cq);
	if (ret)
		goto err_conn_disconnect;
	ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
	if (ret)
		goto err_conn_disconnect;

	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "Received unexpected completion: %s\n",
			ibv_wc_status_str(wc.status));
		ret = -1;
		goto err_conn_disconnect;
	}
	if (wc.opcode != IBV_WC_RECV) {
		fprintf(stderr, "Received unexpected type of operation (%d != %d)\n",
			(int)wc.opcode, (int)IBV_WC_RECV);
		ret = -1;
		goto err_conn_disconnect;
	}
	if (!(wc.wc_flags & IBV_WC_WITH_IMM)) {
		fprintf(stderr, "Received unexpected completion flag (no IBV_WC_WITH_IMM)\n");
		ret = -1;
		goto err_conn_disconnect;
	}

	uint32_t imm = ntohl(wc.imm_data);
	if (imm != exp_imm) {
		fprintf(stderr, "Received unexpected immediate data (%" PRIu32 " != %" PRIu32 ")\n",
			imm, exp_imm);
		ret = -1;
	} else {
		/* the payload as bytes: what came is wc.byte_len long */
		if (wc.byte_len >= KILOBYTE)
			wc.byte_len = KILOBYTE - 1;
		recv[wc.byte_len] = '\0';
		printf("Received value '%s' (%u bytes) with immediate data '%" PRIu32 "'\n", recv,
			wc.byte_len, imm);
	}

err_conn_disconnect:
	ret |= common_wait_for_conn_close_and_disconnect(&conn);

err_ep_shutdown:
	ret |= rpma_ep_shutdown(&ep);

err_mr_dereg:
	ret |= rpma_mr_dereg(&recv_mr);

err_peer_delete:
	ret |= rpma_peer_delete(&peer);

err_mr_free:
	free(recv);

	return ret ? -1 : 0;
}
