// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_memlock.c -- the pool's sizing rule (memlock_fit): big buffers and
 * small slots within RLIMIT_MEMLOCK, on the figures of a mount
 * (docs/design.md §4.5): buffers of 1 MiB + 4 KiB, 4 workers, one RDMA
 * peer (288 KiB kept for the provider), 256 small slots of 4 KiB wanted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/memlock.h"

#define BUF 1052672ull
#define KEEP (288ull << 10)
#define SMALL 4096u
#define MIB (1ull << 20)

static int fit(unsigned long long limit, unsigned slots, bool set, struct memlock_plan *plan,
	unsigned long long *most)
{
	*plan = (struct memlock_plan){0};
	return memlock_fit(limit, KEEP, slots, set, 16, 2, 4, BUF, 256, SMALL, plan, most);
}

/* Debian's 8 MiB for an ordinary user: 2 big slots and all 256 small ones */
static void ordinary_user_gets_256_small_slots(void **state)
{
	struct memlock_plan plan;
	unsigned long long most;

	(void)state;
	assert_int_equal(fit(8 * MIB, 0, false, &plan, &most), 0);
	assert_int_equal(plan.slots, 2);
	assert_int_equal(plan.small, 256);
	assert_true(plan.sized);
	assert_int_equal(most, 3); /* without the small slots, 3 would fit */
	/* it fits: (2 + 4) x BUF + 256 x 4 KiB + KEEP <= 8 MiB */
	assert_true((2 + 4) * BUF + 256ull * SMALL + KEEP <= 8 * MIB);
}

/* no limit (root, CAP_IPC_LOCK, unlimited): the defaults */
static void no_limit_takes_the_defaults(void **state)
{
	struct memlock_plan plan;
	unsigned long long most;

	(void)state;
	assert_int_equal(fit(0, 0, false, &plan, &most), 0);
	assert_int_equal(plan.slots, 16);
	assert_int_equal(plan.small, 256);
	assert_false(plan.sized);
	assert_int_equal(fit(0, 40, true, &plan, &most), 0);
	assert_int_equal(plan.slots, 40);
	assert_int_equal(plan.small, 256);
}

/* slots set: the big buffers as asked, the small slots what they leave */
static void set_slots_leave_the_rest_to_small_slots(void **state)
{
	struct memlock_plan plan;
	unsigned long long most;

	(void)state;
	assert_int_equal(fit(8 * MIB, 3, true, &plan, &most), 0);
	assert_int_equal(plan.slots, 3);
	assert_int_equal(plan.small, (8 * MIB - KEEP - 7 * BUF) / SMALL); /* 177 */
	assert_int_equal(plan.small, 177);
	assert_false(plan.sized);
	/* one more does not fit at all: refused, with how many would */
	assert_int_equal(fit(8 * MIB, 4, true, &plan, &most), -1);
	assert_int_equal(most, 3);
	/* a large limit: no more small slots than wanted */
	assert_int_equal(fit(64 * MIB, 16, true, &plan, &most), 0);
	assert_int_equal(plan.small, 256);
}

/* a limit with room for the big minimum but not all small slots: fewer small ones */
static void tight_limit_shrinks_the_small_slots(void **state)
{
	struct memlock_plan plan;
	unsigned long long most;
	unsigned long long limit = KEEP + 6 * BUF + 100 * SMALL + 10;

	(void)state;
	assert_int_equal(fit(limit, 0, false, &plan, &most), 0);
	assert_int_equal(plan.slots, 2);
	assert_int_equal(plan.small, 100);
	/* not even the minimum of big slots: refused */
	assert_int_equal(fit(KEEP + 5 * BUF, 0, false, &plan, &most), -1);
	assert_int_equal(most, 1);
}

/* a large limit: the small slots first, then the big ones up to the default */
static void large_limit_keeps_room_for_small_slots(void **state)
{
	struct memlock_plan plan;
	unsigned long long most;
	/* room for exactly 16 big buffers and not quite all small slots besides */
	unsigned long long limit = KEEP + 20 * BUF + 255ull * SMALL;

	(void)state;
	assert_int_equal(fit(limit, 0, false, &plan, &most), 0);
	assert_int_equal(plan.slots, 15);
	assert_int_equal(plan.small, 256);
	assert_true(plan.sized);
	assert_int_equal(fit(limit + SMALL, 0, false, &plan, &most), 0);
	assert_int_equal(plan.slots, 16);
	assert_int_equal(plan.small, 256);
	assert_false(plan.sized);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ordinary_user_gets_256_small_slots),
		cmocka_unit_test(no_limit_takes_the_defaults),
		cmocka_unit_test(set_slots_leave_the_rest_to_small_slots),
		cmocka_unit_test(tight_limit_shrinks_the_small_slots),
		cmocka_unit_test(large_limit_keeps_room_for_small_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
