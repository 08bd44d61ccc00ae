// SPDX-License-Identifier: BSD-3-Clause
/*
 * nonces.c -- a receiver's replay window (auth.h): the last capacity
 * nonce_s it accepted, in a ring (oldest first out) indexed by a hash
 * table whose hash (SipHash, crypto_shorthash) is keyed at random, so
 * that no choice of nonces makes long chains
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth.h"

#define NONCES_MAX (1u << 20)

struct rpmafs_nonces {
	unsigned cap;	 /* slots in the ring */
	unsigned count;	 /* slots in use */
	unsigned oldest; /* the slot filled first, when count == cap */
	unsigned mask;	 /* buckets - 1 (a power of two, >= 2 * cap) */
	uint8_t (*slot)[RPMAFS_AUTH_NONCE_BYTES];
	uint32_t *next;	  /* per slot: the next slot in its bucket + 1, 0 = none */
	uint32_t *bucket; /* per bucket: its first slot + 1, 0 = empty */
	uint8_t key[crypto_shorthash_KEYBYTES];
};

int rpmafs_nonces_new(unsigned capacity, struct rpmafs_nonces **out)
{
	struct rpmafs_nonces *n;
	unsigned buckets = 1;

	*out = NULL;
	if (capacity == 0 || capacity > NONCES_MAX)
		return -EINVAL;
	if (rpmafs_auth_init() != 0)
		return -ENOMEM;
	while (buckets < 2 * capacity)
		buckets <<= 1;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->cap = capacity;
	n->mask = buckets - 1;
	n->slot = calloc(capacity, sizeof(*n->slot));
	n->next = calloc(capacity, sizeof(*n->next));
	n->bucket = calloc(buckets, sizeof(*n->bucket));
	if (!n->slot || !n->next || !n->bucket) {
		rpmafs_nonces_delete(&n);
		return -ENOMEM;
	}
	crypto_shorthash_keygen(n->key);
	*out = n;
	return 0;
}

void rpmafs_nonces_delete(struct rpmafs_nonces **n)
{
	struct rpmafs_nonces *p = *n;

	if (!p)
		return;
	free(p->slot);
	free(p->next);
	free(p->bucket);
	sodium_memzero(p->key, sizeof(p->key));
	free(p);
	*n = NULL;
}

static unsigned bucket_of(const struct rpmafs_nonces *n, const uint8_t *nonce)
{
	uint8_t h[crypto_shorthash_BYTES];
	uint32_t v;

	crypto_shorthash(h, nonce, RPMAFS_AUTH_NONCE_BYTES, n->key);
	memcpy(&v, h, sizeof(v));
	return v & n->mask;
}

/* unlink -- take slot s out of its bucket's chain */
static void unlink_slot(struct rpmafs_nonces *n, unsigned s)
{
	uint32_t *p = &n->bucket[bucket_of(n, n->slot[s])];

	while (*p && *p != s + 1)
		p = &n->next[*p - 1];
	if (*p)
		*p = n->next[s];
	n->next[s] = 0;
}

bool rpmafs_nonces_seen(struct rpmafs_nonces *n, const uint8_t nonce[RPMAFS_AUTH_NONCE_BYTES])
{
	unsigned b = bucket_of(n, nonce);
	unsigned s;

	/* nonces are no secret (they travel in the clear): memcmp is fine */
	for (uint32_t i = n->bucket[b]; i; i = n->next[i - 1])
		if (memcmp(n->slot[i - 1], nonce, RPMAFS_AUTH_NONCE_BYTES) == 0)
			return true;
	if (n->count < n->cap) {
		s = (n->oldest + n->count) % n->cap;
		n->count++;
	} else {
		s = n->oldest;
		unlink_slot(n, s);
		n->oldest = (n->oldest + 1) % n->cap;
	}
	memcpy(n->slot[s], nonce, RPMAFS_AUTH_NONCE_BYTES);
	/* b was computed before the unlink: the table's hash has not changed */
	n->next[s] = n->bucket[b];
	n->bucket[b] = s + 1;
	return false;
}
