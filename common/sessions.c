// SPDX-License-Identifier: BSD-3-Clause
/*
 * sessions.c -- the duplicate table (see sessions.h)
 *
 * Entries live in one array (grown by doubling up to max_sessions, so an
 * idle receiver holds a few hundred bytes); a hash of chained indices
 * finds a session, and a doubly linked list through the array keeps them
 * in the order they were last seen, most recent at the head: eviction
 * takes the tail, expiry walks from it. Removing an entry moves the last
 * one of the array into its place.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "sessions.h"

#define NUM_MASK ((1u << 30) - 1)
#define HALF (1u << 29)
#define NONE UINT32_MAX

#define BLOB_MAGIC "RPSS"
#define BLOB_VERSION 1
#define BLOB_HEAD 32
#define BLOB_ENTRY 32
#define BLOB_SUM 8

struct entry {
	uint64_t session;
	uint64_t last_ms;    /* seen or marked last */
	uint64_t bits;	     /* bit i: number hi - 1 - i marked */
	uint32_t hi;	     /* the highest number marked */
	uint32_t prev, next; /* the list by last seen: prev is more recent */
	uint32_t chain;	     /* the next entry of the same hash bucket */
};

struct rpmafs_sessions {
	struct rpmafs_sessions_limits lim;
	struct entry *e;
	uint32_t n, cap;
	uint32_t *bucket;    /* nbuckets heads, NONE: empty */
	uint32_t nbuckets;   /* a power of two, >= 2 * cap */
	uint32_t head, tail; /* most and least recently seen */
	uint64_t evicted, expired;
};

static uint32_t hash(const struct rpmafs_sessions *s, uint64_t session)
{
	/* splitmix64's finaliser: the ids are random, but not to be trusted */
	uint64_t z = session + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (uint32_t)z & (s->nbuckets - 1);
}

static uint32_t find(const struct rpmafs_sessions *s, uint64_t session)
{
	if (!s->nbuckets)
		return NONE;
	for (uint32_t i = s->bucket[hash(s, session)]; i != NONE; i = s->e[i].chain)
		if (s->e[i].session == session)
			return i;
	return NONE;
}

static void list_unlink(struct rpmafs_sessions *s, uint32_t i)
{
	struct entry *x = &s->e[i];

	if (x->prev != NONE)
		s->e[x->prev].next = x->next;
	else
		s->head = x->next;
	if (x->next != NONE)
		s->e[x->next].prev = x->prev;
	else
		s->tail = x->prev;
	x->prev = x->next = NONE;
}

static void list_push_head(struct rpmafs_sessions *s, uint32_t i)
{
	struct entry *x = &s->e[i];

	x->prev = NONE;
	x->next = s->head;
	if (s->head != NONE)
		s->e[s->head].prev = i;
	else
		s->tail = i;
	s->head = i;
}

static void list_push_tail(struct rpmafs_sessions *s, uint32_t i)
{
	struct entry *x = &s->e[i];

	x->next = NONE;
	x->prev = s->tail;
	if (s->tail != NONE)
		s->e[s->tail].next = i;
	else
		s->head = i;
	s->tail = i;
}

static void touch(struct rpmafs_sessions *s, uint32_t i, uint64_t now_ms)
{
	s->e[i].last_ms = now_ms;
	if (s->head != i) {
		list_unlink(s, i);
		list_push_head(s, i);
	}
}

/* the slot (bucket head or chain link) that points at entry i */
static uint32_t *link_to(struct rpmafs_sessions *s, uint32_t i)
{
	uint32_t *p = &s->bucket[hash(s, s->e[i].session)];

	while (*p != i)
		p = &s->e[*p].chain;
	return p;
}

static void remove_entry(struct rpmafs_sessions *s, uint32_t i)
{
	uint32_t last = s->n - 1;

	*link_to(s, i) = s->e[i].chain;
	list_unlink(s, i);
	if (i != last) {
		/* the last entry moves into i: whatever pointed at it points at i */
		*link_to(s, last) = i;
		s->e[i] = s->e[last];
		if (s->e[i].prev != NONE)
			s->e[s->e[i].prev].next = i;
		else
			s->head = i;
		if (s->e[i].next != NONE)
			s->e[s->e[i].next].prev = i;
		else
			s->tail = i;
	}
	s->n--;
}

static bool expired(const struct rpmafs_sessions *s, const struct entry *x, uint64_t now_ms)
{
	/* a clock that went back makes an entry young, never old */
	return now_ms > x->last_ms && now_ms - x->last_ms >= s->lim.ttl_ms;
}

/* drop the sessions not seen for ttl_ms, oldest first */
static void expire(struct rpmafs_sessions *s, uint64_t now_ms)
{
	while (s->tail != NONE && expired(s, &s->e[s->tail], now_ms)) {
		remove_entry(s, s->tail);
		s->expired++;
	}
}

static uint32_t buckets_for(uint32_t cap)
{
	uint32_t nb = 16;

	while (nb < 2 * cap)
		nb *= 2;
	return nb;
}

/* room for cap entries, the hash rebuilt; 0 or -ENOMEM (then nothing changed) */
static int grow(struct rpmafs_sessions *s, uint32_t cap)
{
	uint32_t nb = buckets_for(cap);
	struct entry *e;
	uint32_t *b;

	e = realloc(s->e, (size_t)cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	s->e = e;
	b = malloc((size_t)nb * sizeof(*b));
	if (!b)
		return -ENOMEM; /* the bigger array is kept, cap is not raised */
	free(s->bucket);
	s->bucket = b;
	s->nbuckets = nb;
	s->cap = cap;
	for (uint32_t i = 0; i < nb; i++)
		b[i] = NONE;
	for (uint32_t i = 0; i < s->n; i++) {
		uint32_t h = hash(s, s->e[i].session);

		s->e[i].chain = b[h];
		b[h] = i;
	}
	return 0;
}

int rpmafs_sessions_new(const struct rpmafs_sessions_limits *lim, struct rpmafs_sessions **out)
{
	struct rpmafs_sessions_limits l = {
		RPMAFS_SESSIONS_MAX_DEFAULT, RPMAFS_SESSIONS_TTL_DEFAULT_MS};
	struct rpmafs_sessions *s;

	*out = NULL;
	if (lim)
		l = *lim;
	if (l.max_sessions == 0 || l.max_sessions > RPMAFS_SESSIONS_MAX_LIMIT || l.ttl_ms == 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lim = l;
	s->head = s->tail = NONE;
	*out = s;
	return 0;
}

void rpmafs_sessions_delete(struct rpmafs_sessions **s)
{
	if (!*s)
		return;
	free((*s)->e);
	free((*s)->bucket);
	free(*s);
	*s = NULL;
}

static bool window_seen(const struct entry *x, uint32_t number)
{
	uint32_t d = (number - x->hi) & NUM_MASK, b;

	if (d == 0)
		return true;
	if (d < HALF)
		return false;
	b = (NUM_MASK + 1) - d;
	if (b > RPMAFS_SESSIONS_WINDOW)
		return true;
	return (x->bits >> (b - 1)) & 1;
}

static void window_mark(struct entry *x, uint32_t number)
{
	uint32_t d = (number - x->hi) & NUM_MASK, b;

	if (d == 0)
		return;
	if (d < HALF) {
		/* ahead: the old hi becomes bit d - 1 */
		if (d > RPMAFS_SESSIONS_WINDOW)
			x->bits = 0;
		else if (d == RPMAFS_SESSIONS_WINDOW)
			x->bits = 1ull << 63;
		else
			x->bits = (x->bits << d) | (1ull << (d - 1));
		x->hi = number;
		return;
	}
	b = (NUM_MASK + 1) - d;
	if (b <= RPMAFS_SESSIONS_WINDOW)
		x->bits |= 1ull << (b - 1);
	/* older than the window: already treated as seen */
}

bool rpmafs_sessions_seen(
	struct rpmafs_sessions *s, uint64_t session, uint32_t number, uint64_t now_ms)
{
	uint32_t i;

	if (!session)
		return false;
	expire(s, now_ms);
	i = find(s, session);
	if (i == NONE)
		return false;
	touch(s, i, now_ms);
	return window_seen(&s->e[i], number & NUM_MASK);
}

void rpmafs_sessions_mark(
	struct rpmafs_sessions *s, uint64_t session, uint32_t number, uint64_t now_ms)
{
	struct entry *x;
	uint32_t i, h;

	if (!session)
		return;
	number &= NUM_MASK;
	expire(s, now_ms);
	i = find(s, session);
	if (i != NONE) {
		touch(s, i, now_ms);
		window_mark(&s->e[i], number);
		return;
	}
	if (s->n >= s->lim.max_sessions) {
		remove_entry(s, s->tail);
		s->evicted++;
	}
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 8;

		if (cap > s->lim.max_sessions)
			cap = s->lim.max_sessions;
		if (grow(s, cap)) {
			if (!s->n)
				return; /* nothing to give up: not remembered */
			remove_entry(s, s->tail);
			s->evicted++;
		}
	}
	i = s->n++;
	x = &s->e[i];
	*x = (struct entry){.session = session, .last_ms = now_ms, .hi = number};
	h = hash(s, session);
	x->chain = s->bucket[h];
	s->bucket[h] = i;
	x->prev = x->next = NONE;
	list_push_head(s, i);
}

unsigned rpmafs_sessions_count(const struct rpmafs_sessions *s)
{
	return s->n;
}

uint64_t rpmafs_sessions_evicted(const struct rpmafs_sessions *s)
{
	return s->evicted;
}

uint64_t rpmafs_sessions_expired(const struct rpmafs_sessions *s)
{
	return s->expired;
}

static uint64_t fnv1a64(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

size_t rpmafs_sessions_encoded_size(const struct rpmafs_sessions *s)
{
	return BLOB_HEAD + (size_t)s->n * BLOB_ENTRY + BLOB_SUM;
}

size_t rpmafs_sessions_encode(const struct rpmafs_sessions *s, uint8_t *buf, size_t cap)
{
	size_t len = rpmafs_sessions_encoded_size(s);
	uint8_t *p;

	if (!buf || cap < len)
		return 0;
	memcpy(buf, BLOB_MAGIC, 4);
	put_le16(buf + 4, BLOB_VERSION);
	put_le16(buf + 6, BLOB_ENTRY);
	put_le32(buf + 8, s->n);
	put_le32(buf + 12, 0);
	put_le64(buf + 16, s->evicted);
	put_le64(buf + 24, s->expired);
	p = buf + BLOB_HEAD;
	for (uint32_t i = s->head; i != NONE; i = s->e[i].next, p += BLOB_ENTRY) {
		const struct entry *x = &s->e[i];

		put_le64(p, x->session);
		put_le64(p + 8, x->last_ms);
		put_le32(p + 16, x->hi);
		put_le32(p + 20, 0);
		put_le64(p + 24, x->bits);
	}
	put_le64(p, fnv1a64(buf, len - BLOB_SUM));
	return len;
}

int rpmafs_sessions_decode(struct rpmafs_sessions *s, const uint8_t *buf, size_t len)
{
	struct rpmafs_sessions *t;
	uint32_t count, keep;
	const uint8_t *p;
	int ret;

	if (!buf || len < BLOB_HEAD + BLOB_SUM || memcmp(buf, BLOB_MAGIC, 4) != 0 ||
		get_le16(buf + 4) != BLOB_VERSION || get_le16(buf + 6) != BLOB_ENTRY ||
		get_le32(buf + 12) != 0)
		return -EINVAL;
	count = get_le32(buf + 8);
	if ((len - BLOB_HEAD - BLOB_SUM) % BLOB_ENTRY ||
		(len - BLOB_HEAD - BLOB_SUM) / BLOB_ENTRY != count)
		return -EINVAL;
	if (get_le64(buf + len - BLOB_SUM) != fnv1a64(buf, len - BLOB_SUM))
		return -EINVAL;

	/* into a new table, so that s stays as it was on any error */
	ret = rpmafs_sessions_new(&s->lim, &t);
	if (ret)
		return ret;
	keep = count < s->lim.max_sessions ? count : s->lim.max_sessions;
	if (keep && grow(t, keep)) {
		rpmafs_sessions_delete(&t);
		return -ENOMEM;
	}
	p = buf + BLOB_HEAD;
	for (uint32_t k = 0; k < count; k++, p += BLOB_ENTRY) {
		uint64_t session = get_le64(p);
		uint32_t hi = get_le32(p + 16), h, i;

		if (!session || hi > NUM_MASK || get_le32(p + 20) != 0 ||
			find(t, session) != NONE) {
			rpmafs_sessions_delete(&t);
			return -EINVAL;
		}
		if (k >= keep)
			continue; /* checked against the kept ones, not kept: counted below */
		i = t->n++;
		t->e[i] = (struct entry){.session = session,
			.last_ms = get_le64(p + 8),
			.hi = hi,
			.bits = get_le64(p + 24)};
		h = hash(t, session);
		t->e[i].chain = t->bucket[h];
		t->bucket[h] = i;
		list_push_tail(t, i);
	}
	free(s->e);
	free(s->bucket);
	s->e = t->e;
	s->bucket = t->bucket;
	s->n = t->n;
	s->cap = t->cap;
	s->nbuckets = t->nbuckets;
	s->head = t->head;
	s->tail = t->tail;
	s->evicted = get_le64(buf + 16) + (count - keep);
	s->expired = get_le64(buf + 24);
	free(t);
	return 0;
}
