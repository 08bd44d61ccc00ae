/* SPDX-License-Identifier: BSD-3-Clause */
/* auth_test.h -- what test_auth.c and test_auth_kat.c share: a temporary directory of key files */
#ifndef RPMAFS_AUTH_TEST_H
#define RPMAFS_AUTH_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "ack.h"
#include "auth.h"

static char dir[] = "/tmp/test-auth.XXXXXX"; /* made by setup, removed by teardown */

static char ringdir[64]; /* dir/ring: the receiver's keys of the round trips */

/* write_key -- a 0600 key file d/name.key of the 32 bytes k */
static inline void write_key_in(const char *d, const char *name, const uint8_t *k)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.key", d, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, k, 32), 32);
	close(fd);
}

/* random_key -- a new random key file ringdir/name.key (when in_ring, else dir/name.key), loaded */
static inline struct rpmafs_key *random_key(const char *name, bool in_ring)
{
	struct rpmafs_key *key = NULL;
	const char *d = in_ring ? ringdir : dir;
	uint8_t k[32];
	char path[256], err[512];

	randombytes_buf(k, sizeof(k));
	write_key_in(d, name, k);
	snprintf(path, sizeof(path), "%s/%s.key", d, name);
	assert_int_equal(rpmafs_key_load(path, NULL, &key, err, sizeof(err)), 0);
	return key;
}

static inline int setup(void **state)
{
	(void)state;
	assert_int_equal(rpmafs_auth_init(), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(ringdir, sizeof(ringdir), "%s/ring", dir);
	assert_int_equal(mkdir(ringdir, 0700), 0);
	return 0;
}

static inline int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif /* RPMAFS_AUTH_TEST_H */
