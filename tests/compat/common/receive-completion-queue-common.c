// SPDX-License-Identifier: BSD-3-Clause
/*
 * receive-completion-queue-common.c -- completions of the receive-CQ ping-pongs
 */
#include <inttypes.h>
#include <stdio.h>

#include "receive-completion-queue-common.h"

static int check_wc(const struct ibv_wc *wc, enum ibv_wc_opcode opcode)
{
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "completion failed: %s\n", ibv_wc_status_str(wc->status));
		return -1;
	}
	if (wc->opcode != opcode) {
		fprintf(stderr, "unexpected wc.opcode value (0x%x != 0x%x)\n", (unsigned)wc->opcode,
			(unsigned)opcode);
		return -1;
	}
	if (opcode == IBV_WC_RECV && wc->byte_len != MSG_SIZE) {
		fprintf(stderr, "received %u bytes, expected %zu\n", wc->byte_len, MSG_SIZE);
		return -1;
	}
	return 0;
}

int get_wc_and_validate(struct rpma_cq *cq, enum ibv_wc_opcode opcode, struct ibv_wc *wc)
{
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, wc, NULL)) == RPMA_E_NO_COMPLETION) {
		if ((ret = rpma_cq_wait(cq))) {
			fprintf(stderr, "rpma_cq_wait(): %s\n", rpma_err_2str(ret));
			return ret;
		}
	}
	if (ret) {
		fprintf(stderr, "rpma_cq_get_wc(): %s\n", rpma_err_2str(ret));
		return ret;
	}
	return check_wc(wc, opcode);
}

/* reap what cq has, counting it in state; is_rcq must match every completion's kind */
static int reap(struct rpma_cq *cq, bool is_rcq, struct compl_state *state)
{
	struct ibv_wc wc;
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, &wc, NULL)) == 0) {
		enum ibv_wc_opcode expected = is_rcq ? IBV_WC_RECV : IBV_WC_SEND;
		if (check_wc(&wc, expected)) {
			fprintf(stderr, "(a completion on the %s CQ)\n",
				is_rcq ? "receive" : "main");
			return -1;
		}
		if (is_rcq)
			state->recvs++;
		else
			state->sends++;
	}
	if (ret != RPMA_E_NO_COMPLETION) {
		fprintf(stderr, "rpma_cq_get_wc(): %s\n", rpma_err_2str(ret));
		return ret;
	}
	return 0;
}

int wait_and_validate_completion(
	struct rpma_conn *conn, enum ibv_wc_opcode opcode, struct compl_state *state)
{
	int *want = opcode == IBV_WC_RECV ? &state->recvs : &state->sends;
	while (*want == 0) {
		struct rpma_cq *cq = NULL;
		bool is_rcq = false;
		int ret = rpma_conn_wait(conn, 0, &cq, &is_rcq);
		if (ret) {
			fprintf(stderr, "rpma_conn_wait(): %s\n", rpma_err_2str(ret));
			return ret;
		}
		if ((ret = reap(cq, is_rcq, state)))
			return ret;
	}
	(*want)--;
	return 0;
}
