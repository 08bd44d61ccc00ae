// SPDX-License-Identifier: BSD-3-Clause
/*
 * common-messages-ping-pong.c -- completions of the ping-pong
 */
#include <inttypes.h>
#include <stdio.h>

#include "common-messages-ping-pong.h"

int validate_wc(const struct ibv_wc *wc, const uint64_t *recv, int *send_cmpl, int *recv_cmpl)
{
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "completion of wr_id 0x%" PRIx64 " failed: %s\n", wc->wr_id,
			ibv_wc_status_str(wc->status));
		return -1;
	}

	if (wc->opcode == IBV_WC_SEND) {
		*send_cmpl += 1;
	} else if (wc->opcode == IBV_WC_RECV) {
		if (wc->wr_id != (uintptr_t)recv || wc->byte_len != MSG_SIZE) {
			fprintf(stderr, "unexpected receive: wr_id 0x%" PRIx64 ", %u bytes\n",
				wc->wr_id, wc->byte_len);
			return -1;
		}
		*recv_cmpl += 1;
	} else {
		fprintf(stderr, "unexpected wc.opcode %d\n", (int)wc->opcode);
		return -1;
	}
	return 0;
}

int wait_and_process_completions(
	struct rpma_cq *cq, const uint64_t *recv, int *send_cmpl, int *recv_cmpl)
{
	int unused = 1;
	if (send_cmpl == NULL)
		send_cmpl = &unused;

	do {
		int ret = rpma_cq_wait(cq);
		if (ret) {
			fprintf(stderr, "rpma_cq_wait(): %s\n", rpma_err_2str(ret));
			return ret;
		}

		/* one event may stand for both completions, or for none left to reap */
		struct ibv_wc wc[2];
		int num_got = 0;
		ret = rpma_cq_get_wc(cq, 2, wc, &num_got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret) {
			fprintf(stderr, "rpma_cq_get_wc(): %s\n", rpma_err_2str(ret));
			return ret;
		}
		for (int i = 0; i < num_got; i++)
			if (validate_wc(&wc[i], recv, send_cmpl, recv_cmpl))
				return -1;
	} while (*send_cmpl == 0 || *recv_cmpl == 0);

	return 0;
}
