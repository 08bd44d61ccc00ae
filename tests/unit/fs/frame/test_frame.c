// SPDX-License-Identifier: BSD-3-Clause
/* test_frame.c -- a file-framed message assembled in a pool slot */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/pool.h"
#include "spool/frame.h"

#define SLOT (64u * 1024)

struct fx {
	struct pool *pool;
	struct frame_budget budget;
	struct frame *fr;
};

static int setup(void **state)
{
	static struct fx fx;

	memset(&fx, 0, sizeof(fx));
	assert_int_equal(pool_new(4, SLOT, &fx.pool), 0);
	frame_budget_init(&fx.budget, 3);
	assert_int_equal(frame_new(fx.pool, &fx.budget, &fx.fr), 0);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	frame_delete(&fx->fr);
	assert_null(fx->fr);
	/* every slot is back */
	assert_int_equal(pool_free_count(fx->pool), 4);
	assert_int_equal(atomic_load(&fx->budget.held), 0);
	pool_delete(&fx->pool);
	return 0;
}

/* take the message and check its bytes; the slot goes back to the pool */
static void take_equals(struct fx *fx, const void *want, uint32_t want_len)
{
	unsigned slot;
	uint32_t len;

	assert_int_equal(frame_take(fx->fr, &slot, &len), 1);
	assert_int_equal(len, want_len);
	assert_memory_equal(pool_slot_ptr(fx->pool, slot), want, want_len);
	pool_put(fx->pool, slot);
}

static void budget_leaves_one_slot(void **state)
{
	struct frame_budget b;

	(void)state;
	frame_budget_init(&b, 16);
	assert_int_equal(b.max, 15);
	frame_budget_init(&b, 3);
	assert_int_equal(b.max, 2);
	frame_budget_init(&b, 1);
	assert_int_equal(b.max, 1);
}

static void sequential_writes_are_one_message(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(frame_pending(fx->fr), 0);
	assert_int_equal(frame_write(fx->fr, 0, false, "hello ", 6, SLOT), 0);
	assert_int_equal(frame_write(fx->fr, 6, false, "world", 5, SLOT), 0);
	assert_int_equal(frame_pending(fx->fr), 11);
	take_equals(fx, "hello world", 11);
	assert_int_equal(frame_pending(fx->fr), 0);
}

static void holes_are_zeros_and_overwrites_land(void **state)
{
	struct fx *fx = *state;
	char want[12] = "ab\0\0\0\0\0\0xyZ";

	/* dirty the slot first, so that zeros are not the pool's luck */
	assert_int_equal(frame_write(fx->fr, 0, false, "#############", 12, SLOT), 0);
	assert_int_equal(frame_resize(fx->fr, 0, SLOT), 0);
	assert_int_equal(frame_write(fx->fr, 8, false, "xyz", 3, SLOT), 0);
	assert_int_equal(frame_write(fx->fr, 0, false, "ab", 2, SLOT), 0);
	assert_int_equal(frame_write(fx->fr, 10, false, "Z", 1, SLOT), 0);
	/* the length is the furthest end (11), not the last write's */
	take_equals(fx, want, 11);
}

static void append_ignores_the_offset(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(frame_write(fx->fr, 999999, true, "one", 3, SLOT), 0);
	assert_int_equal(frame_write(fx->fr, 0, true, "two", 3, SLOT), 0);
	take_equals(fx, "onetwo", 6);
}

static void each_take_sends_what_is_new(void **state)
{
	struct fx *fx = *state;
	unsigned slot;
	uint32_t len;

	/* a close with nothing written: nothing to send */
	assert_int_equal(frame_take(fx->fr, &slot, &len), 0);
	assert_int_equal(frame_write(fx->fr, 0, false, "first", 5, SLOT), 0);
	take_equals(fx, "first", 5);
	assert_int_equal(frame_take(fx->fr, &slot, &len), 0);
	/* the next message starts at its first write, wherever the offset is */
	assert_int_equal(frame_write(fx->fr, 7, false, "second", 6, SLOT), 0);
	assert_int_equal(frame_write(fx->fr, 13, false, "!", 1, SLOT), 0);
	take_equals(fx, "second!", 7);
	/* O_APPEND: where the last message ended */
	assert_int_equal(frame_write(fx->fr, 0, true, "3rd", 3, SLOT), 0);
	take_equals(fx, "3rd", 3);
}

static void over_the_limit_abandons_the_message(void **state)
{
	struct fx *fx = *state;
	static char big[SLOT];
	unsigned slot;
	uint32_t len;

	assert_int_equal(frame_write(fx->fr, 0, false, big, 100, 150), 0);
	assert_int_equal(frame_write(fx->fr, 100, false, big, 51, 150), -EFBIG);
	/* the slot is back at once; later writes fail the same way */
	assert_int_equal(pool_free_count(fx->pool), 4);
	assert_int_equal(frame_write(fx->fr, 151, false, big, 1, 150), -EFBIG);
	assert_int_equal(frame_pending(fx->fr), 0);
	assert_int_equal(frame_take(fx->fr, &slot, &len), -EMSGSIZE);
	/* then a fresh message, after the abandoned one */
	assert_int_equal(frame_write(fx->fr, 100, false, "ok", 2, 150), 0);
	take_equals(fx, "ok", 2);
	/* the limit is also the slot: a larger limit does not overrun it */
	assert_int_equal(frame_write(fx->fr, 102, false, big, SLOT, UINT32_MAX), 0);
	assert_int_equal(frame_take(fx->fr, &slot, &len), 1);
	pool_put(fx->pool, slot);
	assert_int_equal(frame_write(fx->fr, 102 + SLOT, false, big, SLOT + 1, UINT32_MAX), -EFBIG);
	assert_int_equal(frame_take(fx->fr, &slot, &len), -EMSGSIZE);
	/* a hole that takes it over the limit */
	assert_int_equal(frame_resize(fx->fr, 102 + 2 * SLOT + 1 + 200, 150), -EFBIG);
	assert_int_equal(frame_take(fx->fr, &slot, &len), -EMSGSIZE);
}

static void any_failed_write_abandons_the_message(void **state)
{
	struct fx *fx = *state;
	unsigned slot;
	uint32_t len;

	/* before the message's start: EINVAL, and nothing of it is sent */
	assert_int_equal(frame_write(fx->fr, 0, false, "one", 3, SLOT), 0);
	take_equals(fx, "one", 3);
	assert_int_equal(frame_write(fx->fr, 10, false, "two", 3, SLOT), 0);
	assert_int_equal(frame_write(fx->fr, 9, false, "x", 1, SLOT), -EINVAL);
	assert_int_equal(frame_write(fx->fr, 13, false, "y", 1, SLOT), -EINVAL);
	assert_int_equal(pool_free_count(fx->pool), 4);
	assert_int_equal(frame_take(fx->fr, &slot, &len), -EINVAL);
	/* a failure the caller saw elsewhere (an earlier message's EIO) */
	assert_int_equal(frame_write(fx->fr, 20, false, "three", 5, SLOT), 0);
	frame_abandon(fx->fr, EIO);
	assert_int_equal(frame_write(fx->fr, 25, false, "z", 1, SLOT), -EIO);
	assert_int_equal(frame_pending(fx->fr), 0);
	assert_int_equal(frame_take(fx->fr, &slot, &len), -EIO);
	/* then it works again */
	assert_int_equal(frame_write(fx->fr, 30, false, "four", 4, SLOT), 0);
	take_equals(fx, "four", 4);
}

static void resize_extends_with_zeros_and_cuts(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(frame_write(fx->fr, 0, false, "abcdef", 6, SLOT), 0);
	assert_int_equal(frame_resize(fx->fr, 3, SLOT), 0);
	assert_int_equal(frame_resize(fx->fr, 5, SLOT), 0);
	take_equals(fx, "abc\0\0", 5);
	assert_int_equal(frame_resize(fx->fr, 2, SLOT), -EINVAL);
}

static void the_budget_bounds_frames_holding_slots(void **state)
{
	struct fx *fx = *state;
	struct frame *other, *third;
	unsigned slot;
	uint32_t len;

	/* a budget of 3 slots: 2 frames at once */
	assert_int_equal(frame_new(fx->pool, &fx->budget, &other), 0);
	assert_int_equal(frame_new(fx->pool, &fx->budget, &third), 0);
	assert_int_equal(frame_write(fx->fr, 0, false, "a", 1, SLOT), 0);
	assert_int_equal(frame_write(other, 0, false, "b", 1, SLOT), 0);
	assert_int_equal(frame_write(third, 0, false, "c", 1, SLOT), -ENOBUFS);
	assert_int_equal(pool_free_count(fx->pool), 2);
	/* the message that found no slot is abandoned: its close says why */
	assert_int_equal(frame_take(third, &slot, &len), -ENOBUFS);
	/* a taken message's slot no longer counts against the budget */
	assert_int_equal(frame_take(other, &slot, &len), 1);
	assert_int_equal(frame_write(third, 0, false, "c", 1, SLOT), 0);
	pool_put(fx->pool, slot);
	frame_delete(&other);
	frame_delete(&third);
	assert_int_equal(atomic_load(&fx->budget.held), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(budget_leaves_one_slot),
		cmocka_unit_test_setup_teardown(sequential_writes_are_one_message, setup, teardown),
		cmocka_unit_test_setup_teardown(
			holes_are_zeros_and_overwrites_land, setup, teardown),
		cmocka_unit_test_setup_teardown(append_ignores_the_offset, setup, teardown),
		cmocka_unit_test_setup_teardown(each_take_sends_what_is_new, setup, teardown),
		cmocka_unit_test_setup_teardown(
			over_the_limit_abandons_the_message, setup, teardown),
		cmocka_unit_test_setup_teardown(
			any_failed_write_abandons_the_message, setup, teardown),
		cmocka_unit_test_setup_teardown(
			resize_extends_with_zeros_and_cuts, setup, teardown),
		cmocka_unit_test_setup_teardown(
			the_budget_bounds_frames_holding_slots, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
