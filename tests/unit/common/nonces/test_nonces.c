// SPDX-License-Identifier: BSD-3-Clause
/* test_nonces.c -- the replay window (common/nonces.c): seen, unseen, the oldest forgotten first */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "auth.h"

/* nonce_of -- nonce number i (a counter in the first bytes, the rest fixed) */
static void nonce_of(uint8_t n[16], uint32_t i)
{
	memset(n, 0x77, 16);
	memcpy(n, &i, sizeof(i));
}

static void seen_unseen(void **state)
{
	struct rpmafs_nonces *n = NULL;
	uint8_t a[16];

	(void)state;
	assert_int_equal(rpmafs_nonces_new(RPMAFS_AUTH_NONCES_DEFAULT, &n), 0);
	for (uint32_t i = 0; i < 4096; i++) {
		nonce_of(a, i);
		assert_false(rpmafs_nonces_seen(n, a));
	}
	for (uint32_t i = 0; i < 4096; i++) {
		nonce_of(a, i);
		assert_true(rpmafs_nonces_seen(n, a));
	}
	nonce_of(a, 4096);
	assert_false(rpmafs_nonces_seen(n, a)); /* evicts 0 */
	nonce_of(a, 1);
	assert_true(rpmafs_nonces_seen(n, a));
	nonce_of(a, 0);
	assert_false(rpmafs_nonces_seen(n, a)); /* forgotten: new again (evicts 1) */
	nonce_of(a, 1);
	assert_false(rpmafs_nonces_seen(n, a));
	rpmafs_nonces_delete(&n);
	assert_null(n);
	rpmafs_nonces_delete(&n);
}

/* capacity: exactly the last capacity nonces are remembered, whatever the count */
static void eviction(void **state)
{
	static const unsigned caps[] = {1, 2, 3, 7, 64, 1000};
	uint8_t a[16];

	(void)state;
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		struct rpmafs_nonces *n = NULL;
		unsigned cap = caps[c];

		assert_int_equal(rpmafs_nonces_new(cap, &n), 0);
		for (uint32_t i = 0; i < 5 * cap + 3; i++) {
			nonce_of(a, i);
			assert_false(rpmafs_nonces_seen(n, a));
			/* the last cap are seen (asking does not add), the one before is not */
			for (uint32_t j = i + 1 > cap ? i + 1 - cap : 0; j <= i; j++) {
				nonce_of(a, j);
				assert_true(rpmafs_nonces_seen(n, a));
			}
		}
		rpmafs_nonces_delete(&n);
	}
	{
		struct rpmafs_nonces *n = NULL;

		assert_int_equal(rpmafs_nonces_new(3, &n), 0);
		for (uint32_t i = 0; i < 4; i++) {
			nonce_of(a, i);
			assert_false(rpmafs_nonces_seen(n, a));
		}
		nonce_of(a, 0);
		assert_false(rpmafs_nonces_seen(n, a)); /* 0 was the oldest: gone */
		rpmafs_nonces_delete(&n);
	}
}

static void bad_capacity(void **state)
{
	struct rpmafs_nonces *n = (struct rpmafs_nonces *)1;

	(void)state;
	assert_int_equal(rpmafs_nonces_new(0, &n), -EINVAL);
	assert_null(n);
	assert_int_equal(rpmafs_nonces_new((1u << 20) + 1, &n), -EINVAL);
	assert_int_equal(rpmafs_nonces_new(1u << 20, &n), 0);
	rpmafs_nonces_delete(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(seen_unseen),
		cmocka_unit_test(eviction),
		cmocka_unit_test(bad_capacity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
