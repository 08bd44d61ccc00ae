// SPDX-License-Identifier: BSD-3-Clause
/*
 * spool.c -- a spool's life (new, stop, close, delete) and what the rest
 * of the mount reads of it: its config, its counters, its status' time
 * (see spool.h). Each takes sp->lock for a moment.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "spool_impl.h"
#include "link/link.h"
#include "runtime/log.h"
#include "runtime/loop.h"
#include "runtime/pool.h"

void spool_set_error_locked(struct spool *sp, const char *text)
{
	snprintf(sp->st.last_error, sizeof(sp->st.last_error), "%.*s",
		(int)sizeof(sp->st.last_error) - 1, text);
	sp->st.error_recorded = true;
}

/* invalidate the kernel's cached attributes if it has any (see spool_attr_cached) */
void spool_attrs_changed(struct spool *sp)
{
	if (atomic_exchange(&sp->attr_cached, false) && sp->env->se)
		fuse_lowlevel_notify_inval_inode(sp->env->se, sp->ino, -1, 0);
}

/*
 * A random non-zero session id for a spool of this mount (docs/design.md
 * §8.6): its messages' numbers mean something to a receiver across
 * connections only together with it. 0 (none) when the kernel has no
 * randomness to give, which leaves the spool as rpmafs was before sessions.
 */
uint64_t spool_session_new(void)
{
	uint64_t id = 0;

	for (int i = 0; i < 4 && id == 0; i++) {
		ssize_t n = getrandom(&id, sizeof(id), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(id))
			return 0;
	}
	return id;
}

int spool_new(const struct spool_env *env, fuse_ino_t ino, const struct rpmafs_peer_cfg *cfg,
	struct spool **sp_ptr)
{
	struct spool *sp = calloc(1, sizeof(*sp));
	int ret;

	if (!sp)
		return -ENOMEM;
	sp->cfg = cfg;
	sp->env = env;
	sp->ino = ino;
	pthread_mutex_init(&sp->lock, NULL);
	/* file messages are assembled in a pool slot: no FUSE request limit (frame.h) */
	sp->st.max_message =
		cfg->max_message < FUSE_ATOMIC_WRITE_MAX || cfg->framing == RPMAFS_FRAMING_FILE
			? cfg->max_message
			: FUSE_ATOMIC_WRITE_MAX;
	sp->next_seq = 1;
	confirm_init(&sp->cf);
	sp->st.last_wc_status = -1;
	snprintf(sp->st.last_error, sizeof(sp->st.last_error), "none");
	if (cfg->type == RPMAFS_PEER_NULL) {
		sp->up = true;
		*sp_ptr = sp;
		return 0;
	}
	struct link_cfg lc = {.peer = cfg,
		.devices = env->devices,
		.loop = env->loop,
		.window = LINK_WINDOW(pool_nslots(env->pool) + pool_nsmall(env->pool)),
		/* numbered messages only with receiver confirmation: a session means nothing else */
		.session = cfg->confirm != RPMAFS_CONFIRM_TRANSPORT ? spool_session_new() : 0,
		.ops = &spool_link_ops,
		.ctx = sp};
	ret = link_new(&lc, &sp->link);
	if (ret) {
		pthread_mutex_destroy(&sp->lock);
		free(sp);
		return ret;
	}
	*sp_ptr = sp;
	return 0;
}

void spool_delete(struct spool **sp_ptr)
{
	struct spool *sp = *sp_ptr;

	if (!sp)
		return;
	handles_free_unreleased(sp);
	link_delete(&sp->link);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
	*sp_ptr = NULL;
}

const struct rpmafs_peer_cfg *spool_cfg(const struct spool *sp)
{
	return sp->cfg;
}

uint32_t spool_max_message(struct spool *sp)
{
	uint32_t max;

	pthread_mutex_lock(&sp->lock);
	max = sp->st.max_message;
	pthread_mutex_unlock(&sp->lock);
	return max;
}

void spool_attr_cached(struct spool *sp)
{
	atomic_store(&sp->attr_cached, true);
}

struct timespec spool_status_rendered(struct spool *sp, uint64_t h)
{
	struct timespec changed;

	pthread_mutex_lock(&sp->lock);
	if (h != sp->status_hash) {
		sp->status_hash = h;
		clock_gettime(CLOCK_REALTIME, &sp->status_changed);
	}
	changed = sp->status_changed;
	pthread_mutex_unlock(&sp->lock);
	return changed;
}

/* every write is either posted or refused (docs/design.md §4.2, nothing dropped silently) */
void spool_refuse(struct spool *sp)
{
	pthread_mutex_lock(&sp->lock);
	sp->st.refused++;
	pthread_mutex_unlock(&sp->lock);
}

void spool_submit_empty(struct spool *sp, struct handle *fh)
{
	struct msg *msg;

	if (msg_new_empty(fh, &msg) == 0) {
		spool_submit(sp, msg);
		return;
	}
	log_err("%s: out of memory: 0-byte message not sent (counted refused)", sp->cfg->name);
	spool_refuse(sp);
}

void spool_count_copy(struct spool *sp)
{
	pthread_mutex_lock(&sp->lock);
	sp->st.payload_copies++;
	pthread_mutex_unlock(&sp->lock);
}

void spool_count_small_copy(struct spool *sp)
{
	pthread_mutex_lock(&sp->lock);
	sp->st.payload_copies++;
	sp->st.small_copies++;
	pthread_mutex_unlock(&sp->lock);
}

unsigned spool_small_slots(const struct spool *sp)
{
	return pool_nsmall(sp->env->pool);
}

unsigned spool_small_slots_free(const struct spool *sp)
{
	return pool_small_free_count(sp->env->pool);
}

unsigned spool_busy(struct spool *sp)
{
	unsigned n;

	pthread_mutex_lock(&sp->lock);
	n = sp->pending.count + sp->in_flight.count;
	pthread_mutex_unlock(&sp->lock);
	return n;
}

void spool_stats_get(struct spool *sp, struct spool_stats *st)
{
	pthread_mutex_lock(&sp->lock);
	*st = sp->st;
	/* the connection's state is the link's own, asked of it (null peer: always up) */
	st->state = sp->link ? link_status(sp->link) : "connected";
	st->session = sp->link ? link_session(sp->link) : 0;
	pthread_mutex_unlock(&sp->lock);
}

void spool_stop(struct spool *sp)
{
	if (sp->link)
		link_stop(sp->link);
}

void spool_close(struct spool *sp)
{
	struct replies rs = REPLIES_INIT(rs);
	struct msg *msg;

	pthread_mutex_lock(&sp->lock);
	while ((msg = spool_pending_pop(sp)))
		spool_refuse_locked(sp, msg, ESHUTDOWN, "unmounted", &rs);
	if (sp->link) {
		sp->up = false;
		link_close(sp->link);
		spool_flush_in_flight_locked(sp, &rs);
	}
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
}
