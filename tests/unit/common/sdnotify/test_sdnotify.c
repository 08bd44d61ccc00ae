// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_sdnotify.c -- unit tests of common/sdnotify.c: the datagram, as a
 * real AF_UNIX socket named by $NOTIFY_SOCKET receives it, the one-line
 * state text and the watchdog's schedule from $WATCHDOG_USEC
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "sdnotify.h"

struct sock {
	int fd;
	char path[108];
};

/* a datagram socket bound to path (or, starting with '@', the abstract name) */
static void sock_open(struct sock *s, const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;

	if (name[0] == '@')
		snprintf(s->path, sizeof(s->path), "@rpmafs-test-sdnotify-%d", (int)getpid());
	else
		snprintf(s->path, sizeof(s->path), "/tmp/rpmafs-test-sdnotify-%d.sock",
			(int)getpid());
	len = strlen(s->path);
	memcpy(sa.sun_path, s->path, len);
	if (s->path[0] == '@')
		sa.sun_path[0] = '\0';
	else
		unlink(s->path);
	s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&sa,
				 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)),
		0);
	assert_int_equal(setenv("NOTIFY_SOCKET", s->path, 1), 0);
}

static void sock_close(struct sock *s)
{
	close(s->fd);
	if (s->path[0] == '/')
		unlink(s->path);
	unsetenv("NOTIFY_SOCKET");
}

/* the next datagram, which sdnotify_send already queued (no wait) */
static void sock_expect(struct sock *s, const char *want)
{
	char buf[1024];
	ssize_t n = recv(s->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n < 0)
		fail_msg("no datagram: %s", strerror(errno));
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void sock_expect_none(struct sock *s)
{
	char buf[64];

	assert_int_equal(recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
}

static void send_to_path(void **state)
{
	struct sock s;

	(void)state;
	sock_open(&s, "/");
	assert_int_equal(sdnotify_send("READY=1\nSTATUS=up"), 0);
	sock_expect(&s, "READY=1\nSTATUS=up");
	assert_int_equal(sdnotify_send("STOPPING=1"), 0);
	sock_expect(&s, "STOPPING=1");
	sock_expect_none(&s);
	sock_close(&s);
}

static void send_to_abstract(void **state)
{
	struct sock s;

	(void)state;
	sock_open(&s, "@");
	assert_int_equal(sdnotify_send("WATCHDOG=1"), 0);
	sock_expect(&s, "WATCHDOG=1");
	sock_close(&s);
}

static void send_without_socket(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sdnotify_send("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(sdnotify_send("READY=1"), 0);
	/* neither a path nor an abstract name */
	setenv("NOTIFY_SOCKET", "relative.sock", 1);
	assert_int_equal(sdnotify_send("READY=1"), -EINVAL);
	/* nobody listening there */
	setenv("NOTIFY_SOCKET", "/nonexistent/rpmafs-notify.sock", 1);
	assert_int_equal(sdnotify_send("READY=1"), -ENOENT);
	unsetenv("NOTIFY_SOCKET");
}

static void state_one_line(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(sdnotify_state(buf, sizeof(buf), "WATCHDOG=1", "2 peers"), 25);
	assert_string_equal(buf, "WATCHDOG=1\nSTATUS=2 peers");
	/* a line break would end the assignment: it becomes a space */
	sdnotify_state(buf, sizeof(buf), "READY=1", "a\nb\rc");
	assert_string_equal(buf, "READY=1\nSTATUS=a b c");
	/* cut to fit, terminated */
	assert_int_equal(sdnotify_state(buf, 20, "WATCHDOG=1", "0123456789"), 19);
	assert_string_equal(buf, "WATCHDOG=1\nSTATUS=0");
	assert_int_equal(sdnotify_state(buf, 1, "WATCHDOG=1", "x"), 0);
	assert_string_equal(buf, "");
}

static void watchdog_interval(void **state)
{
	struct sdnotify_watchdog wd;
	char pid[32];

	(void)state;
	unsetenv("WATCHDOG_PID");
	/* WatchdogSec=30s: a ping every 15 s, the first one 15 s from now */
	setenv("WATCHDOG_USEC", "30000000", 1);
	assert_int_equal(sdnotify_watchdog_init(&wd, 1000), 15000);
	assert_int_equal(sdnotify_watchdog_next(&wd), 16000);
	/* under a millisecond still pings, every millisecond */
	setenv("WATCHDOG_USEC", "1", 1);
	assert_int_equal(sdnotify_watchdog_init(&wd, 0), 1);
	/* for this process */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	setenv("WATCHDOG_USEC", "4000", 1);
	assert_int_equal(sdnotify_watchdog_init(&wd, 0), 2);
	/* for another process: not ours */
	snprintf(pid, sizeof(pid), "%d", (int)getpid() + 1);
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(sdnotify_watchdog_init(&wd, 0), 0);
	unsetenv("WATCHDOG_PID");
	/* no watchdog: unset, zero, not a number */
	const char *bad[] = {"0", "", "-1", "12x", " 5", "99999999999999999999999"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("WATCHDOG_USEC", bad[i], 1);
		if (sdnotify_watchdog_init(&wd, 0) != 0)
			fail_msg("WATCHDOG_USEC=\"%s\" gave a watchdog", bad[i]);
		assert_int_equal(sdnotify_watchdog_next(&wd), 0);
		assert_false(sdnotify_watchdog_due(&wd, UINT64_MAX));
	}
	unsetenv("WATCHDOG_USEC");
	assert_int_equal(sdnotify_watchdog_init(&wd, 0), 0);
	assert_false(sdnotify_watchdog_due(&wd, 1000000));
}

static void watchdog_schedule(void **state)
{
	struct sdnotify_watchdog wd;

	(void)state;
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "2000000", 1); /* 2 s: every second */
	assert_int_equal(sdnotify_watchdog_init(&wd, 5000), 1000);
	assert_false(sdnotify_watchdog_due(&wd, 5000));
	assert_false(sdnotify_watchdog_due(&wd, 5999));
	assert_true(sdnotify_watchdog_due(&wd, 6000));
	/* once per interval */
	assert_false(sdnotify_watchdog_due(&wd, 6000));
	assert_int_equal(sdnotify_watchdog_next(&wd), 7000);
	/* late (the loop was busy): one ping, the next an interval later, no burst */
	assert_true(sdnotify_watchdog_due(&wd, 9500));
	assert_false(sdnotify_watchdog_due(&wd, 9500));
	assert_false(sdnotify_watchdog_due(&wd, 10499));
	assert_int_equal(sdnotify_watchdog_next(&wd), 10500);
	unsetenv("WATCHDOG_USEC");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(send_to_path),
		cmocka_unit_test(send_to_abstract),
		cmocka_unit_test(send_without_socket),
		cmocka_unit_test(state_one_line),
		cmocka_unit_test(watchdog_interval),
		cmocka_unit_test(watchdog_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
