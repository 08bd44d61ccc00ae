// SPDX-License-Identifier: BSD-3-Clause
/*
 * handle.c -- an open file of a spool (see handle.h), the spool's list of
 * them, and the checks of what goes through one: a write, a close, an
 * fsync (declared in spool.h)
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "frame.h"
#include "handle.h"
#include "spool_impl.h"
#include "runtime/log.h"

/* ---- the spool's open files, for unmount ---- */

/* fh is open (counted in open_handles unless a status snapshot) */
static void openfiles_add(struct spool *sp, struct handle *fh)
{
	pthread_mutex_lock(&sp->lock);
	fh->open_prev = NULL;
	fh->open_next = sp->open_files;
	if (sp->open_files)
		sp->open_files->open_prev = fh;
	sp->open_files = fh;
	if (!fh->text)
		sp->st.open_handles++;
	pthread_mutex_unlock(&sp->lock);
}

static void openfiles_unlink_locked(struct spool *sp, struct handle *fh)
{
	if (fh->open_prev)
		fh->open_prev->open_next = fh->open_next;
	else
		sp->open_files = fh->open_next;
	if (fh->open_next)
		fh->open_next->open_prev = fh->open_prev;
	fh->open_prev = fh->open_next = NULL;
	if (!fh->text)
		sp->st.open_handles--;
}

/* ---- life ---- */

static struct handle *handle_alloc(struct spool *sp, int flags)
{
	struct handle *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	fh->sp = sp;
	fh->flags = flags;
	fh->refs = 1; /* the open file's */
	return fh;
}

int handle_new(struct spool *sp, int flags, struct pool *pool, struct frame_budget *budget,
	struct handle **fh_ptr)
{
	struct handle *fh = handle_alloc(sp, flags);

	if (!fh)
		return -ENOMEM;
	fh->sync = sp->cfg->mode == RPMAFS_MODE_SYNC || (flags & (O_SYNC | O_DSYNC)) != 0;
	/* `: > f` opens O_TRUNC (atomic O_TRUNC: the flag reaches us) */
	fh->empty_intent = (flags & O_TRUNC) != 0;
	if (sp->cfg->framing == RPMAFS_FRAMING_FILE && frame_new(pool, budget, &fh->frame)) {
		free(fh);
		return -ENOMEM;
	}
	openfiles_add(sp, fh);
	*fh_ptr = fh;
	return 0;
}

int handle_new_status(struct spool *sp, char *text, size_t len, struct handle **fh_ptr)
{
	struct handle *fh = text ? handle_alloc(sp, O_RDONLY) : NULL;

	if (!fh) {
		free(text);
		return -ENOMEM;
	}
	fh->text = text;
	fh->text_len = len;
	openfiles_add(sp, fh);
	*fh_ptr = fh;
	return 0;
}

void handle_put_locked(struct handle *fh)
{
	if (--fh->refs == 0) {
		frame_delete(&fh->frame);
		free(fh->text);
		free(fh);
	}
}

void handle_delete(struct handle **fh_ptr)
{
	struct handle *fh = *fh_ptr;
	struct spool *sp;

	if (!fh)
		return;
	sp = fh->sp;
	if (fh->frame && frame_pending(fh->frame))
		log_warn("%s: %u bytes written after the last close not sent", sp->cfg->name,
			frame_pending(fh->frame));
	frame_delete(&fh->frame);
	pthread_mutex_lock(&sp->lock);
	openfiles_unlink_locked(sp, fh);
	handle_put_locked(fh);
	pthread_mutex_unlock(&sp->lock);
	*fh_ptr = NULL;
}

void handles_free_unreleased(struct spool *sp)
{
	struct handle *fh;
	unsigned n = 0;

	pthread_mutex_lock(&sp->lock);
	while ((fh = sp->open_files)) {
		openfiles_unlink_locked(sp, fh);
		if (fh->refs != 1) {
			/* a message still holds it: spool_close should have finished it */
			log_err("%s: an open file still has %u messages at unmount", sp->cfg->name,
				fh->refs - 1);
			continue;
		}
		handle_put_locked(fh); /* the open file's reference, the last */
		n++;
	}
	pthread_mutex_unlock(&sp->lock);
	if (n)
		log_info("%s: %u files still open at unmount closed", sp->cfg->name, n);
}

/* answer the fsyncs waiting on fh once its messages are all finished */
static void fsync_check_locked(struct handle *fh, struct replies *rs)
{
	struct reply *w;

	if (fh->in_flight)
		return;
	while ((w = fh->fsyncs)) {
		fh->fsyncs = w->next;
		fh->sp->fsync_waiting--;
		w->err = fh->error;
		fh->error = 0;
		replies_add(rs, w);
	}
}

void handle_finished_locked(struct handle *fh, struct replies *rs)
{
	fh->in_flight--;
	fsync_check_locked(fh, rs);
	handle_put_locked(fh);
}

/* ---- the 0-byte message (docs/design.md §4.1) ---- */

void handle_mark(struct handle *fh, bool empty_intent, bool failed)
{
	if (!fh || fh->text)
		return;
	pthread_mutex_lock(&fh->sp->lock);
	fh->empty_intent |= empty_intent;
	fh->op_failed |= failed;
	pthread_mutex_unlock(&fh->sp->lock);
}

bool handle_sends_empty(struct handle *fh)
{
	bool send;

	if (fh->text)
		return false;
	pthread_mutex_lock(&fh->sp->lock);
	send = fh->empty_intent && !fh->written && !fh->op_failed;
	pthread_mutex_unlock(&fh->sp->lock);
	return send;
}

/* ---- the checks of a write, a close, an fsync ---- */

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

int spool_flush(struct spool *sp, struct handle *fh, fuse_req_t req, uint64_t owner)
{
	if (!spool_wrote(sp, fh, owner))
		return fuse_reply_err(req, 0);
	if (sp->cfg->close == RPMAFS_CLOSE_WAIT)
		return spool_fsync(sp, fh, req);
	return fuse_reply_err(req, spool_take_error(sp, fh, NULL));
}

int spool_fsync(struct spool *sp, struct handle *fh, fuse_req_t req)
{
	struct replies rs = REPLIES_INIT(rs);
	struct reply *w;
	int err;

	pthread_mutex_lock(&sp->lock);
	if (fh->in_flight == 0) {
		err = fh->error;
		fh->error = 0;
		pthread_mutex_unlock(&sp->lock);
		return fuse_reply_err(req, err);
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		pthread_mutex_unlock(&sp->lock);
		return fuse_reply_err(req, ENOMEM);
	}
	w->req = req;
	w->next = fh->fsyncs;
	fh->fsyncs = w;
	sp->fsync_waiting++; /* what is posted meanwhile asks for a prompt acknowledgement */
	/* unsignaled sends are confirmed by a fence: post it now, not later */
	spool_fence_locked(sp, &rs);
	if (sp->up && !sp->pending.head && confirm_request(&sp->cf, sp->link))
		spool_drop_locked(sp, "post failed: acknowledgement request");
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);
	if (sp->link)
		link_settle(sp->link); /* the fence or request just posted */
	return 0;
}
