// SPDX-License-Identifier: BSD-3-Clause
/* test_allow.c -- rpma-recv's --allow networks: parsing and matching */

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "allow.h"

static struct sockaddr_storage v4(const char *text)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;

	in->sin_family = AF_INET;
	in->sin_port = htons(40000);
	assert_int_equal(inet_pton(AF_INET, text, &in->sin_addr), 1);
	return ss;
}

static struct sockaddr_storage v6(const char *text)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(40000);
	assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
	return ss;
}

static bool match(const struct recv_allow *list, struct sockaddr_storage ss)
{
	return recv_allow_match(list, (const struct sockaddr *)&ss);
}

static int setup(void **state)
{
	struct recv_allow *list;

	assert_int_equal(recv_allow_new(&list), 0);
	*state = list;
	return 0;
}

static int teardown(void **state)
{
	struct recv_allow *list = *state;

	recv_allow_delete(&list);
	assert_null(list);
	return 0;
}

static void add_ok(struct recv_allow *list, const char *spec)
{
	const char *why = NULL;

	assert_int_equal(recv_allow_add(list, spec, &why), 0);
	assert_string_equal(why, "ok");
}

static void empty_list_allows_everyone(void **state)
{
	struct recv_allow *list = *state;

	assert_int_equal(recv_allow_count(list), 0);
	assert_true(match(list, v4("192.168.77.2")));
	assert_true(match(list, v6("fe80::1")));
}

static void ipv4_prefix(void **state)
{
	struct recv_allow *list = *state;

	add_ok(list, "192.168.77.0/24");
	assert_int_equal(recv_allow_count(list), 1);
	assert_true(match(list, v4("192.168.77.0")));
	assert_true(match(list, v4("192.168.77.2")));
	assert_true(match(list, v4("192.168.77.255")));
	assert_false(match(list, v4("192.168.78.2")));
	assert_false(match(list, v4("192.168.76.255")));
	assert_false(match(list, v4("10.0.0.1")));
	/* an IPv6 peer never matches an IPv4 network */
	assert_false(match(list, v6("::c0a8:4d02")));
}

static void odd_prefix_and_host_bits(void **state)
{
	struct recv_allow *list = *state;

	/* host bits past the prefix are ignored: this is 10.1.0.0/15 */
	add_ok(list, "10.1.2.3/15");
	assert_true(match(list, v4("10.0.0.1")));
	assert_true(match(list, v4("10.1.255.255")));
	assert_false(match(list, v4("10.2.0.0")));
	assert_false(match(list, v4("9.255.255.255")));
}

static void single_host(void **state)
{
	struct recv_allow *list = *state;

	add_ok(list, "192.168.77.2");
	add_ok(list, "192.168.77.9/32");
	assert_true(match(list, v4("192.168.77.2")));
	assert_true(match(list, v4("192.168.77.9")));
	assert_false(match(list, v4("192.168.77.3")));
}

static void prefix_zero_matches_family(void **state)
{
	struct recv_allow *list = *state;

	add_ok(list, "0.0.0.0/0");
	assert_true(match(list, v4("203.0.113.7")));
	assert_false(match(list, v6("2001:db8::1")));
	add_ok(list, "::/0");
	assert_true(match(list, v6("2001:db8::1")));
}

static void ipv6_prefix(void **state)
{
	struct recv_allow *list = *state;

	add_ok(list, "fd00:1234::/32");
	add_ok(list, "2001:db8::1/128");
	assert_true(match(list, v6("fd00:1234::1")));
	assert_true(match(list, v6("fd00:1234:ffff:ffff::9")));
	assert_false(match(list, v6("fd00:1235::1")));
	assert_true(match(list, v6("2001:db8::1")));
	assert_false(match(list, v6("2001:db8::2")));
	assert_false(match(list, v4("192.168.77.2")));
}

static void ipv6_prefix_not_multiple_of_8(void **state)
{
	struct recv_allow *list = *state;

	add_ok(list, "fe80::/10");
	assert_true(match(list, v6("fe80::1")));
	assert_true(match(list, v6("febf:ffff::1")));
	assert_false(match(list, v6("fec0::1")));
	assert_false(match(list, v6("fe00::1")));
}

static void v4_mapped_peer_matches_ipv4(void **state)
{
	struct recv_allow *list = *state;

	add_ok(list, "192.168.77.0/24");
	assert_true(match(list, v6("::ffff:192.168.77.2")));
	assert_false(match(list, v6("::ffff:192.168.78.2")));
}

static void other_family_never_matches(void **state)
{
	struct recv_allow *list = *state;
	struct sockaddr_storage ss = {0};

	add_ok(list, "0.0.0.0/0");
	ss.ss_family = AF_UNIX;
	assert_false(recv_allow_match(list, (struct sockaddr *)&ss));
}

static void bad_specs(void **state)
{
	static const char *const bad[] = {
		"",
		"/24",
		"192.168.77.0/",
		"192.168.77.0/33",
		"192.168.77.0/-1",
		"192.168.77.0/2a",
		"192.168.77/24",
		"host.example/24",
		"fd00::/129",
		"fd00::/1000000000000",
		"300.1.1.1/8",
		"1.2.3.4/24/8",
		"::ffff::1/64",
	};
	struct recv_allow *list = *state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *why = NULL;

		assert_int_equal(recv_allow_add(list, bad[i], &why), -1);
		assert_non_null(why);
		assert_string_not_equal(why, "ok");
	}
	assert_int_equal(recv_allow_count(list), 0);
	/* a failed add leaves the list allowing everyone */
	assert_true(match(list, v4("1.2.3.4")));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(empty_list_allows_everyone, setup, teardown),
		cmocka_unit_test_setup_teardown(ipv4_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(odd_prefix_and_host_bits, setup, teardown),
		cmocka_unit_test_setup_teardown(single_host, setup, teardown),
		cmocka_unit_test_setup_teardown(prefix_zero_matches_family, setup, teardown),
		cmocka_unit_test_setup_teardown(ipv6_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(ipv6_prefix_not_multiple_of_8, setup, teardown),
		cmocka_unit_test_setup_teardown(v4_mapped_peer_matches_ipv4, setup, teardown),
		cmocka_unit_test_setup_teardown(other_family_never_matches, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_specs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
