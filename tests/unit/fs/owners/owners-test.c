// SPDX-License-Identifier: BSD-3-Clause
/* owners-test.c -- fs/owners.c: the writers of a descriptor, as FLUSH asks */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "spool/owners.h"

static void nobody_wrote_yet(void **state)
{
	struct owners o = {0};

	(void)state;
	assert_false(owners_has(&o, 0x1234));
}

static void a_writer_is_known_others_are_not(void **state)
{
	struct owners o = {0};

	(void)state;
	owners_add(&o, 0x1234);
	owners_add(&o, 0x1234); /* the same process again: one entry */
	assert_int_equal(o.n, 1);
	assert_true(owners_has(&o, 0x1234));
	/* a child closing the descriptor it inherited */
	assert_false(owners_has(&o, 0x5678));
}

static void past_the_set_everyone_counts(void **state)
{
	struct owners o = {0};

	(void)state;
	for (uint64_t i = 1; i <= OWNERS_MAX; i++)
		owners_add(&o, i);
	assert_false(owners_has(&o, 99));
	owners_add(&o, OWNERS_MAX + 1); /* one too many: cannot tell them apart */
	assert_true(owners_has(&o, 99));
}

static void a_write_without_owner_makes_everyone_count(void **state)
{
	struct owners o = {0};

	(void)state;
	owners_add(&o, 7);
	owners_add(&o, 0);
	assert_true(owners_has(&o, 8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nobody_wrote_yet),
		cmocka_unit_test(a_writer_is_known_others_are_not),
		cmocka_unit_test(past_the_set_everyone_counts),
		cmocka_unit_test(a_write_without_owner_makes_everyone_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
