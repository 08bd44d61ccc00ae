// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_confirm.c -- tools/rpma-recv/confirm.c without a connection: which
 * receive completions are records, duplicates, requests or protocol
 * errors, and when an acknowledgement is due (prompt, every
 * RECV_ACK_EVERY records, RECV_ACK_DELAY_MS)
 */

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ack.h"
#include "confirm.h"

static struct ibv_wc wc_imm(uint32_t imm, uint32_t len)
{
	struct ibv_wc wc = {.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .byte_len = len,
		.wc_flags = IBV_WC_WITH_IMM, .imm_data = htonl(imm)};

	return wc;
}

static enum recv_take take(struct recv_confirm *rc, uint32_t imm, uint32_t len, uint32_t *num)
{
	struct ibv_wc wc = wc_imm(imm, len);
	const char *why = NULL;
	enum recv_take t = recv_confirm_take(rc, &wc, num, &why);

	if (t == RECV_TAKE_BAD)
		assert_non_null(why);
	return t;
}

static void records_and_duplicates(void **state)
{
	struct recv_confirm rc = {0};
	uint32_t num = 0;

	(void)state;
	assert_int_equal(take(&rc, 5, 3, &num), RECV_TAKE_RECORD);
	assert_int_equal(num, 5);
	assert_int_equal(take(&rc, 6, 3, &num), RECV_TAKE_RECORD);
	/* a number already taken: a re-send */
	assert_int_equal(take(&rc, 6, 3, &num), RECV_TAKE_DUPLICATE);
	assert_int_equal(take(&rc, 2, 3, &num), RECV_TAKE_DUPLICATE);
	assert_int_equal(rc.duplicates, 2);
	/* gaps are allowed (a message failed for its own fault is not sent again) */
	assert_int_equal(take(&rc, 9, 0, &num), RECV_TAKE_RECORD);
	/* numbers wrap */
	rc.req.seen = RPMAFS_SEQ_MASK;
	assert_int_equal(take(&rc, 0, 1, &num), RECV_TAKE_RECORD);
	assert_int_equal(num, 0);
}

static void protocol_errors(void **state)
{
	struct recv_confirm rc = {0};
	struct ibv_wc wc = wc_imm(1, 4);
	const char *why = NULL;
	uint32_t num;

	(void)state;
	/* a request before any message: there is nothing to acknowledge */
	assert_int_equal(take(&rc, RPMAFS_IMM_REQUEST, 0, &num), RECV_TAKE_BAD);
	wc.wc_flags = 0; /* no number from a sender that said it would number */
	assert_int_equal(recv_confirm_take(&rc, &wc, &num, &why), RECV_TAKE_BAD);
	assert_non_null(strstr(why, "number"));
	assert_int_equal(take(&rc, 1, 4, &num), RECV_TAKE_RECORD);
	assert_int_equal(take(&rc, RPMAFS_IMM_REQUEST, 8, &num), RECV_TAKE_BAD); /* payload */
	assert_int_equal(take(&rc, RPMAFS_IMM_REQUEST | 3, 0, &num), RECV_TAKE_BAD);
	assert_int_equal(take(&rc, RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT, 0, &num),
		RECV_TAKE_REQUEST);
	assert_int_equal(rc.req.requests, 1);
}

static void when_an_ack_is_due(void **state)
{
	struct recv_confirm rc = {0};
	uint32_t num;

	(void)state;
	assert_int_equal(recv_confirm_due(&rc, 1000), -1); /* nothing written */
	assert_int_equal(take(&rc, 1, 4, &num), RECV_TAKE_RECORD);
	recv_confirm_written(&rc, num, 1000);
	/* batched: due after the delay */
	assert_int_equal(recv_confirm_due(&rc, 1000), RECV_ACK_DELAY_MS);
	assert_int_equal(recv_confirm_due(&rc, 1000 + RECV_ACK_DELAY_MS), 0);
	/* every RECV_ACK_EVERY records at once */
	for (uint32_t n = 2; n <= RECV_ACK_EVERY; n++) {
		assert_int_equal(take(&rc, n, 4, &num), RECV_TAKE_RECORD);
		recv_confirm_written(&rc, num, 1000);
	}
	assert_int_equal(recv_confirm_due(&rc, 1000), 0);
	/* as if sent: nothing owed */
	rc.acked_any = true;
	rc.acked = rc.written;
	rc.unacked = 0;
	assert_int_equal(recv_confirm_due(&rc, 1000), -1);
	/* a sender waiting: at once */
	assert_int_equal(take(&rc, 100, 4, &num), RECV_TAKE_RECORD);
	recv_confirm_written(&rc, num, 2000);
	assert_int_equal(recv_confirm_due(&rc, 2000), RECV_ACK_DELAY_MS);
	assert_int_equal(take(&rc, 101 | RPMAFS_IMM_PROMPT, 4, &num), RECV_TAKE_RECORD);
	recv_confirm_written(&rc, num, 2000);
	assert_int_equal(recv_confirm_due(&rc, 2000), 0);
	/* a request answered even with nothing new written */
	rc.acked = rc.written;
	rc.unacked = 0;
	rc.prompt = false;
	assert_int_equal(recv_confirm_due(&rc, 2000), -1);
	assert_int_equal(take(&rc, RPMAFS_IMM_REQUEST, 0, &num), RECV_TAKE_REQUEST);
	assert_int_equal(recv_confirm_due(&rc, 2000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_and_duplicates),
		cmocka_unit_test(protocol_errors),
		cmocka_unit_test(when_an_ack_is_due),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
