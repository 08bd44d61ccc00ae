// SPDX-License-Identifier: BSD-3-Clause
/*
 * linkreap.c -- the completions of a link's connection: reaped by the loop
 * thread when the CQ raises an event (link_on_cq), or by the thread that
 * posted (link_settle) or awaits a sync write (link_reap); the CQ armed
 * only while a completion is still awaited (docs/design.md §8.4)
 */

#include <pthread.h>

#include <librpma.h>
#include <librpma_ext.h>

#include "link.h"
#include "link_priv.h"
#include "linkack.h"
#include "linkauth.h"
#include "wc.h"

/*
 * reap -- one batch of c's completions to the user, oldest first; under
 * link->reap_lock, which orders the batches of the loop and of the workers
 * (link_reap) so that the user sees them in the CQ's order. The number of
 * completions reaped (acknowledgements and the proof included), 0 when the
 * CQ is empty, -1 when the connection was dropped.
 */
static int reap(struct link_conn *c, bool on_loop)
{
	struct link *link = c->link;
	struct ibv_wc wc[RPMAFS_WC_BATCH];
	char refused[160] = "";
	bool proof_failed = false;
	int n, got, ret;

	ret = rpma_cq_get_wc(c->cq, RPMAFS_WC_BATCH, wc, &n);
	if (ret == RPMA_E_NO_COMPLETION)
		return 0;
	if (ret) {
		link_lost(link, "cannot poll the completion queue", on_loop);
		return -1;
	}
	got = n;
	/* the proof's completion, on an error only, is no message's */
	if (c->auth)
		n = linkauth_take(wc, n, &proof_failed);
	/* acknowledgements go to on_ack there (linkack.h); the sends stay in wc[] */
	if (c->la)
		n = linkack_take(c->la, c->conn, wc, n, link->cfg.ops->on_ack, link->cfg.ctx,
			refused, sizeof(refused));
	if (n > 0 || !c->la)
		link_outstanding(
			link, link->cfg.ops->on_completions(link->cfg.ctx, wc, n), on_loop);
	if (refused[0] || proof_failed) {
		/* an ack that cannot be true: not to be trusted */
		link_lost(link, refused[0] ? refused : "the proof of key was not sent", on_loop);
		return -1;
	}
	return got;
}

/* reap to the end of what the CQ holds, or until the connection is dropped */
static void drain(struct link_conn *c, bool on_loop)
{
	int n;

	do
		n = reap(c, on_loop);
	while (n == RPMAFS_WC_BATCH && !c->dead);
}

/*
 * settle -- under link->reap_lock: reap what the CQ holds, then leave it
 * armed only while the user still awaits a completion (docs/design.md
 * §8.4, *armed on demand*). Every post is followed by a settle on the
 * thread that posted (link_settle; the loop's own posts by on_cq's and
 * link_tick's), so a completion that is not reaped at once always raises
 * an event; one that came inside the post (rxe runs the exchange in
 * ibv_post_send) is reaped by the poster and wakes nobody.
 */
static void settle(struct link_conn *c, bool on_loop)
{
	struct link *link = c->link;

	drain(c, on_loop);
	if (c->dead)
		return;
	/* posts after this are settled by their posters */
	__atomic_store_n(&link->posted, false, __ATOMIC_SEQ_CST);
	/* armed: its event comes, and the loop settles again then */
	if (c->armed)
		return;
	if (link->cfg.ops->awaits && !link->cfg.ops->awaits(link->cfg.ctx))
		return;
	if (rpma_cq_arm(c->cq)) {
		link_lost(link, "cannot arm the completion queue", on_loop);
		return;
	}
	c->armed = true;
	/* a completion that came before the arm raised no event */
	drain(c, on_loop);
}

void link_on_cq(void *arg)
{
	struct link_conn *c = arg;
	int ret;

	pthread_mutex_lock(&c->link->reap_lock);
	if (c->dead)
		goto out;
	ret = rpma_cq_take_event(c->cq);
	if (ret == 0)
		c->armed = false;
	else if (ret != RPMA_E_NO_COMPLETION) {
		link_lost(c->link, "completion channel failed", true);
		goto out;
	}
	settle(c, true);
out:
	pthread_mutex_unlock(&c->link->reap_lock);
}

/*
 * current_locked -- link->reap_lock held: the connection to reap, up (or
 * draining too), or NULL. It stays alive while reap_lock is held:
 * end_drain takes it to let go of c.
 */
static struct link_conn *current_locked(struct link *link, bool draining_too)
{
	struct link_conn *c = NULL;

	pthread_mutex_lock(&link->lock);
	if (link->state == LINK_UP || (draining_too && link->state == LINK_DRAINING))
		c = link->cur;
	pthread_mutex_unlock(&link->lock);
	return c && !c->dead ? c : NULL;
}

/* settle the connection up or draining, if anything was posted since the last settle */
void link_settle_on(struct link *link, bool on_loop)
{
	struct link_conn *c;

	if (!__atomic_load_n(&link->posted, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&link->reap_lock);
	c = current_locked(link, true);
	if (c)
		settle(c, on_loop);
	pthread_mutex_unlock(&link->reap_lock);
}

void link_reap_all(struct link_conn *c)
{
	pthread_mutex_lock(&c->link->reap_lock);
	if (!c->dead)
		drain(c, true);
	pthread_mutex_unlock(&c->link->reap_lock);
}

void link_settle(struct link *link)
{
	link_settle_on(link, false);
}

void link_look(struct link *link)
{
	__atomic_store_n(&link->posted, true, __ATOMIC_SEQ_CST);
	link_settle_on(link, true);
}

int link_reap(struct link *link)
{
	struct link_conn *c;
	int n = -1;

	pthread_mutex_lock(&link->reap_lock);
	c = current_locked(link, false);
	if (c)
		n = reap(c, false);
	pthread_mutex_unlock(&link->reap_lock);
	return n;
}
