// SPDX-License-Identifier: BSD-3-Clause
/* status.c -- a spool's figures: its key table (keys.h) and the text's change time */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "keys.h"
#include "status.h"
#include "spool/spool.h"

/* every key, in the order the status file lists them */
enum key {
	K_STATE, K_ADDRESS, K_MODE, K_FRAMING, K_COMPLETION, K_CONFIRM, K_SESSION, K_CLOSE,
	K_MAX_MESSAGE, K_POSTED, K_COMPLETED, K_ACKED, K_UNACKED, K_FAILED, K_IN_FLIGHT, K_PENDING,
	K_REFUSED, K_OPEN, K_BYTES_POSTED, K_BYTES_CONFIRMED, K_RECONNECTS, K_BAD_ACKS, K_LAST_ERROR,
	K_LAST_WR_ID, K_LAST_POSTED, K_LAST_COMPLETED, K_PAYLOAD_COPIES, K_SMALL_COPIES,
	K_SMALL_SLOTS, K_RESENT, K_POST_CALLS, K_SYNC_REAPED, K_COUNT
};

static const char *const key_names[K_COUNT] = {
	[K_STATE] = "state",
	[K_ADDRESS] = "address",
	[K_MODE] = "mode",
	[K_FRAMING] = "framing",
	[K_COMPLETION] = "completion",
	[K_CONFIRM] = "confirm",
	[K_SESSION] = "session",
	[K_CLOSE] = "close",
	[K_MAX_MESSAGE] = "max_message",
	[K_POSTED] = "posted",
	[K_COMPLETED] = "completed",
	[K_ACKED] = "acked",
	[K_UNACKED] = "unacked",
	[K_FAILED] = "failed",
	[K_IN_FLIGHT] = "in_flight",
	[K_PENDING] = "pending",
	[K_REFUSED] = "refused",
	[K_OPEN] = "open",
	[K_BYTES_POSTED] = "bytes_posted",
	[K_BYTES_CONFIRMED] = "bytes_confirmed",
	[K_RECONNECTS] = "reconnects",
	[K_BAD_ACKS] = "bad_acks",
	[K_LAST_ERROR] = "last_error",
	[K_LAST_WR_ID] = "last_wr_id",
	[K_LAST_POSTED] = "last_posted",
	[K_LAST_COMPLETED] = "last_completed",
	[K_PAYLOAD_COPIES] = "payload_copies",
	[K_SMALL_COPIES] = "small_copies",
	[K_SMALL_SLOTS] = "small_slots",
	[K_RESENT] = "resent",
	[K_POST_CALLS] = "post_calls",
	[K_SYNC_REAPED] = "sync_reaped",
};

static void fmt_time(const struct timespec *ts, char *buf, size_t len)
{
	if (ts->tv_sec == 0 && ts->tv_nsec == 0)
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%lld.%09ld", (long long)ts->tv_sec, ts->tv_nsec);
}

/*
 * the confirmation in force: that of the last connection; before the first
 * one, what the config asks for ("auto": whatever the receiver offers)
 */
static const char *confirm_name(const struct rpmafs_peer_cfg *pc, const struct spool_stats *st)
{
	if (pc->type == RPMAFS_PEER_NULL || pc->confirm == RPMAFS_CONFIRM_TRANSPORT)
		return "transport";
	if (st->confirm_receiver || pc->confirm == RPMAFS_CONFIRM_RECEIVER)
		return "receiver";
	return st->ever_up ? "transport" : "auto";
}

/* what a key's value is read from: one snapshot of the figures */
struct snap {
	const struct spool *sp;
	struct spool_stats st;
};

static void value_of(const void *snap_v, unsigned key, char *buf, size_t len)
{
	const struct snap *snap = snap_v;
	const struct spool_stats *st = &snap->st;
	const struct rpmafs_peer_cfg *pc = spool_cfg(snap->sp);
	enum key k = (enum key)key;

	switch (k) {
	case K_STATE:
		snprintf(buf, len, "%s", st->state);
		break;
	case K_ADDRESS:
		if (pc->type == RPMAFS_PEER_NULL)
			snprintf(buf, len, "null");
		else
			snprintf(buf, len, "%s:%u", pc->address, pc->port);
		break;
	case K_MODE:
		snprintf(buf, len, "%s", pc->mode == RPMAFS_MODE_SYNC ? "sync" : "async");
		break;
	case K_FRAMING:
		snprintf(buf, len, "%s", pc->framing == RPMAFS_FRAMING_FILE ? "file" : "write");
		break;
	case K_COMPLETION:
		snprintf(buf, len, "%s",
			pc->completion == RPMAFS_COMPLETION_ALWAYS ? "always" : "on_error");
		break;
	case K_CONFIRM:
		snprintf(buf, len, "%s", confirm_name(pc, st));
		break;
	case K_SESSION:
		/* the id the next connect request offers (docs/design.md §8.6, §11) */
		if (st->session)
			snprintf(buf, len, "%016" PRIx64, st->session);
		else
			snprintf(buf, len, "none");
		break;
	case K_CLOSE:
		snprintf(buf, len, "%s", pc->close == RPMAFS_CLOSE_WAIT ? "wait" : "return");
		break;
	case K_MAX_MESSAGE:
		snprintf(buf, len, "%" PRIu32, st->max_message);
		break;
	case K_POSTED:
		snprintf(buf, len, "%" PRIu64, st->posted);
		break;
	case K_COMPLETED:
		snprintf(buf, len, "%" PRIu64, st->completed);
		break;
	case K_ACKED:
		snprintf(buf, len, "%" PRIu64, st->acked);
		break;
	case K_UNACKED:
		snprintf(buf, len, "%" PRIu64, st->unacked);
		break;
	case K_BAD_ACKS:
		snprintf(buf, len, "%" PRIu64, st->bad_acks);
		break;
	case K_FAILED:
		snprintf(buf, len, "%" PRIu64, st->failed);
		break;
	case K_IN_FLIGHT:
		snprintf(buf, len, "%" PRIu64, st->in_flight);
		break;
	case K_PENDING:
		snprintf(buf, len, "%" PRIu64, st->pending);
		break;
	case K_REFUSED:
		snprintf(buf, len, "%" PRIu64, st->refused);
		break;
	case K_OPEN:
		snprintf(buf, len, "%" PRIu64, st->open_handles);
		break;
	case K_BYTES_POSTED:
		snprintf(buf, len, "%" PRIu64, st->bytes_posted);
		break;
	case K_BYTES_CONFIRMED:
		snprintf(buf, len, "%" PRIu64, st->bytes_confirmed);
		break;
	case K_RECONNECTS:
		snprintf(buf, len, "%" PRIu64, st->reconnects);
		break;
	case K_LAST_ERROR:
		snprintf(buf, len, "%s", st->last_error);
		break;
	case K_LAST_WR_ID:
		snprintf(buf, len, "%" PRIu64, st->last_wr_id);
		break;
	case K_LAST_POSTED:
		fmt_time(&st->mtime, buf, len);
		break;
	case K_LAST_COMPLETED:
		fmt_time(&st->ctime, buf, len);
		break;
	case K_PAYLOAD_COPIES:
		snprintf(buf, len, "%" PRIu64, st->payload_copies);
		break;
	case K_SMALL_COPIES:
		snprintf(buf, len, "%" PRIu64, st->small_copies);
		break;
	case K_SMALL_SLOTS:
		snprintf(buf, len, "%u", spool_small_slots(snap->sp));
		break;
	case K_RESENT:
		snprintf(buf, len, "%" PRIu64, st->resent);
		break;
	case K_POST_CALLS:
		snprintf(buf, len, "%" PRIu64, st->post_calls);
		break;
	case K_SYNC_REAPED:
		snprintf(buf, len, "%" PRIu64, st->sync_reaped);
		break;
	case K_COUNT:
		buf[0] = '\0';
		break;
	}
}

static const struct keys spool_keys = {key_names, K_COUNT, value_of};

/* FNV-1a: enough to tell one rendering from the next */
static uint64_t text_hash(const char *text, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
	return h ? h : 1;
}

char *status_render(struct spool *sp, size_t *len, struct timespec *changed)
{
	struct snap snap = {.sp = sp};
	char *text;

	spool_stats_get(sp, &snap.st);
	text = keys_text(&spool_keys, &snap, len);
	if (text && changed) {
		*changed = spool_status_rendered(sp, text_hash(text, *len));
	}
	return text;
}

int status_xattr(struct spool *sp, const char *name, char *buf, size_t size)
{
	struct snap snap = {.sp = sp};

	spool_stats_get(sp, &snap.st);
	return keys_xattr(&spool_keys, &snap, name, buf, size);
}

static char xattr_names[K_COUNT * 32];
static size_t xattr_names_len;

static void build_xattr_names(void)
{
	int n = keys_xattr_names(&spool_keys, xattr_names, sizeof(xattr_names));

	xattr_names_len = n > 0 ? (size_t)n : 0;
}

const char *status_xattr_names(size_t *len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, build_xattr_names);
	*len = xattr_names_len;
	return xattr_names;
}
