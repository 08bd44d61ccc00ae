// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_err.c -- rpma_err_2str(): the text of every code, and of codes that do not exist
 */
#include "unit.h"

static void test_every_code_has_its_text(void **state)
{
	(void)state;
	static const struct {
		int code;
		const char *text;
	} table[] = {
		{0, "Success"},
		{RPMA_E_UNKNOWN, "Unknown error"},
		{RPMA_E_NOSUPP, "Not supported"},
		{RPMA_E_PROVIDER, "Provider error occurred"},
		{RPMA_E_NOMEM, "Out of memory"},
		{RPMA_E_INVAL, "Invalid argument"},
		{RPMA_E_NO_COMPLETION, "No next completion available"},
		{RPMA_E_NO_EVENT, "No next event available"},
		{RPMA_E_AGAIN, "Temporary error, try again"},
		{RPMA_E_SHARED_CHANNEL, "Completion channel is shared"},
		{RPMA_E_NOT_SHARED_CHNL, "Completion channel is not shared"},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		assert_string_equal(rpma_err_2str(table[i].code), table[i].text);
}

static void test_codes_keep_librpma_values(void **state)
{
	(void)state;
	assert_int_equal(RPMA_E_UNKNOWN, -100000);
	assert_int_equal(RPMA_E_NOSUPP, -100001);
	assert_int_equal(RPMA_E_PROVIDER, -100002);
	assert_int_equal(RPMA_E_NOMEM, -100003);
	assert_int_equal(RPMA_E_INVAL, -100004);
	assert_int_equal(RPMA_E_NO_COMPLETION, -100005);
	assert_int_equal(RPMA_E_NO_EVENT, -100006);
	assert_int_equal(RPMA_E_AGAIN, -100007);
	assert_int_equal(RPMA_E_SHARED_CHANNEL, -100008);
	assert_int_equal(RPMA_E_NOT_SHARED_CHNL, -100009);
}

static void test_other_codes_are_unknown(void **state)
{
	(void)state;
	assert_string_equal(rpma_err_2str(1), "Unknown error");
	assert_string_equal(rpma_err_2str(-1), "Unknown error");
	assert_string_equal(rpma_err_2str(-100010), "Unknown error");
	assert_string_equal(rpma_err_2str(-99999), "Unknown error");
	assert_string_equal(rpma_err_2str(INT32_MIN), "Unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_code_has_its_text),
		cmocka_unit_test(test_codes_keep_librpma_values),
		cmocka_unit_test(test_other_codes_are_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
