// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_peer_check.c -- the one judgement of a connecting peer: its address
 * against the allow-list, its private data, the limit of open connections,
 * in that order; and what it said for the accept
 */

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "peer_check.h"

static struct sockaddr_storage v4(const char *text, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;

	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, text, &in->sin_addr), 1);
	return ss;
}

static struct sockaddr_storage v6(const char *text, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	assert_int_equal(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
	return ss;
}

/* a well-formed rpmafs header, as a sender puts it in its request */
static void header(uint8_t buf[RPMAFS_PDATA_MAX_LEN], uint16_t flags)
{
	rpmafs_pdata_encode(
		&(struct rpmafs_pdata){
			.max_message = 4096, .credits = 0, .flags = flags, .session = 0},
		buf);
}

/* the same with a session: version 2 */
static void header_session(uint8_t buf[RPMAFS_PDATA_MAX_LEN], uint16_t flags, uint64_t session)
{
	assert_int_equal(rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = 4096,
						     .credits = 0,
						     .flags = flags,
						     .session = session},
				 buf),
		RPMAFS_PDATA_LEN_2);
}

static struct recv_allow *lab_only(void)
{
	struct recv_allow *allow;
	const char *why;

	assert_int_equal(recv_allow_new(&allow), 0);
	assert_int_equal(recv_allow_add(allow, "192.168.77.0/24", &why), 0);
	return allow;
}

/* the address: an empty (or no) list allows everyone, a list only its networks */
static void address(void **state)
{
	struct sockaddr_storage in = v4("192.168.77.2", 1), out = v4("10.0.0.1", 1);
	struct peer_request req = {&in, NULL, 0, 0, 4};
	struct recv_allow *allow, *empty;
	struct peer_facts facts;

	(void)state;
	assert_int_equal(recv_allow_new(&empty), 0);
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_ACCEPT);
	assert_int_equal(peer_check(empty, &req, &facts), PEER_ACCEPT);
	req.addr = NULL; /* a build that cannot tell the address */
	assert_int_equal(peer_check(empty, &req, &facts), PEER_ACCEPT);

	allow = lab_only();
	req.addr = &in;
	assert_int_equal(peer_check(allow, &req, &facts), PEER_ACCEPT);
	req.addr = &out;
	assert_int_equal(peer_check(allow, &req, &facts), PEER_NOT_ALLOWED);
	/* an unknown address is in no network */
	req.addr = NULL;
	assert_int_equal(peer_check(allow, &req, &facts), PEER_NOT_ALLOWED);
	recv_allow_delete(&allow);
	recv_allow_delete(&empty);
}

/* the private data: none or zeros is a plain peer, a header an rpmafs sender */
static void private_data(void **state)
{
	uint8_t buf[56] = {0};
	struct peer_request req = {NULL, buf, sizeof(buf), 0, 4};
	struct peer_facts facts;

	(void)state;
	/* zero padding, as RoCE pads a request */
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_ACCEPT);
	assert_int_equal(facts.kind, RPMAFS_PDATA_NONE);
	assert_false(facts.acked);
	req.pdata = NULL;
	req.pdata_len = 0;
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_ACCEPT);
	assert_int_equal(facts.kind, RPMAFS_PDATA_NONE);

	/* an rpmafs sender, with and without receiver confirmation */
	req.pdata = buf;
	req.pdata_len = sizeof(buf);
	header(buf, 0);
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_ACCEPT);
	assert_int_equal(facts.kind, RPMAFS_PDATA_OK);
	assert_int_equal(facts.pd.max_message, 4096);
	assert_false(facts.acked);
	assert_int_equal(facts.session, 0);
	header(buf, RPMAFS_PDATA_F_ACK);
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_ACCEPT);
	assert_true(facts.acked);
	assert_int_equal(facts.session, 0);

	/* a version 2 sender: its session comes back when it takes acknowledgements */
	memset(buf, 0, sizeof(buf));
	header_session(buf, RPMAFS_PDATA_F_ACK, 0x0123456789abcdefull);
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_ACCEPT);
	assert_true(facts.acked);
	assert_true(facts.session == 0x0123456789abcdefull);
	assert_true(facts.pd.session == 0x0123456789abcdefull);
	/* without receiver confirmation there is nothing to tell apart by it */
	header_session(buf, 0, 0x0123456789abcdefull);
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_ACCEPT);
	assert_false(facts.acked);
	assert_int_equal(facts.session, 0);
	assert_true(facts.pd.session == 0x0123456789abcdefull);
	/* a session of 0 under the flag is garbage, refused and no session handed on */
	header_session(buf, RPMAFS_PDATA_F_ACK, 1);
	memset(buf + 16, 0, 8);
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_MALFORMED);
	assert_false(facts.acked);
	assert_int_equal(facts.session, 0);
	memset(buf, 0, sizeof(buf));
	header(buf, RPMAFS_PDATA_F_ACK);

	/* another version of the header is refused, and said why */
	buf[4] = RPMAFS_PDATA_VERSION_2 + 1;
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_MALFORMED);
	assert_int_equal(facts.kind, RPMAFS_PDATA_MALFORMED);
	assert_non_null(facts.why);
	assert_false(facts.acked);

	/* a max_message past the limit */
	memset(buf, 0, sizeof(buf));
	header(buf, 0);
	buf[8] = 0xff, buf[9] = 0xff, buf[10] = 0xff, buf[11] = 0xff;
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_MALFORMED);

	/* something else altogether */
	memcpy(buf, "HTTP", 4);
	assert_int_equal(peer_check(NULL, &req, &facts), PEER_FOREIGN);
	assert_int_equal(facts.kind, RPMAFS_PDATA_FOREIGN);
}

/*
 * the limit of open connections, judged last: a peer refused for its
 * address or its private data is refused for that even when it is full
 */
static void limit_and_order(void **state)
{
	struct sockaddr_storage out = v4("10.0.0.1", 1), in = v4("192.168.77.9", 1);
	uint8_t buf[RPMAFS_PDATA_LEN] = "JUNK";
	struct peer_request req = {&in, NULL, 0, 3, 4};
	struct recv_allow *allow = lab_only();
	struct peer_facts facts;

	(void)state;
	assert_int_equal(peer_check(allow, &req, &facts), PEER_ACCEPT);
	req.open = 4;
	assert_int_equal(peer_check(allow, &req, &facts), PEER_TOO_MANY);
	req.open = 5;
	assert_int_equal(peer_check(allow, &req, &facts), PEER_TOO_MANY);
	req.max_conns = 0;
	req.open = 0;
	assert_int_equal(peer_check(allow, &req, &facts), PEER_TOO_MANY);

	req.pdata = buf;
	req.pdata_len = sizeof(buf);
	assert_int_equal(peer_check(allow, &req, &facts), PEER_FOREIGN);
	req.addr = &out;
	assert_int_equal(peer_check(allow, &req, &facts), PEER_NOT_ALLOWED);
	recv_allow_delete(&allow);
}

/* the address as the log lines show it */
static void describe(void **state)
{
	struct sockaddr_storage a = v4("192.168.77.2", 40000), b = v6("fd00::1", 7);
	struct sockaddr_storage other = {.ss_family = AF_UNIX};
	char text[64] = "untouched", hex[64];
	const uint8_t data[20] = {0x52, 0x50, 0x4d, 0x46, 0x01};

	(void)state;
	assert_true(peer_describe(&a, text, sizeof(text)));
	assert_string_equal(text, "192.168.77.2:40000");
	assert_true(peer_describe(&b, text, sizeof(text)));
	assert_string_equal(text, "[fd00::1]:7");
	strcpy(text, "untouched");
	assert_false(peer_describe(&other, text, sizeof(text)));
	assert_string_equal(text, "untouched");

	peer_hex_prefix(data, 3, hex, sizeof(hex));
	assert_string_equal(hex, "52 50 4d");
	peer_hex_prefix(data, sizeof(data), hex, sizeof(hex));
	assert_string_equal(hex, "52 50 4d 46 01 00 00 00 00 00 00 00 00 00 00 00");
	peer_hex_prefix(data, 0, hex, sizeof(hex));
	assert_string_equal(hex, "");
}

/* issue 25: a receiver without keys refuses a key, one with keys requires it */
static void keys(void **state)
{
	/* a version 3 request (F_ACK, F_AUTH) and accept, as pdata.h lays them out */
	static const uint8_t req3[56] = "RPMF\x03\x38\x05\x00\x00\x10\x00\x00\x00\x00\x00\x00"
					"\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03\x04"
					"\x05\x06\x07\x08\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7"
					"\xa8\xa9\xaa\xab\xac\xad\xae\xaf\xc0\xc1\xc2\xc3"
					"\xc4\xc5\xc6\xc7";
	static const uint8_t acc3[48] = "RPMF\x03\x30\x05\x00\x00\x10\x00\x00\x00\x00\x00\x00"
					"\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb"
					"\xbc\xbd\xbe\xbf\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7"
					"\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf";
	uint8_t v1[RPMAFS_PDATA_MAX_LEN];
	struct peer_request req = {NULL, req3, sizeof(req3), 0, 4};
	struct peer_facts f;

	(void)state;
	/* no keys: a key offered is refused, before the limit */
	assert_int_equal(peer_check(NULL, &req, &f), PEER_MALFORMED);
	assert_string_equal(f.why, "sender offers a key, this receiver has none");
	assert_int_equal(peer_check_keys(NULL, &req, false, &f), PEER_MALFORMED);
	/* keys: accepted (the caller checks the key), what it said filled in */
	assert_int_equal(peer_check_keys(NULL, &req, true, &f), PEER_ACCEPT);
	assert_true(f.pd.auth.on && f.pd.auth.request);
	assert_memory_equal(f.pd.auth.id, req3 + 24, 8);
	assert_true(f.acked);
	req.open = 4;
	assert_int_equal(peer_check_keys(NULL, &req, true, &f), PEER_TOO_MANY);
	req.open = 0;
	/* keys: no private data, version 1 are refused; foreign stays foreign */
	req.pdata = NULL;
	req.pdata_len = 0;
	assert_int_equal(peer_check_keys(NULL, &req, true, &f), PEER_MALFORMED);
	assert_string_equal(f.why, "sender proves no key");
	header(v1, RPMAFS_PDATA_F_ACK);
	req.pdata = v1;
	req.pdata_len = RPMAFS_PDATA_LEN;
	assert_int_equal(peer_check_keys(NULL, &req, true, &f), PEER_MALFORMED);
	assert_string_equal(f.why, "sender proves no key");
	assert_int_equal(peer_check_keys(NULL, &req, false, &f), PEER_ACCEPT);
	req.pdata = "hello";
	req.pdata_len = 5;
	assert_int_equal(peer_check_keys(NULL, &req, true, &f), PEER_FOREIGN);
	/* an accept where a request was due, keys or not */
	req.pdata = acc3;
	req.pdata_len = sizeof(acc3);
	assert_int_equal(peer_check_keys(NULL, &req, true, &f), PEER_MALFORMED);
	assert_int_equal(peer_check_keys(NULL, &req, false, &f), PEER_MALFORMED);
	assert_string_equal(f.why, "a version 3 accept in a connect request");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(address),
		cmocka_unit_test(private_data),
		cmocka_unit_test(limit_and_order),
		cmocka_unit_test(describe),
		cmocka_unit_test(keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
