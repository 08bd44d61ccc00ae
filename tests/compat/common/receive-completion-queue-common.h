/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * receive-completion-queue-common.h -- completions of the receive-CQ ping-pongs (12, 12scch):
 * the 08 protocol, with the receives completing on a separate receive CQ
 */
#ifndef RECEIVE_COMPLETION_QUEUE_COMMON_H
#define RECEIVE_COMPLETION_QUEUE_COMMON_H

#include <librpma.h>

#define MSG_SIZE sizeof(uint64_t)
#define I_M_DONE ((uint64_t)UINT64_MAX)
#define RCQ_SIZE 10

/*
 * get_wc_and_validate -- the next completion of cq (waiting with rpma_cq_wait() when there is
 * none), which must be successful and of opcode; 0 or an error (12: separate channels)
 */
int get_wc_and_validate(struct rpma_cq *cq, enum ibv_wc_opcode opcode, struct ibv_wc *wc);

/*
 * what wait_and_validate_completion() has reaped and not handed out yet: on a shared channel a
 * wait for one kind of completion may bring the other kind first
 */
struct compl_state {
	int sends;
	int recvs;
};

/*
 * wait_and_validate_completion -- one completion of opcode (IBV_WC_SEND from the main CQ,
 * IBV_WC_RECV from the receive CQ) through the shared channel (rpma_conn_wait()), checking
 * that rpma_conn_wait() names the right CQ; 0 or an error (12scch)
 */
int wait_and_validate_completion(
	struct rpma_conn *conn, enum ibv_wc_opcode opcode, struct compl_state *state);

#endif /* RECEIVE_COMPLETION_QUEUE_COMMON_H */
