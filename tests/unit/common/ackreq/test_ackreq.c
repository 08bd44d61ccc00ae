// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_ackreq.c -- common/ackreq.c: numbered messages, re-sends, REQUESTs
 * and what the protocol does not allow, with the strings the receivers log
 */

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ack.h"
#include "ackreq.h"

/* a receive completion from an acknowledging sender: imm in host order */
static struct ibv_wc wc_imm(uint32_t imm, uint32_t len)
{
	struct ibv_wc wc = {.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.byte_len = len,
		.wc_flags = IBV_WC_WITH_IMM,
		.imm_data = htonl(imm)};

	return wc;
}

static struct {
	uint32_t num;
	bool prompt;
	const char *why;
} R;

static enum rpmafs_ackreq_kind take(struct rpmafs_ackreq *rq, uint32_t imm, uint32_t len)
{
	struct ibv_wc wc = wc_imm(imm, len);

	R.num = 0xdeadbeef;
	R.prompt = true; /* must be set whatever the kind */
	R.why = NULL;
	return rpmafs_ackreq_take(rq, &wc, &R.num, &R.prompt, &R.why);
}

/* the first message is taken whatever its number; later ones must come after it */
static void records(void **state)
{
	struct rpmafs_ackreq rq = {0};

	(void)state;
	assert_int_equal(take(&rq, 5, 3), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(R.num, 5);
	assert_false(R.prompt);
	assert_true(rq.seen_any);
	assert_int_equal(rq.seen, 5);
	/* a gap is allowed: a message that failed for its own fault is not sent again */
	assert_int_equal(take(&rq, 9, 0), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(rq.seen, 9);
	/* a waiting sender says so; the number is what is below the flag bits */
	assert_int_equal(take(&rq, 10 | RPMAFS_IMM_PROMPT, 1), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(R.num, 10);
	assert_true(R.prompt);
	assert_int_equal(rq.seen, 10);
	assert_int_equal(rq.requests, 0);
}

/* a number not after the last one taken is a re-send: not taken, the state unchanged */
static void duplicates(void **state)
{
	struct rpmafs_ackreq rq = {0};

	(void)state;
	assert_int_equal(take(&rq, 6, 3), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(take(&rq, 6, 3), RPMAFS_ACKREQ_DUPLICATE);
	assert_int_equal(R.num, 6);
	assert_false(R.prompt);
	assert_int_equal(take(&rq, 2 | RPMAFS_IMM_PROMPT, 3), RPMAFS_ACKREQ_DUPLICATE);
	assert_int_equal(R.num, 2);
	assert_true(R.prompt); /* its sender still waits for an answer */
	assert_int_equal(rq.seen, 6);
	assert_int_equal(take(&rq, 7, 3), RPMAFS_ACKREQ_RECORD);
}

/* numbers wrap at 2^30; "after" is within half the number space ahead */
static void wrap_and_half_space(void **state)
{
	struct rpmafs_ackreq rq = {.seen_any = true, .seen = RPMAFS_SEQ_MASK};

	(void)state;
	assert_int_equal(take(&rq, 0, 1), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(R.num, 0);
	assert_int_equal(rq.seen, 0);
	assert_int_equal(take(&rq, RPMAFS_SEQ_MASK, 1), RPMAFS_ACKREQ_DUPLICATE);
	/* half the space ahead is behind: a re-send from long ago */
	assert_int_equal(take(&rq, 1u << 29, 1), RPMAFS_ACKREQ_DUPLICATE);
	assert_int_equal(take(&rq, (1u << 29) - 1, 1), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(rq.seen, (1u << 29) - 1);
}

/* a REQUEST is counted (modulo 2^16), asks for an answer, and takes no number */
static void requests(void **state)
{
	struct rpmafs_ackreq rq = {0};

	(void)state;
	assert_int_equal(take(&rq, 3, 1), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(take(&rq, RPMAFS_IMM_REQUEST, 0), RPMAFS_ACKREQ_REQUEST);
	assert_true(R.prompt);
	assert_int_equal(R.num, 0xdeadbeef);
	assert_int_equal(rq.requests, 1);
	assert_int_equal(
		take(&rq, RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT, 0), RPMAFS_ACKREQ_REQUEST);
	assert_int_equal(rq.requests, 2);
	assert_int_equal(rq.seen, 3);
	rq.requests = UINT16_MAX;
	assert_int_equal(take(&rq, RPMAFS_IMM_REQUEST, 0), RPMAFS_ACKREQ_REQUEST);
	assert_int_equal(rq.requests, 0);
	/* the next number is still the one after 3 */
	assert_int_equal(take(&rq, 3, 1), RPMAFS_ACKREQ_DUPLICATE);
	assert_int_equal(take(&rq, 4, 1), RPMAFS_ACKREQ_RECORD);
}

/* what the protocol does not allow: BAD, why says it, and nothing is taken */
static void bad(void **state)
{
	struct rpmafs_ackreq rq = {0};
	struct ibv_wc wc = wc_imm(1, 4);

	(void)state;
	assert_int_equal(take(&rq, RPMAFS_IMM_REQUEST, 0), RPMAFS_ACKREQ_BAD);
	assert_string_equal(R.why, "an acknowledgement request before any message");
	assert_false(R.prompt);
	assert_false(rq.seen_any);
	assert_int_equal(rq.requests, 0);
	wc.wc_flags = 0;
	R.why = NULL;
	assert_int_equal(
		rpmafs_ackreq_take(&rq, &wc, &R.num, &R.prompt, &R.why), RPMAFS_ACKREQ_BAD);
	assert_string_equal(R.why, "a message without its number from an acknowledging sender");
	assert_false(rq.seen_any);
	assert_int_equal(take(&rq, 1, 4), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(take(&rq, RPMAFS_IMM_REQUEST, 8), RPMAFS_ACKREQ_BAD);
	assert_string_equal(R.why, "an acknowledgement request with a payload or a number");
	assert_int_equal(take(&rq, RPMAFS_IMM_REQUEST | 3, 0), RPMAFS_ACKREQ_BAD);
	assert_string_equal(R.why, "an acknowledgement request with a payload or a number");
	assert_false(R.prompt);
	/* and a numbered message without its flag, after others, is still BAD */
	assert_int_equal(
		rpmafs_ackreq_take(&rq, &wc, &R.num, &R.prompt, &R.why), RPMAFS_ACKREQ_BAD);
	assert_int_equal(rq.seen, 1);
	assert_int_equal(rq.requests, 0);
}

/* prompt may be NULL (the inbox answers at read, waiting or not) */
static void prompt_not_wanted(void **state)
{
	struct rpmafs_ackreq rq = {0};
	struct ibv_wc wc = wc_imm(1 | RPMAFS_IMM_PROMPT, 4);
	const char *why = NULL;
	uint32_t num = 0;

	(void)state;
	assert_int_equal(rpmafs_ackreq_take(&rq, &wc, &num, NULL, &why), RPMAFS_ACKREQ_RECORD);
	assert_int_equal(num, 1);
	wc = wc_imm(RPMAFS_IMM_REQUEST, 0);
	assert_int_equal(rpmafs_ackreq_take(&rq, &wc, &num, NULL, &why), RPMAFS_ACKREQ_REQUEST);
	assert_int_equal(rq.requests, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records),
		cmocka_unit_test(duplicates),
		cmocka_unit_test(wrap_and_half_space),
		cmocka_unit_test(requests),
		cmocka_unit_test(bad),
		cmocka_unit_test(prompt_not_wanted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
