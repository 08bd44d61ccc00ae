// SPDX-License-Identifier: BSD-3-Clause
/* metrics.c -- the mount's metrics file (see metrics.h) */

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "inbox/inbox.h"
#include "metrics.h"
#include "promtext.h"
#include "runtime/log.h"
#include "spool/spool.h"

struct mount_metrics {
	struct promtext_file *file;
	struct promtext *text; /* rebuilt each time */
	struct spool *const *spools;
	unsigned nspools;
	struct inbox *inbox;
	struct spool_stats *stats; /* one per spool, for the text */
};

static const struct spool_metric {
	const char *name;
	enum promtext_type type;
	const char *help;
	size_t off; /* of a uint64_t in struct spool_stats */
} spool_metrics[] = {
	{"rpmafs_messages_posted_total", PROMTEXT_COUNTER, "Messages posted to the peer.",
		offsetof(struct spool_stats, posted)},
	{"rpmafs_messages_completed_total", PROMTEXT_COUNTER,
		"Messages delivered (confirmed as the peer's confirm says).",
		offsetof(struct spool_stats, completed)},
	{"rpmafs_messages_failed_total", PROMTEXT_COUNTER,
		"Messages that failed (their write or close got an error).",
		offsetof(struct spool_stats, failed)},
	{"rpmafs_messages_refused_total", PROMTEXT_COUNTER,
		"Messages refused: never posted, the write or close got the error.",
		offsetof(struct spool_stats, refused)},
	{"rpmafs_bytes_posted_total", PROMTEXT_COUNTER, "Payload bytes posted to the peer.",
		offsetof(struct spool_stats, bytes_posted)},
	{"rpmafs_bytes_confirmed_total", PROMTEXT_COUNTER, "Payload bytes delivered.",
		offsetof(struct spool_stats, bytes_confirmed)},
	{"rpmafs_reconnects_total", PROMTEXT_COUNTER,
		"Connections to the peer made again after one was lost.",
		offsetof(struct spool_stats, reconnects)},
	{"rpmafs_resent_total", PROMTEXT_COUNTER,
		"Messages posted again after a reconnection (receiver confirmation).",
		offsetof(struct spool_stats, resent)},
	{"rpmafs_acked_total", PROMTEXT_COUNTER,
		"Messages acknowledged by the receiving program (receiver confirmation).",
		offsetof(struct spool_stats, acked)},
	{"rpmafs_bad_acks_total", PROMTEXT_COUNTER,
		"Connections dropped for an acknowledgement that cannot be true.",
		offsetof(struct spool_stats, bad_acks)},
	{"rpmafs_payload_copies_total", PROMTEXT_COUNTER,
		"Payloads copied in user space (small ones into small slots, file framing).",
		offsetof(struct spool_stats, payload_copies)},
	{"rpmafs_small_copies_total", PROMTEXT_COUNTER,
		"Of the payload copies, small payloads copied into small slots.",
		offsetof(struct spool_stats, small_copies)},
	{"rpmafs_in_flight", PROMTEXT_GAUGE, "Messages posted and not completed yet.",
		offsetof(struct spool_stats, in_flight)},
	{"rpmafs_pending", PROMTEXT_GAUGE, "Messages queued, waiting to be posted.",
		offsetof(struct spool_stats, pending)},
	{"rpmafs_unacked", PROMTEXT_GAUGE, "Messages completed and not acknowledged yet.",
		offsetof(struct spool_stats, unacked)},
	{"rpmafs_open_handles", PROMTEXT_GAUGE, "Open file descriptions of the spool file.",
		offsetof(struct spool_stats, open_handles)},
};

#define NSPOOL_METRICS (sizeof(spool_metrics) / sizeof(spool_metrics[0]))

/* at the end (final), no peer is connected: the file outlives the connections */
static void metrics_spools(struct promtext *pt, struct spool_stats *st, struct spool *const *spools,
	unsigned nspools, bool final)
{
	for (size_t k = 0; k < NSPOOL_METRICS; k++) {
		promtext_family(
			pt, spool_metrics[k].name, spool_metrics[k].type, spool_metrics[k].help);
		for (unsigned i = 0; i < nspools; i++)
			promtext_sample(pt, "peer", spool_cfg(spools[i])->name,
				*(const uint64_t *)((const char *)&st[i] + spool_metrics[k].off));
	}
	promtext_family(pt, "rpmafs_peer_connected", PROMTEXT_GAUGE,
		"1 while the connection to the peer is up, else 0.");
	for (unsigned i = 0; i < nspools; i++)
		promtext_sample(pt, "peer", spool_cfg(spools[i])->name,
			!final && strcmp(st[i].state, "connected") == 0);
	if (!nspools)
		return;
	/* the mount's, shared by its peers (one pool) */
	promtext_family(pt, "rpmafs_small_slots", PROMTEXT_GAUGE,
		"Small registered slots of the mount (a small write is copied into one).");
	promtext_sample(pt, NULL, NULL, spool_small_slots(spools[0]));
	promtext_family(pt, "rpmafs_small_slots_free", PROMTEXT_GAUGE,
		"Small slots free now (0: small writes take request buffers, zero-copy).");
	promtext_sample(pt, NULL, NULL, spool_small_slots_free(spools[0]));
}

static void metric1(struct promtext *pt, const char *name, enum promtext_type type,
	const char *help, uint64_t n)
{
	promtext_family(pt, name, type, help);
	promtext_sample(pt, NULL, NULL, n);
}

static void metrics_inbox(struct promtext *pt, struct inbox *ib, bool final)
{
	struct inbox_stats st;

	inbox_stats_get(ib, &st);
	metric1(pt, "rpmafs_inbox_messages_received_total", PROMTEXT_COUNTER,
		"Messages the inbox received.", st.q.received);
	metric1(pt, "rpmafs_inbox_messages_read_total", PROMTEXT_COUNTER,
		"Messages read from /inbox to their last byte.", st.q.read);
	metric1(pt, "rpmafs_inbox_bytes_received_total", PROMTEXT_COUNTER,
		"Payload bytes the inbox received.", st.q.bytes);
	metric1(pt, "rpmafs_inbox_connections_accepted_total", PROMTEXT_COUNTER,
		"Connections the inbox accepted.", st.accepted);
	metric1(pt, "rpmafs_inbox_connections_rejected_total", PROMTEXT_COUNTER,
		"Connections refused at connect time (allow, private data, limit).", st.rejected);
	metric1(pt, "rpmafs_inbox_connections_failed_total", PROMTEXT_COUNTER,
		"Connections closed for a bad message.", st.failed);
	metric1(pt, "rpmafs_inbox_acks_total", PROMTEXT_COUNTER,
		"Acknowledgements sent to receiver-confirmed senders.", st.acks);
	metric1(pt, "rpmafs_inbox_duplicates_total", PROMTEXT_COUNTER,
		"Messages dropped as a number already taken on their connection or, "
		"with a sender session, queued from an earlier connection.",
		st.duplicates);
	metric1(pt, "rpmafs_inbox_auth_failures_total", PROMTEXT_COUNTER,
		"listen_keys: senders refused at connect for the key they prove or not, or "
		"dropped for a bad tag or no proof of key in time.",
		st.auth_failures);
	metric1(pt, "rpmafs_inbox_withdrawn_total", PROMTEXT_COUNTER, "Messages taken back unread.",
		st.q.withdrawn);
	metric1(pt, "rpmafs_inbox_connections", PROMTEXT_GAUGE, "Connections open now.",
		st.connections);
	metric1(pt, "rpmafs_inbox_waiting", PROMTEXT_GAUGE,
		"Messages received and not read whole yet.", st.q.waiting);
	metric1(pt, "rpmafs_inbox_listening", PROMTEXT_GAUGE,
		"1 while the inbox listens, 0 once its endpoint failed or the mount ended.",
		!final && strcmp(st.state, "listening") == 0);
}

int mount_metrics_new(const char *path, uint64_t interval_ms, uint64_t now,
	struct spool *const *spools, unsigned nspools, struct inbox *ib,
	struct mount_metrics **mm_ptr)
{
	struct mount_metrics *mm = calloc(1, sizeof(*mm));

	if (!mm || promtext_new(&mm->text) ||
		promtext_file_new(path, interval_ms, now, &mm->file) ||
		!(mm->stats = calloc(nspools ? nspools : 1, sizeof(*mm->stats)))) {
		mount_metrics_delete(&mm);
		return -ENOMEM;
	}
	mm->spools = spools;
	mm->nspools = nspools;
	mm->inbox = ib;
	*mm_ptr = mm;
	return 0;
}

void mount_metrics_delete(struct mount_metrics **mm_ptr)
{
	struct mount_metrics *mm = *mm_ptr;

	if (!mm)
		return;
	promtext_file_delete(&mm->file);
	promtext_delete(&mm->text);
	free(mm->stats);
	free(mm);
	*mm_ptr = NULL;
}

void mount_metrics_write(struct mount_metrics *mm, bool final)
{
	char why[PATH_MAX + 256];

	promtext_reset(mm->text);
	for (unsigned i = 0; i < mm->nspools; i++)
		spool_stats_get(mm->spools[i], &mm->stats[i]);
	metrics_spools(mm->text, mm->stats, mm->spools, mm->nspools, final);
	if (mm->inbox)
		metrics_inbox(mm->text, mm->inbox, final);
	if (promtext_file_write(mm->file, mm->text, why, sizeof(why)) && why[0])
		log_warn("metrics: %s", why);
	else if (why[0])
		log_notice("metrics: %s", why);
}

uint64_t mount_metrics_tick(struct mount_metrics *mm, uint64_t now)
{
	if (!mm)
		return 0;
	if (promtext_file_due(mm->file, now))
		mount_metrics_write(mm, false);
	return promtext_file_next(mm->file);
}
