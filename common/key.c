// SPDX-License-Identifier: BSD-3-Clause
/* key.c -- key files and key dirs (auth.h): checked as ssh checks a private key */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "auth.h"
#include "key.h"

struct rpmafs_key {
	char *name;
	uint8_t id[RPMAFS_AUTH_ID_BYTES];
	uint8_t *k; /* RPMAFS_AUTH_KEY_BYTES, sodium_malloc'd (a ring's: in its block) */
	bool own;   /* k is this key's own allocation (rpmafs_key_load) */
};

struct rpmafs_keyring {
	unsigned count;
	struct rpmafs_key *keys; /* name order */
	uint8_t *block;		 /* count * RPMAFS_AUTH_KEY_BYTES, sodium_malloc'd */
	char *unknown;		 /* "sender's key is not one of DIR's" */
};

static const char key_id_label[] = "rpmafs key id 1";

static void say(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void rpmafs_key_make_id(const uint8_t k[RPMAFS_AUTH_KEY_BYTES], uint8_t id[RPMAFS_AUTH_ID_BYTES])
{
	uint8_t h[16];

	crypto_generichash(h, sizeof(h), (const uint8_t *)key_id_label, sizeof(key_id_label) - 1, k,
		RPMAFS_AUTH_KEY_BYTES);
	memcpy(id, h, RPMAFS_AUTH_ID_BYTES);
}

/*
 * read_key -- the key file name (opened at dirfd; path in messages) into k:
 * a regular file of mode & 077 == 0 and exactly RPMAFS_AUTH_KEY_BYTES
 * bytes. 0 or -1 with err.
 */
static int read_key(
	int dirfd, const char *name, const char *path, uint8_t *k, char *err, size_t errlen)
{
	uint8_t extra;
	struct stat st;
	size_t got = 0;
	ssize_t r;
	int fd;

	/* O_NONBLOCK: a FIFO is refused below, not waited on */
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		say(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		say(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		say(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if (st.st_mode & 077) {
		say(err, errlen,
			"%s: key file is readable or writable by group or others (mode %04o): chmod 600 %s",
			path, (unsigned)(st.st_mode & 07777), path);
		goto fail;
	}
	if (st.st_size != RPMAFS_AUTH_KEY_BYTES) {
		say(err, errlen, "%s: a key file holds %d bytes, this one %lld", path,
			RPMAFS_AUTH_KEY_BYTES, (long long)st.st_size);
		goto fail;
	}
	while (got < RPMAFS_AUTH_KEY_BYTES) {
		r = read(fd, k + got, RPMAFS_AUTH_KEY_BYTES - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			say(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	/* the file may have changed since fstat: what was read counts */
	if (got != RPMAFS_AUTH_KEY_BYTES || read(fd, &extra, 1) != 0) {
		say(err, errlen, "%s: a key file holds %d bytes, this one %s", path,
			RPMAFS_AUTH_KEY_BYTES, got != RPMAFS_AUTH_KEY_BYTES ? "fewer" : "more");
		goto fail;
	}
	close(fd);
	return 0;
fail:
	close(fd);
	sodium_memzero(k, RPMAFS_AUTH_KEY_BYTES);
	return -1;
}

/*
 * copy_n -- the n bytes of s and a NUL, malloc'd: as strndup, but through
 * malloc itself, so that the unit tests' allocation count sees it
 */
static char *copy_n(const char *s, size_t n)
{
	char *c = malloc(n + 1);

	if (c) {
		memcpy(c, s, n);
		c[n] = '\0';
	}
	return c;
}

/* base_name -- path's last component without a trailing ".key", malloc'd */
static char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n > 4 && strcmp(b + n - 4, ".key") == 0)
		n -= 4;
	return copy_n(b, n);
}

int rpmafs_key_load(
	const char *path, const char *name, struct rpmafs_key **key, char *err, size_t errlen)
{
	struct rpmafs_key *k;

	*key = NULL;
	if (rpmafs_auth_init() != 0) {
		say(err, errlen, "%s: libsodium does not start", path);
		return -1;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		goto nomem;
	k->own = true;
	k->name = name ? copy_n(name, strlen(name)) : base_name(path);
	k->k = sodium_malloc(RPMAFS_AUTH_KEY_BYTES);
	if (!k->name || !k->k)
		goto nomem;
	if (read_key(AT_FDCWD, path, path, k->k, err, errlen) != 0) {
		rpmafs_key_delete(&k);
		return -1;
	}
	rpmafs_key_make_id(k->k, k->id);
	sodium_mprotect_readonly(k->k);
	*key = k;
	return 0;
nomem:
	say(err, errlen, "%s: out of memory", path);
	rpmafs_key_delete(&k);
	return -1;
}

void rpmafs_key_delete(struct rpmafs_key **key)
{
	struct rpmafs_key *k = *key;

	if (!k)
		return;
	if (k->own && k->k)
		sodium_free(k->k); /* wipes */
	sodium_memzero(k->id, sizeof(k->id));
	free(k->name);
	free(k);
	*key = NULL;
}

const char *rpmafs_key_name(const struct rpmafs_key *key)
{
	return key->name;
}

const uint8_t *rpmafs_key_bytes(const struct rpmafs_key *key)
{
	return key->k;
}

const uint8_t *rpmafs_key_id(const struct rpmafs_key *key)
{
	return key->id;
}

/* good_name -- 1 .. RPMAFS_AUTH_NAME_MAX bytes of [A-Za-z0-9._-] */
static bool good_name(const char *s, size_t n)
{
	if (n == 0 || n > RPMAFS_AUTH_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct rpmafs_key *)a)->name, ((const struct rpmafs_key *)b)->name);
}

/* is_key_file -- the entry's name ends in ".key" */
static bool is_key_file(const char *d)
{
	size_t n = strlen(d);

	return n >= 4 && strcmp(d + n - 4, ".key") == 0;
}

/* list_names -- the names (without ".key") of dir's *.key entries into ring->keys */
static int list_names(
	DIR *d, const char *dir, struct rpmafs_keyring *ring, char *err, size_t errlen)
{
	struct dirent *e;

	ring->keys = calloc(RPMAFS_AUTH_MAX_KEYS, sizeof(*ring->keys));
	if (!ring->keys) {
		say(err, errlen, "%s: out of memory", dir);
		return -1;
	}
	errno = 0;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!is_key_file(e->d_name))
			continue;
		if (!good_name(e->d_name, n - 4)) {
			say(err, errlen,
				"%s/%s: a key's name (the file name without .key) is 1 to %d bytes of A-Z a-z 0-9 . _ -",
				dir, e->d_name, RPMAFS_AUTH_NAME_MAX);
			return -1;
		}
		if (ring->count == RPMAFS_AUTH_MAX_KEYS) {
			say(err, errlen, "%s: more than %d *.key files", dir, RPMAFS_AUTH_MAX_KEYS);
			return -1;
		}
		ring->keys[ring->count].name = copy_n(e->d_name, n - 4);
		if (!ring->keys[ring->count].name) {
			say(err, errlen, "%s: out of memory", dir);
			return -1;
		}
		ring->count++;
		errno = 0;
	}
	if (errno) {
		say(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (ring->count == 0) {
		say(err, errlen, "%s: no *.key file", dir);
		return -1;
	}
	qsort(ring->keys, ring->count, sizeof(*ring->keys), by_name);
	return 0;
}

int rpmafs_keyring_load(const char *dir, struct rpmafs_keyring **out, char *err, size_t errlen)
{
	struct rpmafs_keyring *ring;
	char path[4096];
	DIR *d = NULL;
	size_t n;

	*out = NULL;
	if (rpmafs_auth_init() != 0) {
		say(err, errlen, "%s: libsodium does not start", dir);
		return -1;
	}
	ring = calloc(1, sizeof(*ring));
	/* malloc, not asprintf: the unit tests' allocation count sees it */
	n = strlen(dir) + sizeof("sender's key is not one of 's");
	if (ring)
		ring->unknown = malloc(n);
	if (!ring || !ring->unknown) {
		say(err, errlen, "%s: out of memory", dir);
		goto fail;
	}
	snprintf(ring->unknown, n, "sender's key is not one of %s's", dir);
	d = opendir(dir);
	if (!d) {
		say(err, errlen, "%s: %s", dir, strerror(errno));
		goto fail;
	}
	if (list_names(d, dir, ring, err, errlen) != 0)
		goto fail;
	ring->block = sodium_malloc((size_t)ring->count * RPMAFS_AUTH_KEY_BYTES);
	if (!ring->block) {
		say(err, errlen, "%s: out of memory", dir);
		goto fail;
	}
	for (unsigned i = 0; i < ring->count; i++) {
		struct rpmafs_key *k = &ring->keys[i];

		k->k = ring->block + (size_t)i * RPMAFS_AUTH_KEY_BYTES;
		if (snprintf(path, sizeof(path), "%s/%s.key", dir, k->name) >= (int)sizeof(path)) {
			say(err, errlen, "%s/%s.key: path too long", dir, k->name);
			goto fail;
		}
		if (read_key(dirfd(d), path + strlen(dir) + 1, path, k->k, err, errlen) != 0)
			goto fail;
		rpmafs_key_make_id(k->k, k->id);
	}
	sodium_mprotect_readonly(ring->block);
	closedir(d);
	*out = ring;
	return 0;
fail:
	if (d)
		closedir(d);
	rpmafs_keyring_delete(&ring);
	return -1;
}

void rpmafs_keyring_delete(struct rpmafs_keyring **ring)
{
	struct rpmafs_keyring *r = *ring;

	if (!r)
		return;
	if (r->keys) {
		for (unsigned i = 0; i < r->count; i++) {
			sodium_memzero(r->keys[i].id, sizeof(r->keys[i].id));
			free(r->keys[i].name);
		}
		free(r->keys);
	}
	if (r->block)
		sodium_free(r->block); /* wipes */
	free(r->unknown);
	free(r);
	*ring = NULL;
}

unsigned rpmafs_keyring_count(const struct rpmafs_keyring *ring)
{
	return ring->count;
}

const struct rpmafs_key *rpmafs_keyring_key(const struct rpmafs_keyring *ring, unsigned i)
{
	return i < ring->count ? &ring->keys[i] : NULL;
}

const char *rpmafs_keyring_unknown(const struct rpmafs_keyring *ring)
{
	return ring->unknown;
}
