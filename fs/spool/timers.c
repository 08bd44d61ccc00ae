// SPDX-License-Identifier: BSD-3-Clause
/*
 * timers.c -- a spool's deadlines (see spool_tick in spool.h): writes
 * that waited send_timeout_ms for a connection, sends the peer left
 * unanswered that long, messages it never acknowledged, the fence of quiet unsignaled sends
 * (docs/design.md §8.4, §8.5). The loop thread calls it when its timer
 * fires; it answers when it wants to be called next.
 */

#include <errno.h>
#include <stdio.h>

#include "confirm.h"
#include "spool_impl.h"
#include "link/link.h"
#include "runtime/clock.h"

static void soonest(uint64_t *next, uint64_t t)
{
	if (t && (!*next || t < *next))
		*next = t;
}

/*
 * The peer has said nothing for silence_ms (no completion, or no answer to
 * a request for an acknowledgement): the link is dropped, and what waits
 * behind has waited long enough.
 */
static void peer_silent_locked(
	struct spool *sp, const char *what, uint64_t silence_ms, struct replies *rs)
{
	struct msg *msg;
	char why[80];

	snprintf(why, sizeof(why), "%s within %llu ms", what, (unsigned long long)silence_ms);
	spool_drop_locked(sp, why);
	sp->gave_up = true;
	while ((msg = spool_pending_pop(sp)))
		spool_refuse_locked(sp, msg, ETIMEDOUT, why, rs);
}

uint64_t spool_tick(struct spool *sp, uint64_t now)
{
	struct replies rs = REPLIES_INIT(rs);
	uint64_t silence_ms = LINK_SILENCE_MS(sp->cfg->send_timeout_ms);
	uint64_t next = 0;
	struct msg *msg;
	bool look = false;

	pthread_mutex_lock(&sp->lock);
	/* writes that waited send_timeout_ms for a connection */
	while ((msg = sp->pending.head) && msg->deadline_ms && msg->deadline_ms <= now && !sp->up) {
		spool_pending_pop(sp);
		spool_refuse_unsent_locked(
			sp, msg, true, "not connected: send_timeout_ms passed", &rs);
		sp->gave_up = true;
	}
	if (sp->pending.head)
		soonest(&next, sp->pending.head->deadline_ms);

	if (sp->up && sp->link && (msg = sp->in_flight.head)) {
		uint64_t due = msg->posted_ms + silence_ms;

		if (due <= now)
			peer_silent_locked(sp, "no completion", silence_ms, &rs);
		else
			soonest(&next, due);
	}
	if (sp->up && sp->link) {
		uint64_t due;

		switch (confirm_watch(&sp->cf, sp->link, now, silence_ms, &due)) {
		case CONFIRM_SILENT:
			peer_silent_locked(sp, "no acknowledgement", silence_ms, &rs);
			break;
		case CONFIRM_POST_FAILED:
			spool_drop_locked(sp, "post failed: acknowledgement request");
			break;
		case CONFIRM_HEARD:
			soonest(&next, due);
			break;
		}
	}

	soonest(&next, spool_fence_due_locked(sp, now, &rs));
	if (sp->ack_look_ms && sp->ack_look_ms <= now) {
		uint64_t quiet = sp->last_post_ms + SPOOL_ACK_LOOK_MS;

		/* still posting: its posts' settles reap them; look once quiet */
		if (now_ms_coarse() < quiet)
			sp->ack_look_ms = quiet > now ? quiet : now + 1;
		else {
			sp->ack_look_ms = 0;
			look = true;
		}
	}
	soonest(&next, sp->ack_look_ms);
	pthread_mutex_unlock(&sp->lock);
	replies_send(&rs);

	if (look && sp->link) {
		/* reaps them, and arms the CQ for those still to come (awaits: quiet) */
		link_look(sp->link);
	}
	if (sp->link)
		soonest(&next, link_tick(sp->link, now));
	return next;
}
