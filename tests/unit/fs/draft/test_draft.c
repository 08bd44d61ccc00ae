// SPDX-License-Identifier: BSD-3-Clause
/* test_draft.c -- the draft table: names, bytes, limits, renames */

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fuse/draft.h"

#define FIRST 1000

static int setup(void **state)
{
	struct drafts *d = NULL;

	assert_int_equal(drafts_new(3, 10000, FIRST, &d), 0);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct drafts *d = *state;

	drafts_delete(&d);
	assert_null(d);
	return 0;
}

static uint64_t make(struct drafts *d, const char *name)
{
	struct draft_attr a;
	const char *which = NULL;

	assert_int_equal(drafts_create(d, name, 7, 8, 0600, &a, &which), 0);
	return a.ino;
}

static void create_lookup_and_attributes(void **state)
{
	struct drafts *d = *state;
	struct draft_attr a, b;
	const char *which = NULL;
	uint64_t ino = make(d, ".alpha.Xb3kQ1");

	assert_true(drafts_is_ino(d, ino));
	assert_false(drafts_is_ino(d, FIRST - 1));
	assert_int_equal(drafts_lookup(d, ".alpha.Xb3kQ1", &a), 0);
	assert_int_equal(a.ino, ino);
	assert_int_equal(a.uid, 7);
	assert_int_equal(a.gid, 8);
	assert_int_equal(a.mode, 0600);
	assert_int_equal(a.size, 0);
	assert_int_equal(drafts_getattr(d, ino, &b), 0);
	assert_string_equal(b.ino == a.ino ? "same" : "other", "same");
	assert_int_equal(drafts_create(d, ".alpha.Xb3kQ1", 7, 8, 0600, &a, &which), -EEXIST);
	assert_int_equal(drafts_lookup(d, "nope", &a), -ENOENT);
	/* inode numbers are not reused */
	assert_int_equal(drafts_unlink(d, ".alpha.Xb3kQ1"), 0);
	assert_true(make(d, ".alpha.Xb3kQ1") > ino);
}

static void write_read_holes_and_truncate(void **state)
{
	struct drafts *d = *state;
	const char *which = NULL;
	uint64_t ino = make(d, "tmpa8f2");
	struct draft_attr a;
	char buf[32];

	assert_int_equal(drafts_write(d, ino, 0, "head", 4, &which), 0);
	assert_int_equal(drafts_write(d, ino, 8, "tail", 4, &which), 0);
	assert_int_equal(drafts_read(d, ino, 0, buf, sizeof(buf)), 12);
	assert_memory_equal(buf, "head\0\0\0\0tail", 12);
	assert_int_equal(drafts_read(d, ino, 10, buf, 1), 1);
	assert_int_equal(buf[0], 'i');
	assert_int_equal(drafts_read(d, ino, 50, buf, 4), 0);
	assert_int_equal(drafts_setattr(d, ino, true, 0644, true, 2, NULL, &which), 0);
	assert_int_equal(drafts_getattr(d, ino, &a), 0);
	assert_int_equal(a.size, 2);
	assert_int_equal(a.mode, 0644);
	assert_int_equal(drafts_read(d, ino + 99, 0, buf, 4), -ENOENT);
	assert_int_equal(drafts_write(d, ino + 99, 0, "x", 1, &which), -ENOENT);
}

static void limits_say_which(void **state)
{
	struct drafts *d = *state;
	static char big[DRAFT_MAX_BYTES + 1];
	const char *which = NULL;
	struct draft_attr a;
	uint64_t one = make(d, "one");
	unsigned count, max;
	size_t bytes, budget;

	make(d, "two");
	make(d, "three");
	assert_int_equal(drafts_create(d, "four", 7, 8, 0600, &a, &which), -ENOSPC);
	assert_string_equal(which, "drafts");
	/* the byte budget of the table (10000) */
	assert_int_equal(drafts_write(d, one, 0, big, 9000, &which), 0);
	which = NULL;
	assert_int_equal(drafts_write(d, one, 9000, big, 1001, &which), -ENOSPC);
	assert_string_equal(which, "draft_bytes");
	drafts_usage(d, &count, &bytes, &max, &budget);
	assert_int_equal(count, 3);
	assert_int_equal(bytes, 9000);
	assert_int_equal(max, 3);
	assert_int_equal(budget, 10000);
	/* unlink gives the room back */
	assert_int_equal(drafts_unlink(d, "one"), 0);
	assert_int_equal(drafts_unlink(d, "one"), -ENOENT);
	drafts_usage(d, &count, &bytes, &max, &budget);
	assert_int_equal(count, 2);
	assert_int_equal(bytes, 0);
	assert_int_equal(drafts_create(d, "four", 7, 8, 0600, &a, &which), 0);
}

static void one_draft_is_at_most_the_largest_message(void **state)
{
	struct drafts *d = NULL;
	static char big[DRAFT_MAX_BYTES + 1];
	const char *which = NULL;
	struct draft_attr a;

	(void)state;
	assert_int_equal(drafts_new(2, 4u << 20, FIRST, &d), 0);
	assert_int_equal(drafts_create(d, "x", 0, 0, 0600, &a, &which), 0);
	assert_int_equal(drafts_write(d, a.ino, 0, big, DRAFT_MAX_BYTES, &which), 0);
	assert_int_equal(drafts_write(d, a.ino, DRAFT_MAX_BYTES, big, 1, &which), -EFBIG);
	drafts_delete(&d);
}

static void rename_and_copy_out(void **state)
{
	struct drafts *d = *state;
	const char *which = NULL;
	uint64_t a = make(d, "a"), b = make(d, "b");
	struct draft_attr at;
	char buf[8], name[NAME_MAX + 1];
	uint64_t ino;

	assert_int_equal(drafts_write(d, a, 0, "AAA", 3, &which), 0);
	assert_int_equal(drafts_write(d, b, 0, "BB", 2, &which), 0);
	/* onto itself: nothing changes */
	assert_int_equal(drafts_rename(d, "a", "a"), 0);
	assert_int_equal(drafts_lookup(d, "a", &at), 0);
	/* onto another draft: replaces it */
	assert_int_equal(drafts_rename(d, "a", "b"), 0);
	assert_int_equal(drafts_lookup(d, "a", &at), -ENOENT);
	assert_int_equal(drafts_lookup(d, "b", &at), 0);
	assert_int_equal(at.ino, a);
	assert_int_equal(drafts_rename(d, "zz", "b"), -ENOENT);
	assert_int_equal(drafts_copy_out(d, "b", buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "AAA", 3);
	assert_int_equal(drafts_copy_out(d, "b", buf, 2), -EMSGSIZE);
	assert_int_equal(drafts_copy_out(d, "nope", buf, 2), -ENOENT);
	/* listing */
	assert_int_equal(drafts_entry(d, 0, name, &ino), 0);
	assert_string_equal(name, "b");
	assert_int_equal(ino, a);
	assert_int_equal(drafts_entry(d, 1, name, &ino), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(create_lookup_and_attributes, setup, teardown),
		cmocka_unit_test_setup_teardown(write_read_holes_and_truncate, setup, teardown),
		cmocka_unit_test_setup_teardown(limits_say_which, setup, teardown),
		cmocka_unit_test(one_draft_is_at_most_the_largest_message),
		cmocka_unit_test_setup_teardown(rename_and_copy_out, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
