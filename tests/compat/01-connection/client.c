// SPDX-License-Identifier: BSD-3-Clause
/*
 * client.c -- the connection pattern (librpma's 01-connection): connect with a greeting in the
 * request's private data, print the server's greeting, wait for the server to disconnect
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

int main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <addr> <port>\n", argv[0]);
		return -1;
	}

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);

	char *addr = argv[1];
	char *port = argv[2];

	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event conn_event = RPMA_CONN_UNDEFINED;

	int ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (ret)
		return ret;

	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret)
		return ret;

	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret)
		goto err_peer_delete;

	const char *msg = "Hello server!";
	struct rpma_conn_private_data pdata;
	pdata.ptr = (void *)msg;
	pdata.len = (strlen(msg) + 1) * sizeof(char);
	ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (ret)
		goto err_peer_delete;

	ret = rpma_conn_next_event(conn, &conn_event);
	if (ret || conn_event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "rpma_conn_next_event: %s, %s\n", rpma_err_2str(ret),
			rpma_utils_conn_event_2str(conn_event));
		ret = -1;
		goto err_conn_delete;
	}

	ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret)
		goto err_conn_delete;
	if (pdata.ptr != NULL && memchr(pdata.ptr, '\0', pdata.len) != NULL)
		printf("Received a message: %s\n", (char *)pdata.ptr);
	else
		printf("No message received\n");

	/* the server disconnects */
	ret = rpma_conn_next_event(conn, &conn_event);
	if (ret || conn_event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "rpma_conn_next_event: %s, %s\n", rpma_err_2str(ret),
			rpma_utils_conn_event_2str(conn_event));
		ret = -1;
		goto err_conn_delete;
	}

	ret = rpma_conn_disconnect(conn);
	if (ret)
		goto err_conn_delete;
	ret = rpma_conn_delete(&conn);
	if (ret)
		goto err_peer_delete;
	return rpma_peer_delete(&peer);

err_conn_delete:
	(void)rpma_conn_delete(&conn);
err_peer_delete:
	(void)rpma_peer_delete(&peer);
	return ret;
}
