/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics.h -- the mount's metrics file ([rpmafs] metrics, rpmafs.ini(5))
 *
 * The Prometheus text format for node_exporter's textfile collector,
 * replaced whole (common/promtext.h): one sample per peer of each spool's
 * counters, and the inbox's figures when the mount listens. Built and
 * written on the loop thread, from its tick (mount.c), and once more at
 * the end, after the loop stopped: a slow disk delays the loop's next
 * round, never a write(2) to a spool.
 */
#ifndef RPMAFS_METRICS_H
#define RPMAFS_METRICS_H

#include <stdbool.h>
#include <stdint.h>

struct inbox;
struct mount_metrics;
struct spool;

/*
 * mount_metrics_new -- metrics of nspools spools (and ib, NULL: no inbox)
 * written to path every interval_ms from now on; 0 or -ENOMEM
 */
int mount_metrics_new(const char *path, uint64_t interval_ms, uint64_t now,
	struct spool *const *spools, unsigned nspools, struct inbox *ib,
	struct mount_metrics **mm_ptr);

/* mount_metrics_delete -- free it (the file stays); NULLs the pointer */
void mount_metrics_delete(struct mount_metrics **mm_ptr);

/*
 * mount_metrics_tick -- write the file if it is due at now; returns when
 * the next write is (0: mm is NULL, no metrics)
 */
uint64_t mount_metrics_tick(struct mount_metrics *mm, uint64_t now);

/*
 * mount_metrics_write -- build the text and replace the file now (final:
 * the mount ended, no peer is connected); a failure is logged once per kind
 */
void mount_metrics_write(struct mount_metrics *mm, bool final);

#endif /* RPMAFS_METRICS_H */
