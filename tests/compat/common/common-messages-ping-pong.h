/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common-messages-ping-pong.h -- the ping-pong protocol of the compat programs: the client
 * sends a counter, the server answers with the counter + 1, the client sends that, and so on;
 * I_M_DONE ends it. One 8-byte message each way per round.
 */
#ifndef COMMON_MESSAGES_PING_PONG_H
#define COMMON_MESSAGES_PING_PONG_H

#include <librpma.h>

#define MSG_SIZE sizeof(uint64_t)
#define I_M_DONE ((uint64_t)UINT64_MAX)

/*
 * validate_wc -- check one completion of the ping-pong: successful, a SEND or a RECV (whose
 * wr_id is the receive buffer, recv); counts it in *send_cmpl or *recv_cmpl; 0 or -1
 */
int validate_wc(const struct ibv_wc *wc, const uint64_t *recv, int *send_cmpl, int *recv_cmpl);

/*
 * wait_and_process_completions -- wait on cq until the SEND (unless send_cmpl is NULL) and the
 * RECV of this round have completed; 0 or an error
 */
int wait_and_process_completions(
	struct rpma_cq *cq, const uint64_t *recv, int *send_cmpl, int *recv_cmpl);

#endif /* COMMON_MESSAGES_PING_PONG_H */
