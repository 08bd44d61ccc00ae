// SPDX-License-Identifier: BSD-3-Clause
/* mount.c -- one mounted spool directory: set-up and teardown */

#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mount.h"
#include "report/metrics.h"
#include "sdnotify.h"
#include "fuse/draft.h"
#include "inbox/inbox.h"
#include "link/devices.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/loop.h"
#include "runtime/memlock.h"
#include "runtime/nofile.h"
#include "runtime/pool.h"
#include "runtime/workers.h"

/*
 * libfuse reads each request with one read(2) of its bufsize: 256 pages for
 * the largest write plus a page for the headers (libfuse 3.14). Every pool
 * buffer must hold that much.
 */
#define FUSE_READ_SIZE (256 * 4096 + 4096)
/*
 * The small slots (pool.h): a write of up to POOL_SMALL_SIZE bytes is
 * copied into one and holds 4 KiB, not a request buffer. 256 of them are 1
 * MiB: on Debian's 8 MiB RLIMIT_MEMLOCK an ordinary user's default mount
 * keeps (2 slots + 4 workers) x 1028 KiB and 256 small slots, so that 256
 * small messages and more are in flight at once (docs/design.md §4.5).
 */
#define SMALL_SLOTS 256u
/* the longest we wait at unmount for queued and in-flight messages */
#define DRAIN_CAP_MS 30000

/*
 * WATCHDOG=1 from the loop thread, with a summary for systemctl status: a
 * loop that is stuck misses it, and the service manager restarts us.
 * Returns when the next one is due (0: no watchdog).
 */
static uint64_t mount_watchdog(struct mount *m, uint64_t now)
{
	char status[PATH_MAX + 128], state[PATH_MAX + 160];
	unsigned long long sent = 0, failed = 0;
	unsigned up = 0;

	if (!sdnotify_watchdog_due(&m->watchdog, now))
		return sdnotify_watchdog_next(&m->watchdog);
	for (unsigned i = 0; i < m->tree.nspools; i++) {
		struct spool_stats st;

		spool_stats_get(m->tree.spools[i], &st);
		up += strcmp(st.state, "connected") == 0;
		sent += st.completed;
		failed += st.failed;
	}
	snprintf(status, sizeof(status),
		"mounted %s: %u of %u peers connected, %llu messages sent, %llu failed",
		m->mountpoint, up, m->tree.nspools, sent, failed);
	sdnotify_state(state, sizeof(state), "WATCHDOG=1", status);
	(void)sdnotify_send(state);
	return sdnotify_watchdog_next(&m->watchdog);
}

/* the loop's tick: every spool's timers, the watchdog and the metrics file */
static uint64_t mount_tick(void *arg, uint64_t now)
{
	struct mount *m = arg;
	uint64_t next = mount_watchdog(m, now), at = mount_metrics_tick(m->metrics, now);

	if (at && (!next || at < next))
		next = at;
	if (m->tree.inbox) {
		at = inbox_tick(m->tree.inbox, now);

		if (at && (!next || at < next))
			next = at;
	}
	for (unsigned i = 0; i < m->tree.nspools; i++) {
		at = spool_tick(m->tree.spools[i], now);

		if (at && (!next || at < next))
			next = at;
	}
	return next;
}

int mount_setup(struct mount *m, unsigned nworkers, bool allow_other)
{
	unsigned nbuf, npeers = (unsigned)m->cfg->npeers, rdma_peers = 0;
	struct memlock_plan plan;
	struct nofile_plan fds;
	char why[1024];
	int ret;

	m->tree.uid = getuid();
	m->tree.gid = getgid();
	m->tree.allow_other = allow_other;
	now_coarse(&m->tree.mounted_at); /* the same clock as the message times */
	m->nworkers = nworkers;

	/*
	 * slots buffers for messages, plus one for each worker to read into,
	 * and the small slots, within RLIMIT_MEMLOCK (docs/design.md §4.5)
	 */
	for (unsigned i = 0; i < npeers; i++)
		rdma_peers += m->cfg->peers[i].type != RPMAFS_PEER_NULL;
	if (memlock_plan(m->cfg->slots, m->cfg->slots_set, RPMAFS_CFG_DEFAULT_SLOTS,
		    RPMAFS_CFG_SLOTS_MIN, m->nworkers, FUSE_READ_SIZE, SMALL_SLOTS,
		    POOL_SMALL_SIZE + 64, rdma_peers,
		    m->cfg->inbox.enabled ? (unsigned long long)m->cfg->inbox.slots *
						    inbox_slot_size(&m->cfg->inbox)
					  : 0,
		    &plan, why, sizeof(why))) {
		fprintf(stderr, "rpmafs: %s\n", why);
		return 1;
	}
	if (plan.sized || plan.small < SMALL_SLOTS)
		log_notice(
			"slots = %u: the pool of (%u slots + %u workers) x %u KiB and %u small "
			"slots of %u KiB fits in RLIMIT_MEMLOCK (%llu KiB, %llu KiB kept for the "
			"RDMA provider); set 'slots' in [rpmafs] to choose",
			plan.slots, plan.slots, m->nworkers, FUSE_READ_SIZE / 1024, plan.small,
			POOL_SMALL_SIZE / 1024, plan.limit / 1024, plan.reserve / 1024);
	m->cfg->slots = plan.slots;
	/* two descriptors per connection: 1024 would stop at ~480 peers */
	ret = nofile_raise(rdma_peers, &fds, why, sizeof(why));
	if (ret > 0)
		log_warn("%s", why);
	else if (!ret && why[0])
		log_msg(fds.need > fds.before ? LOG_NOTICE : LOG_INFO, "%s", why);
	frame_budget_init(&m->tree.frames, m->cfg->slots);
	nbuf = m->cfg->slots + m->nworkers;
	ret = pool_new_small(nbuf, FUSE_READ_SIZE, plan.small, POOL_SMALL_SIZE, &m->tree.pool);
	if (ret) {
		fprintf(stderr, "rpmafs: cannot map %u request buffers and %u small slots: %s\n",
			nbuf, plan.small, strerror(-ret));
		return 1;
	}
	if (devices_new(m->tree.pool, &m->devices) || loop_new(mount_tick, m, &m->loop))
		goto nomem;
	/* inodes far above the spools' (and whatever else the root holds) */
	if (drafts_new(m->cfg->drafts, DRAFT_BUDGET, DRAFT_FIRST_INO, &m->tree.drafts))
		goto nomem;
	m->env = (struct spool_env){.pool = m->tree.pool,
		.loop = m->loop,
		.devices = m->devices,
		.nworkers = m->nworkers};
	m->tree.spools = calloc(npeers ? npeers : 1, sizeof(*m->tree.spools));
	if (!m->tree.spools)
		goto nomem;
	for (; m->tree.nspools < npeers; m->tree.nspools++) {
		unsigned i = m->tree.nspools;

		if (spool_new(&m->env, spool_ino(i), &m->cfg->peers[i], &m->tree.spools[i]))
			goto nomem;
	}
	return 0;
nomem:
	fprintf(stderr, "rpmafs: out of memory\n");
	return 1;
}

int mount_rdma(struct mount *m)
{
	char why[1024];

	if (m->cfg->inbox.enabled &&
		inbox_new(&m->cfg->inbox, m->loop, &m->tree.inbox, why, sizeof(why))) {
		fprintf(stderr, "rpmafs: %s: %s\n", m->cfg->path, why);
		inbox_delete(&m->tree.inbox);
		return 1;
	}
	return 0;
}

int mount_fuse(struct mount *m, struct fuse_args *args, const struct fuse_lowlevel_ops *ops)
{
	m->se = fuse_session_new(args, ops, sizeof(*ops), &m->tree);
	if (!m->se)
		return -1;
	if (fuse_session_mount(m->se, m->mountpoint) != 0) {
		fuse_session_destroy(m->se);
		m->se = NULL;
		return -1;
	}
	m->mounted = true;
	m->env.se = m->se;
	return 0;
}

int mount_start(struct mount *m, int done_fd)
{
	char state[PATH_MAX + 64];
	int ret;

	/* before the thread starts: the tick reads it (WatchdogSec= in the unit) */
	sdnotify_watchdog_init(&m->watchdog, now_ms());
	/* the first metrics at the loop's first tick */
	if (m->cfg->metrics[0] &&
		mount_metrics_new(m->cfg->metrics, m->cfg->metrics_interval_ms, now_ms(),
			m->tree.spools, m->tree.nspools, m->tree.inbox, &m->metrics)) {
		log_err("out of memory");
		return -1;
	}
	if (loop_start(m->loop, "rpmafs-engine")) {
		log_err("cannot start the completion thread");
		return -1;
	}
	m->loop_running = true;
	/* every link's first attempt is due at once */
	loop_arm(m->loop, 1);
	if (workers_start(m->tree.pool, m->se, m->nworkers, done_fd, &m->workers)) {
		log_err("cannot start the FUSE workers");
		return -1;
	}
	log_notice("mounted %s: %u peers, %u request buffers of %zu KiB, %u small slots of %zu "
		   "bytes",
		m->mountpoint, m->tree.nspools, pool_nslots(m->tree.pool),
		pool_slot_size(m->tree.pool) / 1024, pool_nsmall(m->tree.pool),
		pool_small_size(m->tree.pool));
	/*
	 * Ready: the directory is mounted and every spool takes writes (a
	 * write before its peer is up waits for it, up to send_timeout_ms).
	 */
	snprintf(state, sizeof(state), "READY=1\nSTATUS=mounted %s: %u peers", m->mountpoint,
		m->tree.nspools);
	ret = sdnotify_send(state);
	if (ret)
		log_warn("cannot tell the service manager we are ready (NOTIFY_SOCKET): %s",
			strerror(-ret));
	return 0;
}

/* wait for queued and in-flight messages, as long as send_timeout allows */
static void drain(struct mount *m)
{
	uint64_t cap = 0, deadline;

	for (unsigned i = 0; i < m->tree.nspools; i++)
		if (spool_cfg(m->tree.spools[i])->send_timeout_ms > cap)
			cap = spool_cfg(m->tree.spools[i])->send_timeout_ms;
	cap += 2000;
	if (cap > DRAIN_CAP_MS)
		cap = DRAIN_CAP_MS;
	deadline = now_ms() + cap;
	for (;;) {
		unsigned busy = 0;

		for (unsigned i = 0; i < m->tree.nspools; i++)
			busy += spool_busy(m->tree.spools[i]);
		if (!busy)
			return;
		if (now_ms() >= deadline) {
			log_warn("unmount: %u messages not settled after %llu ms: counted failed",
				busy, (unsigned long long)cap);
			return;
		}
		poll(NULL, 0, 10);
	}
}

void mount_stop(struct mount *m)
{
	if (m->loop_running)
		(void)sdnotify_send("STOPPING=1");
	workers_stop(&m->workers);
	if (m->mounted) {
		fuse_session_unmount(m->se);
		m->mounted = false;
	}
	if (m->loop_running) {
		drain(m);
		for (unsigned i = 0; i < m->tree.nspools; i++)
			spool_stop(m->tree.spools[i]);
		/* waits for connection attempts still running (their connect timeout) */
		loop_stop(m->loop);
		m->loop_running = false;
		/* the last figures, drained: the loop no longer touches the metrics */
		if (m->metrics)
			mount_metrics_write(m->metrics, true);
	}
	/* unread messages were never acknowledged; parked reads end (EOF) */
	inbox_delete(&m->tree.inbox);
	for (unsigned i = 0; i < m->tree.nspools; i++)
		spool_close(m->tree.spools[i]);
}

void mount_close(struct mount *m)
{
	if (!m->se)
		return;
	if (m->mounted)
		fuse_session_unmount(m->se);
	m->mounted = false;
	fuse_session_destroy(m->se);
	m->se = NULL;
	m->env.se = NULL;
}

void mount_teardown(struct mount *m)
{
	for (unsigned i = 0; i < m->tree.nspools; i++)
		spool_delete(&m->tree.spools[i]);
	free(m->tree.spools);
	m->tree.spools = NULL;
	m->tree.nspools = 0;
	drafts_delete(&m->tree.drafts);
	mount_metrics_delete(&m->metrics);
	inbox_delete(&m->tree.inbox);
	loop_delete(&m->loop);
	devices_delete(&m->devices);
	pool_delete(&m->tree.pool);
	rpmafs_cfg_delete(&m->cfg);
}
