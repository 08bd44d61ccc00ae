// SPDX-License-Identifier: BSD-3-Clause
/*
 * client.c -- the send-with-immediate pattern (librpma's 10-send-with-imm): the immediate value
 * goes to the server in the connection request's private data first, then with the one
 * message, which carries the word or, without one, nothing (a 0-byte message: src NULL,
 * offset 0, len 0)
 *
 * No <errno.h>, no <stdint.h>: as librpma's client, it has errno, UINT32_MAX through
 * <librpma.h>.
 */
#include <librpma.h>
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common-conn.h"

#define USAGE_STR "usage: %s <server_address> <port> <imm> [word]\n"

int main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, USAGE_STR, argv[0]);
		return -1;
	}

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);

	char *addr = argv[1];
	char *port = argv[2];
	char *word = NULL;

	errno = 0;
	unsigned long long imm = strtoull(argv[3], NULL, 10);
	if (imm == ULLONG_MAX && errno == ERANGE) {
		fprintf(stderr, "strtoull() overflow\n");
		return -1;
	}
	if (imm > UINT32_MAX) {
		fprintf(stderr, "The provided immediate data is too big (%llu > %u)\n", imm,
			UINT32_MAX);
		return -1;
	}

	if (argc >= 5)
		word = argv[4];

	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *send_mr = NULL;
	struct ibv_wc wc;
	size_t len = 0;
	char *send = NULL;
	int ret;

	if (word) {
		send = malloc_aligned(KILOBYTE);
		if (!send)
			return -1;
		strncpy(send, word, KILOBYTE - 1);
		len = strlen(send);
	}

	ret = client_peer_via_address(addr, &peer);
	if (ret)
		goto err_mr_free;

	if (word) {
		ret = rpma_mr_reg(peer, send, KILOBYTE, RPMA_MR_USAGE_SEND, &send_mr);
		if (ret)
			goto err_peer_delete;
	}

	uint32_t imm32 = (uint32_t)imm;
	struct rpma_conn_private_data pdata;
	pdata.ptr = &imm32;
	pdata.len = sizeof(uint32_t);
	ret = client_connect(peer, addr, port, NULL, &pdata, &conn);
	if (ret)
		goto err_mr_dereg;

	if (word)
		fprintf(stdout, "Sending value '%s' with immediate data '%" PRIu32 "'\n", word,
			imm32);
	else
		fprintf(stdout, "Sending immediate data '%" PRIu32 "'\n", imm32);

	/* with no word, send_mr is NULL and len 0: the 0-byte form */
	ret = rpma_send_with_imm(conn, send_mr, 0, len, RPMA_F_COMPLETION_ALWAYS, imm32, NULL);
	if (ret)
		goto err_conn_disconnect;

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
	if (wc.opcode != IBV_WC_SEND) {
		fprintf(stderr, "Received unexpected type of operation (%d != %d)\n",
			(int)wc.opcode, (int)IBV_WC_SEND);
		ret = -1;
	}

err_conn_disconnect:
	ret |= common_disconnect_and_wait_for_conn_close(&conn);

err_mr_dereg:
	ret |= rpma_mr_dereg(&send_mr);

err_peer_delete:
	ret |= rpma_peer_delete(&peer);

err_mr_free:
	free(send);

	return ret ? -1 : 0;
}
