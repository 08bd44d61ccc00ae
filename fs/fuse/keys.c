// SPDX-License-Identifier: BSD-3-Clause
/* keys.c -- a key table as status text and xattrs (see keys.h) */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"

char *keys_text(const struct keys *t, const void *snap, size_t *len)
{
	size_t cap = 0, used = 0;
	char *text;

	for (unsigned k = 0; k < t->count; k++)
		cap += strlen(t->names[k]) + 3 + KEYS_VALUE_MAX;
	text = malloc(cap + 1);
	if (!text)
		return NULL;
	for (unsigned k = 0; k < t->count; k++) {
		char value[KEYS_VALUE_MAX];

		t->value(snap, k, value, sizeof(value));
		used += (size_t)snprintf(
			text + used, cap + 1 - used, "%s: %s\n", t->names[k], value);
	}
	text[used] = '\0';
	*len = used;
	return text;
}

int keys_xattr(const struct keys *t, const void *snap, const char *name, char *buf, size_t size)
{
	const size_t plen = strlen(KEYS_XATTR_PREFIX);
	char value[KEYS_VALUE_MAX];
	size_t n;

	if (strncmp(name, KEYS_XATTR_PREFIX, plen) != 0)
		return -ENODATA;
	for (unsigned k = 0; k < t->count; k++) {
		if (strcmp(name + plen, t->names[k]) != 0)
			continue;
		t->value(snap, k, value, sizeof(value));
		n = strlen(value);
		if (size && n <= size)
			memcpy(buf, value, n);
		return (int)n;
	}
	return -ENODATA;
}

int keys_xattr_names(const struct keys *t, char *buf, size_t cap)
{
	size_t used = 0;

	for (unsigned k = 0; k < t->count; k++) {
		int n = snprintf(buf + used, cap - used, "%s%s", KEYS_XATTR_PREFIX, t->names[k]);

		if (n < 0 || (size_t)n + 1 > cap - used)
			return -ERANGE;
		used += (size_t)n + 1;
	}
	return (int)used;
}
