// SPDX-License-Identifier: BSD-3-Clause
/*
 * spoolstat.c -- what a spool's users ask of it outside the data path
 * (declared in spool.h): the checks before a write, the counters and their
 * snapshot, the pending error. Each takes sp->lock for a moment.
 */

#include "spool.h"
#include "link/link.h"

int spool_write_check(struct spool *sp, struct handle *fh, size_t size, bool nonblock)
{
	int err;

	pthread_mutex_lock(&sp->lock);
	fh->written = true;
	err = fh->error;
	fh->error = 0;
	if (!err && size > sp->st.max_message)
		err = EMSGSIZE;
	if (!err && nonblock && !sp->up)
		err = EAGAIN;
	pthread_mutex_unlock(&sp->lock);
	return err;
}

void spool_note_writer(struct spool *sp, struct handle *fh, uint64_t owner)
{
	pthread_mutex_lock(&sp->lock);
	owners_add(&fh->writers, owner);
	pthread_mutex_unlock(&sp->lock);
}

bool spool_wrote(struct spool *sp, struct handle *fh, uint64_t owner)
{
	bool writer;

	pthread_mutex_lock(&sp->lock);
	writer = owners_has(&fh->writers, owner);
	pthread_mutex_unlock(&sp->lock);
	return writer;
}

int spool_flush(struct spool *sp, struct handle *fh, fuse_req_t req, uint64_t owner)
{
	if (!spool_wrote(sp, fh, owner))
		return fuse_reply_err(req, 0);
	if (sp->cfg->close == RPMAFS_CLOSE_WAIT)
		return spool_fsync(sp, fh, req);
	return fuse_reply_err(req, spool_take_error(sp, fh, NULL));
}

/* every write is either posted or refused (docs/design.md §4.2, nothing dropped silently) */
void spool_refuse(struct spool *sp)
{
	pthread_mutex_lock(&sp->lock);
	sp->st.refused++;
	pthread_mutex_unlock(&sp->lock);
}

void spool_count_copy(struct spool *sp)
{
	pthread_mutex_lock(&sp->lock);
	sp->st.payload_copies++;
	pthread_mutex_unlock(&sp->lock);
}

int spool_take_error(struct spool *sp, struct handle *fh, bool *written)
{
	int err;

	pthread_mutex_lock(&sp->lock);
	if (written)
		*written = fh->written;
	err = fh->error;
	fh->error = 0;
	pthread_mutex_unlock(&sp->lock);
	return err;
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
	pthread_mutex_unlock(&sp->lock);
}

void spool_stop(struct spool *sp)
{
	if (sp->link)
		link_stop(sp->link);
}
