// SPDX-License-Identifier: BSD-3-Clause
/*
 * client.c -- the shared completion channel pattern (librpma's 12scch-receive-completion-queue):
 * the 12 client with both CQs on one channel, waited for with rpma_conn_wait(), and the fd of
 * the channel checked to be what both CQs report. No <stdio.h>: printf() and stderr come
 * through <librpma.h>.
 */
#include <librpma.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "common-conn.h"
#include "receive-completion-queue-common.h"

#define USAGE_STR "usage: %s <server_address> <port> <start_value> <rounds> [<sleep>]\n"

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
	uint64_t counter = strtoul_noerror(argv[3]);
	uint64_t rounds = strtoul_noerror(argv[4]);
	uint64_t sleep_usec = argc >= 6 ? strtoul_noerror(argv[5]) : 0;
	int ret;

	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	struct compl_state state = {0, 0};

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

	struct rpma_conn_cfg *cfg = NULL;
	if ((ret = rpma_conn_cfg_new(&cfg)))
		goto err_mr_dereg;
	if ((ret = rpma_conn_cfg_set_rcq_size(cfg, RCQ_SIZE)))
		goto err_cfg_delete;
	if ((ret = rpma_conn_cfg_set_compl_channel(cfg, true)))
		goto err_cfg_delete;

	if ((ret = client_connect(peer, addr, port, cfg, NULL, &conn)))
		goto err_cfg_delete;

	/* one channel: both CQs report its fd */
	int fd = -1, cq_fd = -1, rcq_fd = -1;
	if ((ret = rpma_conn_get_compl_fd(conn, &fd)) || (ret = rpma_conn_get_cq(conn, &cq)) ||
		(ret = rpma_conn_get_rcq(conn, &rcq)) || (ret = rpma_cq_get_fd(cq, &cq_fd)) ||
		(ret = rpma_cq_get_fd(rcq, &rcq_fd)))
		goto err_conn_disconnect;
	if (cq_fd != fd || rcq_fd != fd) {
		fprintf(stderr, "the completion channel is not shared (fds %d, %d, %d)\n", fd,
			cq_fd, rcq_fd);
		ret = -1;
		goto err_conn_disconnect;
	}

	while (rounds--) {
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv)))
			break;

		printf("CLIENT: Value sent: %" PRIu64 "\n", counter);
		*send = counter;
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL)))
			break;

		if ((ret = wait_and_validate_completion(conn, IBV_WC_SEND, &state)))
			break;
		if ((ret = wait_and_validate_completion(conn, IBV_WC_RECV, &state)))
			break;

		if (*recv != counter + 1) {
			fprintf(stderr, "CLIENT: sent %" PRIu64 ", the answer is %" PRIu64 "\n",
				counter, *recv);
			ret = -1;
			break;
		}
		counter = *recv;
		printf("CLIENT: Value received: %" PRIu64 "\n", counter);

		if (sleep_usec > 0)
			(void)usleep(sleep_usec);
	}

	*send = I_M_DONE;
	ret |= rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL);

err_conn_disconnect:
	ret |= common_wait_for_conn_close_and_disconnect(&conn);

err_cfg_delete:
	ret |= rpma_conn_cfg_delete(&cfg);

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
