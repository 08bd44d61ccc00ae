// SPDX-License-Identifier: BSD-3-Clause
/* test_options.c -- rpma-recv's command line: sizes, --listen, checks */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "options.h"

static void sizes(void **unused)
{
	static const struct {
		const char *text;
		uint64_t size;
	} good[] = {
		{"0", 0},
		{"64", 64},
		{"4K", 4096},
		{"4k", 4096},
		{"4KiB", 4096},
		{"4kib", 4096},
		{"1M", 1 << 20},
		{"1MiB", 1 << 20},
		{"3mib", 3 << 20},
		{"1G", 1 << 30},
		{"1GiB", 1 << 30},
		{"1073741824", 1 << 30},
	};
	static const char *const bad[] = {
		"",
		"K",
		"-1",
		"+4",
		" 4",
		"4 K",
		"4KB",
		"4Kb",
		"4T",
		"1.5M",
		"0x10",
		"4KiBB",
		"2G",
		"1073741825",
		"99999999999999999999999",
		"18014398509481984K",
	};
	uint64_t v;

	(void)unused;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		assert_int_equal(recv_parse_size(good[i].text, 1u << 30, &v), 0);
		assert_int_equal(v, good[i].size);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		assert_int_equal(recv_parse_size(bad[i], 1u << 30, &v), -1);
		assert_int_equal(v, 12345); /* untouched on error */
	}
	/* the limit is inclusive, with and without a suffix */
	assert_int_equal(recv_parse_size("1024", 1024, &v), 0);
	assert_int_equal(recv_parse_size("1025", 1024, &v), -1);
	assert_int_equal(recv_parse_size("1K", 1024, &v), 0);
	assert_int_equal(recv_parse_size("2K", 1024, &v), -1);
}

static void listen_ok(const char *text, const char *addr, const char *port)
{
	char a[64], p[6] = "7204";
	const char *why = NULL;

	assert_int_equal(recv_parse_listen(text, a, sizeof(a), p, &why), 0);
	assert_string_equal(a, addr);
	assert_string_equal(p, port);
}

static void listen_bad(const char *text)
{
	char a[64] = "unchanged", p[6] = "7204";
	const char *why = NULL;

	assert_int_equal(recv_parse_listen(text, a, sizeof(a), p, &why), -1);
	assert_non_null(why);
	assert_string_equal(a, "unchanged");
}

static void listen_addresses(void **unused)
{
	(void)unused;
	listen_ok("192.168.77.1", "192.168.77.1", "7204");
	listen_ok("192.168.77.1:9000", "192.168.77.1", "9000");
	listen_ok("192.168.77.1:00080", "192.168.77.1", "80");
	listen_ok("host-a", "host-a", "7204");
	listen_ok("host-a:1", "host-a", "1");
	listen_ok("fe80::1", "fe80::1", "7204"); /* many colons: no port */
	listen_ok("[fe80::1]", "fe80::1", "7204");
	listen_ok("[fe80::1]:65535", "fe80::1", "65535");

	listen_bad("");
	listen_bad(":7204");
	listen_bad("[]:7204");
	listen_bad("[fe80::1");
	listen_bad("[fe80::1]x");
	listen_bad("[fe80::1]:");
	listen_bad("192.168.77.1:");
	listen_bad("192.168.77.1:0");
	listen_bad("192.168.77.1:65536");
	listen_bad("192.168.77.1:123456");
	listen_bad("192.168.77.1:http");
	listen_bad("192.168.77.1:-1");
	listen_bad("an-address-longer-than-the-buffer-it-is-copied-into-which-is-64-bytes");
}

static enum recv_parse_result parse(struct recv_options *opts, int have_allow, ...)
{
	char *argv[32] = {"rpma-recv"};
	int argc = 1;
	va_list ap;
	char *arg;
	enum recv_parse_result r;

	va_start(ap, have_allow);
	while ((arg = va_arg(ap, char *)) != NULL)
		argv[argc++] = arg;
	va_end(ap);
	r = recv_options_parse(argc, argv, have_allow != 0, opts);
	return r;
}

static void defaults(void **unused)
{
	struct recv_options o;

	(void)unused;
	assert_int_equal(parse(&o, false, "--listen", "192.168.77.1", NULL), RECV_PARSE_OK);
	assert_string_equal(o.addr, "192.168.77.1");
	assert_string_equal(o.port, "7204");
	assert_int_equal(o.max_message, 64 * 1024);
	assert_int_equal(o.slots, 256); /* shared by every connection */
	assert_true(o.srq);
	assert_int_equal(o.max_conns, 4096);
	assert_int_equal(o.format, RECV_FORMAT_RAW);
	assert_null(o.output);
	assert_int_equal(o.count, 0);
	assert_int_equal(recv_allow_count(o.allow), 0);
	assert_int_equal(o.verbosity, RECV_NORMAL);
	assert_null(o.metrics);
	assert_int_equal(o.metrics_interval_ms, 10000);
	assert_false(o.fresh);
	assert_int_equal(o.max_sessions, 4096);
	assert_true(o.session_ttl_ms == 24ull * 3600 * 1000);
	assert_null(o.keys); /* no keys: everyone, as before */
	assert_false(o.encrypt);
	recv_options_fini(&o);
	assert_null(o.allow);

	/* one queue per connection keeps its own, smaller default */
	assert_int_equal(parse(&o, false, "-l", "192.168.77.1", "--no-srq", NULL), RECV_PARSE_OK);
	assert_false(o.srq);
	assert_int_equal(o.slots, 64);
	recv_options_fini(&o);
	assert_int_equal(parse(&o, false, "-l", "192.168.77.1", "--slots", "8", "--no-srq", NULL),
		RECV_PARSE_OK);
	assert_int_equal(o.slots, 8);
	recv_options_fini(&o);
}

static void every_option(void **unused)
{
	struct recv_options o;

	(void)unused;
	assert_int_equal(
		parse(&o, true, "-l", "[fd00::1]:9", "--max-message", "1MiB", "--slots", "65535",
			"--format", "dir", "--output", "/tmp/x", "--count", "18446744073709551615",
			"--allow", "10.0.0.0/8", "-a", "fd00::/8", "--verbose", "--no-srq",
			"--max-connections", "1000000", "--metrics", "/tmp/r.prom",
			"--metrics-interval-ms", "100", "--fresh", "--max-sessions", "16777216",
			"--session-ttl-ms", "1", NULL),
		RECV_PARSE_OK);
	assert_true(o.fresh);
	assert_int_equal(o.max_sessions, 1u << 24);
	assert_true(o.session_ttl_ms == 1);
	assert_string_equal(o.metrics, "/tmp/r.prom");
	assert_int_equal(o.metrics_interval_ms, 100);
	assert_string_equal(o.addr, "fd00::1");
	assert_string_equal(o.port, "9");
	assert_int_equal(o.max_message, 1 << 20);
	assert_int_equal(o.slots, 65535);
	assert_int_equal(o.format, RECV_FORMAT_DIR);
	assert_string_equal(o.output, "/tmp/x");
	assert_true(o.count == UINT64_MAX);
	assert_int_equal(recv_allow_count(o.allow), 2);
	assert_int_equal(o.verbosity, RECV_VERBOSE);
	assert_false(o.srq);
	assert_int_equal(o.max_conns, 1000000);
	recv_options_fini(&o);
}

static void keys_and_protect(void **unused)
{
	struct recv_options o;

	(void)unused;
	/* --keys alone: mac */
	assert_int_equal(
		parse(&o, false, "-l", "a", "--keys", "/etc/rpma-recv/keys", NULL), RECV_PARSE_OK);
	assert_string_equal(o.keys, "/etc/rpma-recv/keys");
	assert_false(o.encrypt);
	recv_options_fini(&o);
	assert_int_equal(
		parse(&o, false, "-l", "a", "--keys=k", "--protect=mac", NULL), RECV_PARSE_OK);
	assert_false(o.encrypt);
	recv_options_fini(&o);
	/* before or after --keys, the last --protect wins */
	assert_int_equal(parse(&o, false, "-l", "a", "--protect", "mac", "--protect", "encrypt",
				 "--keys", "k", NULL),
		RECV_PARSE_OK);
	assert_true(o.encrypt);
	assert_string_equal(o.keys, "k");
	recv_options_fini(&o);
}

static void refused(bool have_allow, const char *a1, const char *a2, const char *a3)
{
	struct recv_options o;

	assert_int_equal(parse(&o, have_allow, a1, a2, a3, NULL), RECV_PARSE_ERROR);
	recv_options_fini(&o);
}

static void bad_command_lines(void **unused)
{
	(void)unused;
	refused(true, "--format", "raw", NULL); /* no --listen */
	refused(true, "-l", "1.2.3.4", "--bogus");
	refused(true, "-l", "1.2.3.4", "extra");
	refused(true, "-l", "1.2.3.4:0", NULL);
	refused(true, "-l", "1.2.3.4", "--max-message=0");
	refused(true, "-l", "1.2.3.4", "--max-message=1025M"); /* over 1 GiB */
	refused(true, "-l", "1.2.3.4", "--max-message=4KB");
	refused(true, "-l", "1.2.3.4", "--slots=0");
	refused(true, "-l", "1.2.3.4", "--slots=65536");
	refused(true, "-l", "1.2.3.4", "--slots=8x");
	refused(true, "-l", "1.2.3.4", "--max-connections=0");
	refused(true, "-l", "1.2.3.4", "--max-connections=1000001");
	refused(true, "-l", "1.2.3.4", "--no-srq=1");
	refused(true, "-l", "1.2.3.4", "--format=json");
	refused(true, "-l", "1.2.3.4", "--format=dir"); /* dir needs --output */
	refused(true, "-l", "1.2.3.4", "--output=");
	refused(true, "-l", "1.2.3.4", "--count=0");
	refused(true, "-l", "1.2.3.4", "--count=-5");
	refused(true, "-l", "1.2.3.4", "--count=18446744073709551616");
	refused(true, "-l", "1.2.3.4", "--allow=10.0.0.0/33");
	refused(false, "-l", "1.2.3.4", "--allow=10.0.0.0/8"); /* no peer address here */
	refused(true, "-l", "1.2.3.4", "-qv");
	refused(true, "-l", "1.2.3.4", "-vq");
	refused(true, "-l", "1.2.3.4", "--metrics=");
	refused(true, "-l", "1.2.3.4", "--metrics=/var/lib/");
	refused(true, "-l", "1.2.3.4", "--metrics-interval-ms=99");
	refused(true, "-l", "1.2.3.4", "--metrics-interval-ms=3600001");
	refused(true, "-l", "1.2.3.4", "--metrics-interval-ms=1s");
	refused(true, "-l", "1.2.3.4", "--max-sessions=0");
	refused(true, "-l", "1.2.3.4", "--max-sessions=16777217");
	refused(true, "-l", "1.2.3.4", "--session-ttl-ms=0");
	refused(true, "-l", "1.2.3.4", "--session-ttl-ms=1h");
	refused(true, "-l", "1.2.3.4", "--fresh=1");
	refused(true, "-l", "1.2.3.4", "--keys=");
	refused(true, "-l", "1.2.3.4", "--keys");
	refused(true, "-l", "1.2.3.4", "--protect=encrypt"); /* without --keys */
	refused(true, "-l", "1.2.3.4", "--protect=mac");     /* without --keys either */
	refused(true, "--keys=k", "-l1.2.3.4", "--protect=aes");
	refused(true, "--keys=k", "-l1.2.3.4", "--protect=");
	refused(true, "--keys=k", "-l1.2.3.4", "--protect=MAC");
}

static void help_and_version(void **unused)
{
	struct recv_options o;

	(void)unused;
	assert_int_equal(parse(&o, false, "--help", NULL), RECV_PARSE_EXIT);
	recv_options_fini(&o);
	assert_int_equal(parse(&o, false, "-V", NULL), RECV_PARSE_EXIT);
	recv_options_fini(&o);
}

static void repeated_flags(void **unused)
{
	struct recv_options o;

	(void)unused;
	assert_int_equal(parse(&o, false, "-l", "a", "-q", "-q", "-l", "b:5", NULL), RECV_PARSE_OK);
	assert_int_equal(o.verbosity, RECV_QUIET);
	assert_string_equal(o.addr, "b"); /* the last --listen wins */
	assert_string_equal(o.port, "5");
	recv_options_fini(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes),
		cmocka_unit_test(listen_addresses),
		cmocka_unit_test(defaults),
		cmocka_unit_test(every_option),
		cmocka_unit_test(keys_and_protect),
		cmocka_unit_test(bad_command_lines),
		cmocka_unit_test(help_and_version),
		cmocka_unit_test(repeated_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
