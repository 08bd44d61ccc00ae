// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_key.c -- key files and key dirs (common/key.c): refused as ssh
 * refuses a private key, with the path and the reason; names checked
 */

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

#include "auth.h"

static char dir[] = "/tmp/test-key.XXXXXX";

/* file -- d/name with len bytes (0x11 each) and mode; its path in path */
static void file(char *path, size_t plen, const char *d, const char *name, size_t len, mode_t mode)
{
	uint8_t b[64];
	int fd;

	memset(b, 0x11, sizeof(b));
	snprintf(path, plen, "%s/%s", d, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* sub -- a new directory dir/name, its path in d */
static void sub(char *d, size_t dlen, const char *name)
{
	snprintf(d, dlen > 200 ? 200 : dlen, "%s/%s", dir, name);
	assert_int_equal(mkdir(d, 0700), 0);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void load_ok(void **state)
{
	struct rpmafs_key *key = NULL;
	char path[256], err[512];

	(void)state;
	file(path, sizeof(path), dir, "alpha.key", 32, 0600);
	assert_int_equal(rpmafs_key_load(path, NULL, &key, err, sizeof(err)), 0);
	assert_string_equal(rpmafs_key_name(key), "alpha");
	rpmafs_key_delete(&key);
	assert_null(key);
	rpmafs_key_delete(&key); /* NULL is fine */
	assert_int_equal(rpmafs_key_load(path, "peer-a", &key, err, sizeof(err)), 0);
	assert_string_equal(rpmafs_key_name(key), "peer-a");
	rpmafs_key_delete(&key);
	/* 0400 is fine too; a name without .key stays whole */
	file(path, sizeof(path), dir, "beta.secret", 32, 0400);
	assert_int_equal(rpmafs_key_load(path, NULL, &key, err, sizeof(err)), 0);
	assert_string_equal(rpmafs_key_name(key), "beta.secret");
	rpmafs_key_delete(&key);
}

/* key_load refuses it, err is want (with %s the path, twice for the mode) */
static void refused(const char *path, const char *want)
{
	struct rpmafs_key *key = (struct rpmafs_key *)1;
	char err[512], exp[1024];

	snprintf(exp, sizeof(exp), want, path, path);
	assert_int_equal(rpmafs_key_load(path, NULL, &key, err, sizeof(err)), -1);
	assert_null(key);
	assert_string_equal(err, exp);
}

static void load_refused(void **state)
{
	char path[256], d[256];

	(void)state;
	file(path, sizeof(path), dir, "open.key", 32, 0644);
	refused(path,
		"%s: key file is readable or writable by group or others (mode 0644): chmod 600 %s");
	file(path, sizeof(path), dir, "gw.key", 32, 0620);
	refused(path,
		"%s: key file is readable or writable by group or others (mode 0620): chmod 600 %s");
	file(path, sizeof(path), dir, "short.key", 31, 0600);
	refused(path, "%s: a key file holds 32 bytes, this one 31");
	file(path, sizeof(path), dir, "long.key", 33, 0600);
	refused(path, "%s: a key file holds 32 bytes, this one 33");
	file(path, sizeof(path), dir, "empty.key", 0, 0600);
	refused(path, "%s: a key file holds 32 bytes, this one 0");
	sub(d, sizeof(d), "adir.key");
	refused(d, "%s: not a regular file");
	snprintf(path, sizeof(path), "%s/missing.key", dir);
	refused(path, "%s: No such file or directory");
	/* errlen 0 and a NULL err are fine */
	assert_int_equal(rpmafs_key_load(path, NULL, &(struct rpmafs_key *){NULL}, NULL, 0), -1);
}

static void ring_ok(void **state)
{
	struct rpmafs_keyring *ring = NULL;
	char d[256], path[256], err[512];

	(void)state;
	sub(d, sizeof(d), "ring");
	file(path, sizeof(path), d, "zulu.key", 32, 0600);
	file(path, sizeof(path), d, "Alpha_1.2-x.key", 32, 0600);
	file(path, sizeof(path), d, "README", 5, 0644);	   /* ignored */
	file(path, sizeof(path), d, "old.key~", 5, 0644);  /* ignored */
	file(path, sizeof(path), d, "keys.txt", 32, 0644); /* ignored */
	assert_int_equal(rpmafs_keyring_load(d, &ring, err, sizeof(err)), 0);
	assert_int_equal(rpmafs_keyring_count(ring), 2);
	assert_string_equal(rpmafs_key_name(rpmafs_keyring_key(ring, 0)), "Alpha_1.2-x");
	assert_string_equal(rpmafs_key_name(rpmafs_keyring_key(ring, 1)), "zulu");
	assert_null(rpmafs_keyring_key(ring, 2));
	rpmafs_keyring_delete(&ring);
	assert_null(ring);
	rpmafs_keyring_delete(&ring);
}

/* keyring_load of d refuses, err is want with %s the dir or the path */
static void ring_refused(const char *d, const char *arg, const char *want)
{
	struct rpmafs_keyring *ring = (struct rpmafs_keyring *)1;
	char err[512], exp[1024];

	snprintf(exp, sizeof(exp), want, arg, arg);
	assert_int_equal(rpmafs_keyring_load(d, &ring, err, sizeof(err)), -1);
	assert_null(ring);
	assert_string_equal(err, exp);
}

static void ring_refused_cases(void **state)
{
	char d[256], path[256], name[80];
	static const char *const bad[] = {".key", "sp ace.key", "sl\\ash.key", "é.key", "x:y.key"};

	(void)state;
	sub(d, sizeof(d), "empty");
	file(path, sizeof(path), d, "README", 5, 0644);
	ring_refused(d, d, "%s: no *.key file");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu", i);
		sub(d, sizeof(d), name);
		file(path, sizeof(path), d, bad[i], 32, 0600);
		ring_refused(d, path,
			"%s: a key's name (the file name without .key) is 1 to 64 bytes of A-Z a-z 0-9 . _ -");
	}
	/* 64 bytes are fine, 65 are not */
	sub(d, sizeof(d), "long");
	memset(name, 'n', 64);
	strcpy(name + 64, ".key");
	file(path, sizeof(path), d, name, 32, 0600);
	{
		struct rpmafs_keyring *ring = NULL;

		assert_int_equal(rpmafs_keyring_load(d, &ring, NULL, 0), 0);
		rpmafs_keyring_delete(&ring);
	}
	memset(name, 'n', 65);
	strcpy(name + 65, ".key");
	file(path, sizeof(path), d, name, 32, 0600);
	ring_refused(d, path,
		"%s: a key's name (the file name without .key) is 1 to 64 bytes of A-Z a-z 0-9 . _ -");
	/* one bad key file refuses the whole dir, with its path */
	sub(d, sizeof(d), "onebad");
	file(path, sizeof(path), d, "good.key", 32, 0600);
	file(path, sizeof(path), d, "open.key", 32, 0640);
	ring_refused(d, path,
		"%s: key file is readable or writable by group or others (mode 0640): chmod 600 %s");
	/* a *.key directory is no key */
	sub(d, sizeof(d), "subdir");
	file(path, sizeof(path), d, "good.key", 32, 0600);
	assert_true(snprintf(path, sizeof(path), "%s/sub.key", d) < (int)sizeof(path));
	assert_int_equal(mkdir(path, 0700), 0);
	ring_refused(d, path, "%s: not a regular file");
	/* not a directory, missing */
	snprintf(path, sizeof(path), "%s/onebad/good.key", dir);
	ring_refused(path, path, "%s: Not a directory");
	snprintf(path, sizeof(path), "%s/nowhere", dir);
	ring_refused(path, path, "%s: No such file or directory");
}

/* at most 1024 keys */
static void ring_limit(void **state)
{
	struct rpmafs_keyring *ring = NULL;
	char d[256], path[256], name[32], err[512];

	(void)state;
	sub(d, sizeof(d), "many");
	for (int i = 0; i < 1024; i++) {
		snprintf(name, sizeof(name), "k%04d.key", i);
		file(path, sizeof(path), d, name, 32, 0600);
	}
	assert_int_equal(rpmafs_keyring_load(d, &ring, err, sizeof(err)), 0);
	assert_int_equal(rpmafs_keyring_count(ring), 1024);
	rpmafs_keyring_delete(&ring);
	file(path, sizeof(path), d, "k1024.key", 32, 0600);
	ring_refused(d, d, "%s: more than 1024 *.key files");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(load_ok),
		cmocka_unit_test(load_refused),
		cmocka_unit_test(ring_ok),
		cmocka_unit_test(ring_refused_cases),
		cmocka_unit_test(ring_limit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
