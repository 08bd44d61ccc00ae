// SPDX-License-Identifier: BSD-3-Clause
/* openfiles.c -- the open files of a spool, freed at unmount if never released (see openfiles.h) */

#include <stdlib.h>

#include "frame.h"
#include "openfiles.h"
#include "spool.h"
#include "runtime/log.h"

void openfiles_add(struct spool *sp, struct handle *fh)
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

static void unlink_locked(struct spool *sp, struct handle *fh)
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

void openfiles_remove(struct spool *sp, struct handle *fh)
{
	pthread_mutex_lock(&sp->lock);
	unlink_locked(sp, fh);
	pthread_mutex_unlock(&sp->lock);
}

void openfiles_free(struct spool *sp)
{
	struct handle *fh;
	unsigned n = 0;

	pthread_mutex_lock(&sp->lock);
	while ((fh = sp->open_files)) {
		unlink_locked(sp, fh);
		if (fh->refs != 1) {
			/* a message still holds it: spool_close should have finished it */
			log_err("%s: an open file still has %u messages at unmount", sp->cfg->name,
				fh->refs - 1);
			continue;
		}
		frame_delete(&fh->frame);
		free(fh->text);
		free(fh);
		n++;
	}
	pthread_mutex_unlock(&sp->lock);
	if (n)
		log_info("%s: %u files still open at unmount closed", sp->cfg->name, n);
}
