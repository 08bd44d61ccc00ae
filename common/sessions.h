/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sessions.h -- what a receiver has delivered, per sender session: the
 * duplicate table of exactly-once delivery (docs/design.md §8.6)
 *
 * A sender that offers receiver confirmation and a session (pdata.h,
 * RPMAFS_PDATA_F_SESSION) numbers its messages 1, 2, 3, ... modulo 2^30
 * for the life of the session and, after a connection is lost, sends what
 * was not acknowledged again, in order, with the same numbers, on its next
 * connection. The receiver asks rpmafs_sessions_seen before it delivers a
 * numbered message and calls rpmafs_sessions_mark once it did: a message
 * seen is acknowledged and not delivered again, whichever connection it
 * came on.
 *
 * Window per session (IPsec anti-replay style): hi, the highest number
 * marked, and a 64-bit map of the numbers hi-1 .. hi-64 marked. For a
 * number n, d = (n - hi) mod 2^30:
 *	d == 0			seen
 *	0 < d < 2^29		not seen (ahead)
 *	otherwise, behind by b = 2^30 - d:
 *	  b <= 64		the map's bit
 *	  b > 64		seen: too old to tell, treated as delivered, since
 *				a sender re-sends in order, oldest first, and is
 *				never more than its window behind
 * Gaps are allowed (a message failed for its own fault is never sent
 * again, and a number marked later fills its bit).
 *
 * Bounds: at most max_sessions sessions. They are created only by mark (a
 * delivered message), never by a connect, so a flood of connects creates
 * nothing; when the table is full the least recently seen session is
 * evicted (counted), and one not seen (looked up or marked) for ttl_ms is
 * dropped (counted). A forgotten session's re-sends are delivered again:
 * at least once, as without the table.
 *
 * Time: now_ms is the caller's clock in milliseconds. A table that is
 * persisted (encode/decode) needs a clock that survives the process (wall
 * clock); an entry whose time is after now (the clock went back) is of age
 * 0, not expired.
 *
 * Not thread-safe: one owner (the loop thread) calls everything.
 */
#ifndef RPMAFS_SESSIONS_H
#define RPMAFS_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rpmafs_sessions; /* opaque: bounded table of sender sessions and their windows */

struct rpmafs_sessions_limits {
	unsigned max_sessions; /* 1 .. RPMAFS_SESSIONS_MAX_LIMIT */
	uint64_t ttl_ms;       /* > 0 */
};

#define RPMAFS_SESSIONS_MAX_DEFAULT 4096
#define RPMAFS_SESSIONS_TTL_DEFAULT_MS (24ull * 3600 * 1000)
#define RPMAFS_SESSIONS_WINDOW 64	     /* numbers below the highest still told apart */
#define RPMAFS_SESSIONS_MAX_LIMIT (1u << 24) /* the most max_sessions may say */

/*
 * rpmafs_sessions_new -- an empty table with lim (NULL: the defaults).
 * 0, -ENOMEM, or -EINVAL (max_sessions 0 or above the limit, ttl_ms 0).
 */
int rpmafs_sessions_new(const struct rpmafs_sessions_limits *lim, struct rpmafs_sessions **out);

/* rpmafs_sessions_delete -- free the table (NULL is fine); NULLs *s */
void rpmafs_sessions_delete(struct rpmafs_sessions **s);

/*
 * rpmafs_sessions_seen -- true when (session, number) was already
 * delivered (marked); numbers are 30-bit, modulo 2^30 (higher bits are
 * ignored). A known session counts as seen now (its age starts again);
 * session 0 is never seen.
 */
bool rpmafs_sessions_seen(
	struct rpmafs_sessions *s, uint64_t session, uint32_t number, uint64_t now_ms);

/*
 * rpmafs_sessions_mark -- record (session, number) as delivered (written
 * out); creates the session, evicting the least recently seen one when
 * full (counted) and dropping those unseen for ttl_ms (counted). Session 0
 * is ignored. Out of memory while growing, the least recently seen session
 * is evicted instead (counted), so a mark never fails.
 */
void rpmafs_sessions_mark(
	struct rpmafs_sessions *s, uint64_t session, uint32_t number, uint64_t now_ms);

/* counters */
unsigned rpmafs_sessions_count(const struct rpmafs_sessions *s);   /* sessions held */
uint64_t rpmafs_sessions_evicted(const struct rpmafs_sessions *s); /* forgotten when full */
uint64_t rpmafs_sessions_expired(const struct rpmafs_sessions *s); /* forgotten after ttl_ms */

/*
 * Persistence (rpma-recv's state file): a self-describing little-endian
 * blob, checksummed, sessions most recently seen first:
 *
 *	offset	size	field
 *	0	4	magic "RPSS"
 *	4	2	version 1
 *	6	2	entry size, 32
 *	8	4	count of entries
 *	12	4	0 (reserved)
 *	16	8	evicted
 *	24	8	expired
 *	32	32 * count	entries: session (8, non-zero), last seen ms (8),
 *			hi (4, < 2^30), 0 (4), the map of hi-1 .. hi-64 (8)
 *	end	8	FNV-1a 64 of every byte before it
 */
size_t rpmafs_sessions_encoded_size(const struct rpmafs_sessions *s);

/* rpmafs_sessions_encode -- the blob into buf: its length, or 0 if cap is too small */
size_t rpmafs_sessions_encode(const struct rpmafs_sessions *s, uint8_t *buf, size_t cap);

/*
 * rpmafs_sessions_decode -- replace the contents of s (its limits stay)
 * with the blob of exactly len bytes at buf. 0; -EINVAL on garbage (wrong
 * magic, version, size or checksum, a session 0 or twice, hi out of range,
 * reserved bits set), -ENOMEM; on error s is unchanged. A blob with more
 * sessions than s takes keeps the most recently seen ones; the rest count
 * as evicted.
 */
int rpmafs_sessions_decode(struct rpmafs_sessions *s, const uint8_t *buf, size_t len);

#endif /* RPMAFS_SESSIONS_H */
