// SPDX-License-Identifier: BSD-3-Clause
/* test_nofile.c -- nofile_raise on the test process's own RLIMIT_NOFILE */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/nofile.h"

static struct rlimit saved;

static int save(void **state)
{
	(void)state;
	return getrlimit(RLIMIT_NOFILE, &saved);
}

static int restore(void **state)
{
	(void)state;
	return setrlimit(RLIMIT_NOFILE, &saved);
}

/* a soft limit below the hard one: raised to it, and the log line says so */
static void test_soft_raised_to_hard(void **state)
{
	struct nofile_plan plan;
	struct rlimit rl = saved;
	char why[512];

	(void)state;
	if (saved.rlim_max == RLIM_INFINITY || saved.rlim_max < 200)
		skip();
	rl.rlim_cur = 100;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(nofile_raise(10, &plan, why, sizeof(why)), 0);
	assert_int_equal(plan.before, 100);
	assert_int_equal(plan.now, saved.rlim_max);
	assert_int_equal(plan.need, NOFILE_BASE + 10 * NOFILE_PER_PEER);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(rl.rlim_cur, saved.rlim_max);
	assert_non_null(strstr(why, "RLIMIT_NOFILE raised from 100 to "));
	assert_non_null(strstr(why, "10 rdma peers need about 84"));
}

/* already at the hard limit: nothing to say */
static void test_nothing_to_raise(void **state)
{
	struct nofile_plan plan;
	struct rlimit rl = saved;
	char why[512];

	(void)state;
	rl.rlim_cur = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(nofile_raise(0, &plan, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_int_equal(plan.before, plan.now);
}

/* a hard limit too low for the peers: 1, with the figures and remedies */
static int hard_limit_too_low_child(void)
{
	struct nofile_plan plan;
	struct rlimit rl = {.rlim_cur = 300, .rlim_max = 300};
	char why[512];

	if (setrlimit(RLIMIT_NOFILE, &rl) || nofile_raise(1000, &plan, why, sizeof(why)) != 1)
		return 1;
	if (plan.now != 300 || plan.need != NOFILE_BASE + 1000 * NOFILE_PER_PEER)
		return 2;
	if (!strstr(why, "RLIMIT_NOFILE (300 descriptors, hard limit 300) holds about 118 "
			 "connections, fewer than the 1000 rdma peers") ||
		!strstr(why, "LimitNOFILE="))
		return 3;
	return 0;
}

/* in a child: a lowered hard limit cannot be raised again */
static void test_hard_limit_too_low(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(hard_limit_too_low_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_soft_raised_to_hard, save, restore),
		cmocka_unit_test_setup_teardown(test_nothing_to_raise, save, restore),
		cmocka_unit_test_setup_teardown(test_hard_limit_too_low, save, restore),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
