// SPDX-License-Identifier: BSD-3-Clause
/* test_setattr.c -- how a spool file answers chmod, chown, truncate and utimes */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fuse/setattr.h"
#include "spool/framed.h"
#include "spool/handle.h"
#include "spool/spool.h"

/* framed.c, faked: the file-framed handle's truncation */
int framed_truncate(struct handle *fh, off_t size)
{
	(void)fh;
	check_expected(size);
	return (int)mock();
}

#define OWNER 1000
#define GROUP 100

static int ask(int to_set, const struct stat *a, uid_t caller, struct handle *fh, bool *empty)
{
	struct setattr_what w = {.to_set = to_set,
		.attr = a,
		.caller = caller,
		.owner = OWNER,
		.group = GROUP,
		.length = 300,
		.fh = fh};

	return setattr_spool(&w, empty);
}

static void mode_from_the_owner_or_root_only(void **state)
{
	struct stat a = {.st_mode = 0644};
	bool empty;

	(void)state;
	assert_int_equal(ask(FUSE_SET_ATTR_MODE, &a, OWNER, NULL, &empty), 0);
	assert_false(empty);
	assert_int_equal(ask(FUSE_SET_ATTR_MODE, &a, 0, NULL, &empty), 0);
	assert_int_equal(ask(FUSE_SET_ATTR_MODE, &a, OWNER + 1, NULL, &empty), EPERM);
}

static void chown_to_the_current_owner_only(void **state)
{
	struct stat a = {.st_uid = OWNER, .st_gid = GROUP};
	bool empty;

	(void)state;
	assert_int_equal(ask(FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID, &a, OWNER, NULL, &empty), 0);
	a.st_uid = OWNER + 1;
	assert_int_equal(ask(FUSE_SET_ATTR_UID, &a, 0, NULL, &empty), EPERM);
	a.st_uid = OWNER;
	a.st_gid = GROUP + 1;
	assert_int_equal(ask(FUSE_SET_ATTR_GID, &a, OWNER, NULL, &empty), EPERM);
	/* a uid not asked for is not looked at */
	assert_int_equal(ask(FUSE_SET_ATTR_UID, &a, OWNER, NULL, &empty), 0);
}

static void sizes_of_write_framing(void **state)
{
	struct stat a = {.st_size = 0};
	struct handle fh;
	bool empty;

	(void)state;
	memset(&fh, 0, sizeof(fh));
	assert_int_equal(ask(FUSE_SET_ATTR_SIZE, &a, OWNER, &fh, &empty), 0);
	assert_true(empty);
	a.st_size = 300; /* the current length: a no-op */
	assert_int_equal(ask(FUSE_SET_ATTR_SIZE, &a, OWNER, NULL, &empty), 0);
	assert_false(empty);
	a.st_size = 10;
	assert_int_equal(ask(FUSE_SET_ATTR_SIZE, &a, OWNER, &fh, &empty), EPERM);
	/* times alone */
	assert_int_equal(
		ask(FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME, &a, OWNER + 1, NULL, &empty), 0);
}

static void sizes_of_file_framing_go_to_the_message(void **state)
{
	struct stat a = {.st_size = 4096};
	struct handle fh;
	bool empty;

	(void)state;
	memset(&fh, 0, sizeof(fh));
	fh.frame = (struct frame *)&fh; /* any non-NULL frame: framed_truncate is faked */
	expect_value(framed_truncate, size, 4096);
	will_return(framed_truncate, 0);
	assert_int_equal(ask(FUSE_SET_ATTR_SIZE, &a, OWNER, &fh, &empty), 0);
	assert_false(empty);
	expect_value(framed_truncate, size, 4096);
	will_return(framed_truncate, EFBIG);
	assert_int_equal(ask(FUSE_SET_ATTR_SIZE, &a, OWNER, &fh, &empty), EFBIG);
	a.st_size = 0;
	expect_value(framed_truncate, size, 0);
	will_return(framed_truncate, 0);
	assert_int_equal(ask(FUSE_SET_ATTR_SIZE, &a, OWNER, &fh, &empty), 0);
	assert_true(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mode_from_the_owner_or_root_only),
		cmocka_unit_test(chown_to_the_current_owner_only),
		cmocka_unit_test(sizes_of_write_framing),
		cmocka_unit_test(sizes_of_file_framing_go_to_the_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
