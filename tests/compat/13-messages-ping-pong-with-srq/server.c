// SPDX-License-Identifier: BSD-3-Clause
/*
 * server.c -- the ping-pong with a shared RQ and several clients (librpma's 13): the endpoint
 * fd is non-blocking in an epoll set; for each connection request one receive is posted on the
 * SRQ (buffer slot i) and the request is accepted; then every completion on the SRQ's receive
 * CQ is matched to its connection by qp_num, its receive re-posted and the counter + 1 sent
 * back on that connection, until every client said I_M_DONE.
 *
 * Unlike librpma's example, which stops accepting after 5 s without a new client, it accepts
 * exactly <clients> connections (a deadline of <timeout> seconds, default 30, for each): the
 * tests wait on events, not on guessed delays.
 */
#include <inttypes.h>
#include <librpma.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "common-conn.h"
#include "common-messages-ping-pong.h"

#define USAGE_STR "usage: %s <server_address> <port> <clients> [<timeout>]\n"
#define CLIENT_MAX 10

struct connect_context {
	struct rpma_conn *conn;
	uint32_t qp_num;
};

static struct connect_context conn_ctxs[CLIENT_MAX];
static int num_clients;

static int find_qp(uint32_t qp_num)
{
	for (int i = 0; i < num_clients; ++i)
		if (conn_ctxs[i].qp_num == qp_num)
			return i;

	fprintf(stderr, "Unable to find the connection [qp#%" PRIu32 "]\n", qp_num);
	return -1;
}

static int handle_incoming_connection(struct rpma_ep *ep, struct rpma_conn_cfg *cfg,
	struct rpma_mr_local *recv_mr, uint64_t *recv)
{
	struct connect_context *conn_ctx = &conn_ctxs[num_clients];
	size_t offset = (size_t)num_clients;
	struct rpma_srq *srq = NULL;
	int ret;

	/* the SRQ comes back from the configuration it was set in */
	if ((ret = rpma_conn_cfg_get_srq(cfg, &srq)))
		return ret;

	/* one more receive in the shared pool for the newcomer's first message */
	if ((ret = rpma_srq_recv(srq, recv_mr, offset * MSG_SIZE, MSG_SIZE, recv + offset)))
		return ret;

	if ((ret = server_accept_connection(ep, cfg, NULL, &conn_ctx->conn)))
		return ret;

	return rpma_conn_get_qp_num(conn_ctx->conn, &conn_ctx->qp_num);
}

int main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, USAGE_STR, argv[0]);
		exit(-1);
	}

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);

	char *addr = argv[1];
	char *port = argv[2];
	int clients = (int)strtoul_noerror(argv[3]);
	int timeout = (argc >= 5 ? (int)strtoul_noerror(argv[4]) : 30) * 1000;
	int ret;

	if (clients < 1 || clients > CLIENT_MAX) {
		fprintf(stderr, "clients: 1 to %d\n", CLIENT_MAX);
		return -1;
	}

	struct rpma_mr_local *recv_mr, *send_mr;
	size_t size = CLIENT_MAX * MSG_SIZE;
	uint64_t *recv = malloc_aligned(size);
	if (recv == NULL)
		return -1;
	uint64_t *send = malloc_aligned(size);
	if (send == NULL) {
		ret = -1;
		goto err_free_recv;
	}

	struct rpma_peer *peer = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_cq *rcq = NULL;
	int epoll_fd = -1, ep_fd = -1, total_cnt = 0;
	struct epoll_event event;
	struct ibv_wc wc[CLIENT_MAX];

	if ((ret = server_peer_via_address(addr, &peer)))
		goto err_free_send;

	/* the defaults: 100 receives, a receive CQ of 100 */
	if ((ret = rpma_srq_new(peer, NULL, &srq)))
		goto err_peer_delete;

	if ((ret = rpma_conn_cfg_new(&cfg)))
		goto err_srq_delete;

	if ((ret = rpma_conn_cfg_set_srq(cfg, srq)))
		goto err_conn_cfg_delete;

	if ((ret = common_listen(peer, addr, port, &ep)))
		goto err_conn_cfg_delete;

	if ((ret = rpma_mr_reg(peer, recv, size, RPMA_MR_USAGE_RECV, &recv_mr)))
		goto err_ep_shutdown;
	if ((ret = rpma_mr_reg(peer, send, size, RPMA_MR_USAGE_SEND, &send_mr)))
		goto err_recv_mr_dereg;

	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (epoll_fd == -1) {
		perror("epoll_create1(EPOLL_CLOEXEC)");
		ret = -1;
		goto err_send_mr_dereg;
	}

	if ((ret = rpma_ep_get_fd(ep, &ep_fd)))
		goto err_close_epoll_fd;
	if ((ret = fd_set_nonblock(ep_fd)))
		goto err_close_epoll_fd;
	event.events = EPOLLIN;
	event.data.fd = ep_fd;
	if ((ret = epoll_ctl(epoll_fd, EPOLL_CTL_ADD, ep_fd, &event))) {
		perror("epoll_ctl(EPOLL_CTL_ADD)");
		goto err_close_epoll_fd;
	}

	while (num_clients < clients) {
		ret = epoll_wait(epoll_fd, &event, 1, timeout);
		if (ret != 1) {
			fprintf(stderr, "no connection request within %d ms (%d of %d came)\n",
				timeout, num_clients, clients);
			ret = -1;
			goto err_conn_disconnect;
		}
		if ((ret = handle_incoming_connection(ep, cfg, recv_mr, recv)))
			goto err_conn_disconnect;

		num_clients++;
		printf("The client #%d has been connected.\n", num_clients);
	}

	printf("Server ended listening.\n");

	if ((ret = rpma_srq_get_rcq(srq, &rcq)))
		goto err_conn_disconnect;

	while (!ret && total_cnt < num_clients) {
		if ((ret = rpma_cq_wait(rcq)))
			break;

		int num_got = 0;
		if ((ret = rpma_cq_get_wc(rcq, num_clients, wc, &num_got))) {
			/* an event with nothing left to reap is not an error */
			if (ret == RPMA_E_NO_COMPLETION) {
				ret = 0;
				continue;
			}
			break;
		}

		for (int i = 0; i < num_got; ++i) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "rpma_srq_recv() failed: %s\n",
					ibv_wc_status_str(wc[i].status));
				ret = -1;
				break;
			}
			if (wc[i].opcode != IBV_WC_RECV) {
				fprintf(stderr, "unexpected wc.opcode %d\n", (int)wc[i].opcode);
				ret = -1;
				break;
			}

			int index = find_qp(wc[i].qp_num);
			if (index == -1) {
				ret = -1;
				break;
			}

			uint64_t *recv_ptr = (uint64_t *)(uintptr_t)wc[i].wr_id;
			size_t offset = (size_t)(recv_ptr - recv);

			if (*recv_ptr == I_M_DONE) {
				total_cnt++;
				continue;
			}

			printf("[server] value received: %" PRIu64
			       " from the connection [qp#%" PRIu32 "]\n",
				*recv_ptr, conn_ctxs[index].qp_num);

			/* the slot's receive back into the pool before the answer goes out */
			if ((ret = rpma_srq_recv(
				     srq, recv_mr, offset * MSG_SIZE, MSG_SIZE, recv_ptr)))
				break;

			send[offset] = *recv_ptr + 1;
			printf("[server] value sent: %" PRIu64 " to the connection [qp#%" PRIu32
			       "]\n",
				send[offset], conn_ctxs[index].qp_num);

			if ((ret = rpma_send(conn_ctxs[index].conn, send_mr, offset * MSG_SIZE,
				     MSG_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL)))
				break;
		}
	}

	if (total_cnt != num_clients) {
		fprintf(stderr, "Unable to receive data from all connections\n");
		ret = -1;
	}

err_conn_disconnect:
	for (int i = 0; i < CLIENT_MAX; ++i) {
		if (conn_ctxs[i].conn == NULL)
			continue;
		ret |= common_disconnect_and_wait_for_conn_close(&conn_ctxs[i].conn);
	}

	if (ep_fd >= 0)
		(void)epoll_ctl(epoll_fd, EPOLL_CTL_DEL, ep_fd, NULL);

err_close_epoll_fd:
	ret |= close(epoll_fd);

err_send_mr_dereg:
	ret |= rpma_mr_dereg(&send_mr);

err_recv_mr_dereg:
	ret |= rpma_mr_dereg(&recv_mr);

err_ep_shutdown:
	ret |= rpma_ep_shutdown(&ep);

err_conn_cfg_delete:
	ret |= rpma_conn_cfg_delete(&cfg);

err_srq_delete:
	ret |= rpma_srq_delete(&srq);

err_peer_delete:
	ret |= rpma_peer_delete(&peer);

err_free_send:
	free(send);

err_free_recv:
	free(recv);

	return ret ? -1 : 0;
}
