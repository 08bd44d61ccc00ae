// SPDX-License-Identifier: BSD-3-Clause
/* inbox.c -- the listener, the shared receive queue and its slots (connections: inbox_conn.c) */

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librpma.h>
#include <librpma_ext.h>

#include "ack.h"
#include "allow.h"
#include "fd.h"
#include "inbox_priv.h"
#include "pdata.h"
#include "peer_check.h"
#include "received.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/loop.h"
#include "sessions.h"
#include "wc.h"

void inbox_count(struct inbox *ib, uint64_t *what)
{
	pthread_mutex_lock(&ib->lock);
	(*what)++;
	pthread_mutex_unlock(&ib->lock);
}

static int post(struct inbox *ib, uint32_t slot)
{
	return rpma_srq_recv(ib->srq, ib->mr, (size_t)slot * ib->slot_size, ib->slot_size,
		(const void *)(uintptr_t)slot);
}

void inbox_post_slot(void *arg, uint32_t slot)
{
	struct inbox *ib = arg;
	int ret;

	if (ib->closing)
		return;
	ret = post(ib, slot);
	if (ret)
		log_err("inbox: posting receive %u again failed: %s", slot, rpma_err_2str(ret));
}

/* the connection an acknowledgement state is part of */
static struct inbox_conn *conn_of(struct inbox_ack_conn *ac)
{
	return (struct inbox_conn *)((char *)ac - offsetof(struct inbox_conn, ack));
}

/*
 * The message in slot was read to its last byte (inbox_queue.h), on the
 * reader's thread (a FUSE worker, or the loop when it answered a parked
 * read): its receive goes back to the queue here, and what it moves on of
 * a receiver-confirmed sender's acknowledgement is settled (inbox_ack.h):
 * mostly held back, the loop woken only for one due now.
 */
static void on_release(void *arg, uint32_t slot, bool unread)
{
	struct inbox *ib = arg;
	struct inbox_ack_conn *ac;
	bool kick = false;

	if (unread)
		return; /* the inbox is going: never acknowledged, never re-posted */
	pthread_mutex_lock(&ib->ack_lock);
	/* the message, then the re-sends of it held until it was read (on_wc) */
	for (uint32_t s = slot; s != INBOX_ACK_NONE; s = inbox_ack_next_resend(ib->acks, slot)) {
		ac = inbox_ack_released(ib->acks, s, inbox_post_slot, ib);
		if (ac)
			kick |= inbox_conn_released_locked(conn_of(ac));
	}
	pthread_mutex_unlock(&ib->ack_lock);
	if (kick)
		loop_run_soon(ib->loop, &ib->due_task);
}

static void on_listener(void *arg)
{
	struct inbox *ib = arg;
	struct rpma_conn_req *req;
	int ret;

	while (ib->ep && fd_readable(ib->ep_fd)) {
		req = NULL;
		ret = rpma_ep_next_conn_req(ib->ep, ib->conn_cfg, &req);
		if (ret == RPMA_E_NO_EVENT)
			break;
		if (ret == RPMA_E_INVAL) {
			log_err("inbox: the listener on %s failed (its RDMA device removed?)",
				ib->listen);
			loop_unwatch(ib->loop, ib->ep_fd);
			(void)rpma_ep_shutdown(&ib->ep);
			ib->failed = true;
			break;
		}
		if (ret) {
			log_notice("inbox: a connection request failed: %s", rpma_err_2str(ret));
			continue;
		}
		inbox_conn_request(ib, &req);
	}
}

/*
 * open_sealed -- an authenticated connection's SEND checked (with encrypt,
 * decrypted) in its slot before anything else looks at it (inbox_auth.h).
 * true: a message, *opened its completion with the tag's bytes off; false:
 * nothing to queue (the proof; or a failure: c is dropped, and nothing
 * after its first bad SEND is queued), the slot is posted again.
 */
static bool open_sealed(
	struct inbox *ib, struct inbox_conn *c, const struct ibv_wc *wc, struct ibv_wc *opened)
{
	bool with_imm = (wc->wc_flags & IBV_WC_WITH_IMM) != 0;
	uint32_t slot = (uint32_t)wc->wr_id, len = wc->byte_len;
	char why[96];

	switch (rpmafs_auth_take(c->auth, &c->proven, with_imm, with_imm ? ntohl(wc->imm_data) : 0,
		ib->buf + (size_t)slot * ib->slot_size, &len, why, sizeof(why))) {
	case RPMAFS_AUTH_MESSAGE:
		*opened = *wc;
		opened->byte_len = len;
		return true;
	case RPMAFS_AUTH_PROOF:
		ib->unproven--;
		log_info("inbox: connection %s: proof of key taken", c->sender);
		inbox_post_slot(ib, slot);
		return false;
	case RPMAFS_AUTH_BAD:
		break;
	}
	log_notice("inbox: connection %s: %s: dropping the connection, nothing more of it is "
		   "queued",
		c->sender, why);
	inbox_count(ib, &ib->auth_failures);
	inbox_post_slot(ib, slot);
	inbox_conn_free(c);
	return false;
}

static void on_wc(struct inbox *ib, const struct ibv_wc *wc, bool *arrived)
{
	uint64_t slot = wc->wr_id;
	struct inbox_conn *c = inbox_conn_by_qp(ib, wc->qp_num);
	struct ibv_wc opened;

	if (slot >= ib->slots)
		return;
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
		wc->byte_len > ib->slot_size) {
		/* a flush is a disconnect; anything else (an oversize message) ends that sender */
		if (wc->status != IBV_WC_WR_FLUSH_ERR && c) {
			log_notice("inbox: connection %s: receive failed: %s%s; closing it",
				c->peer, ibv_wc_status_str(wc->status),
				wc->status == IBV_WC_LOC_LEN_ERR
					? " (a message over inbox_max_message?)"
					: "");
			inbox_count(ib, &ib->bad);
			inbox_conn_free(c);
		}
		inbox_post_slot(ib, (uint32_t)slot);
		return;
	}
	/* the provider wrote them: defined from here on, for valgrind too */
	RECEIVED(ib->buf + (size_t)slot * ib->slot_size, wc->byte_len);
	if (ib->auth) {
		/* with listen_keys nothing unchecked is queued: not from a connection gone */
		if (!c) {
			inbox_post_slot(ib, (uint32_t)slot);
			return;
		}
		if (!open_sealed(ib, c, wc, &opened))
			return;
		wc = &opened;
	}
	if (c && c->ack.on) {
		const char *why = "";
		enum inbox_take take;
		uint32_t n;

		pthread_mutex_lock(&ib->ack_lock);
		take = inbox_ack_take(ib->acks, &c->ack, (uint32_t)slot, wc, &why);
		n = take == INBOX_TAKE_RECORD ? inbox_ack_num(ib->acks, (uint32_t)slot) : 0;
		pthread_mutex_unlock(&ib->ack_lock);

		if (take == INBOX_TAKE_DUPLICATE) {
			log_info("inbox: connection %s: message %u again: a duplicate, dropped",
				c->peer, (unsigned)(ntohl(wc->imm_data) & RPMAFS_SEQ_MASK));
			inbox_count(ib, &ib->duplicates);
		} else if (take == INBOX_TAKE_BAD) {
			log_notice("inbox: connection %s: %s; closing it", c->peer, why);
			inbox_count(ib, &ib->bad);
		}
		if (take != INBOX_TAKE_RECORD) {
			/* nothing to read: the receive goes back, a duplicate or request is answered */
			inbox_post_slot(ib, (uint32_t)slot);
			if (take == INBOX_TAKE_BAD)
				inbox_conn_free(c);
			else
				inbox_conn_ack(c);
			return;
		}
		if (c->session) {
			if (rpmafs_sessions_seen(ib->sessions, c->session, n, now_ms())) {
				/*
				 * queued from an earlier connection: never queued
				 * again, and acknowledged no sooner than the original
				 * is read (until then the inbox holds it unread)
				 */
				log_info("inbox: connection %s: message %u of its session again: "
					 "a duplicate, dropped",
					c->peer, (unsigned)n);
				inbox_count(ib, &ib->duplicates);
				pthread_mutex_lock(&ib->ack_lock);
				if (!inbox_ack_hold_resend(ib->acks, (uint32_t)slot, c->session))
					/* its original was read: taken as read, in order */
					(void)inbox_ack_released(
						ib->acks, (uint32_t)slot, inbox_post_slot, ib);
				pthread_mutex_unlock(&ib->ack_lock);
				inbox_conn_ack(c);
				return;
			}
			/* delivered once queued (§13.4): it is never queued again */
			rpmafs_sessions_mark(ib->sessions, c->session, n, now_ms());
			pthread_mutex_lock(&ib->ack_lock);
			inbox_ack_session(ib->acks, (uint32_t)slot, c->session);
			pthread_mutex_unlock(&ib->ack_lock);
		}
	} else {
		pthread_mutex_lock(&ib->ack_lock);
		inbox_ack_plain(ib->acks, (uint32_t)slot);
		pthread_mutex_unlock(&ib->ack_lock);
	}
	pthread_mutex_lock(&ib->lock);
	snprintf(ib->last_sender, sizeof(ib->last_sender), "%s", c ? c->sender : "(gone)");
	pthread_mutex_unlock(&ib->lock);
	if (inbox_queue_push(ib->q, (uint32_t)slot, ib->buf + slot * ib->slot_size, wc->byte_len))
		log_err("inbox: slot %u arrived twice", (unsigned)slot);
	*arrived = true;
}

static void on_receives(void *arg)
{
	struct inbox *ib = arg;
	struct ibv_wc wc[RPMAFS_WC_BATCH];
	void (*fn)(void *);
	void *fn_arg;
	bool arrived = false;
	int n, ret;

	/*
	 * The loop saw the channel readable: one event, taken and the CQ
	 * re-armed. One call, not a drain: a completion after the re-arm
	 * raises a new event, which the loop reports again, where a drain
	 * asked the fd (a poll(2)) once more for every event.
	 */
	(void)rpma_cq_wait(ib->rcq);
	for (;;) {
		n = 0;
		ret = rpma_cq_get_wc(ib->rcq, RPMAFS_WC_BATCH, wc, &n);
		if (ret)
			break;
		for (int i = 0; i < n; i++)
			on_wc(ib, &wc[i], &arrived);
	}
	if (ret != RPMA_E_NO_COMPLETION)
		log_err("inbox: polling the receive queue: %s", rpma_err_2str(ret));
	pthread_mutex_lock(&ib->lock);
	fn = ib->on_arrival;
	fn_arg = ib->arg;
	pthread_mutex_unlock(&ib->lock);
	if (arrived && fn)
		fn(fn_arg);
}

static int setup_rdma(struct inbox *ib, const struct rpmafs_inbox_cfg *cfg, char *why, size_t n)
{
	struct rpma_srq_cfg *scfg = NULL;
	struct ibv_context *dev;
	char port[8];
	int ret;

	ret = rpma_utils_get_ibv_context(cfg->address, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	if (ret) {
		snprintf(why, n, "listen = %s: no RDMA device has this address: %s", cfg->address,
			rpma_err_2str(ret));
		return -1;
	}
	ret = rpma_peer_new(dev, &ib->peer);
	if (!ret)
		ret = rpma_mr_reg(ib->peer, ib->buf, (size_t)ib->slots * ib->slot_size,
			RPMA_MR_USAGE_RECV, &ib->mr);
	if (ret) {
		snprintf(why, n, "inbox: cannot register %u x %u bytes of receive buffers: %s",
			ib->slots, ib->slot_size, rpma_err_2str(ret));
		return -1;
	}
	ret = inbox_ack_new(ib->peer, ib->slots, INBOX_CONNS_MAX, &ib->acks);
	if (ret) {
		snprintf(why, n, "inbox: cannot register the acknowledgement buffers: %s",
			ret < 0 ? strerror(-ret) : rpma_err_2str(ret));
		return -1;
	}
	ret = rpma_srq_cfg_new(&scfg);
	if (!ret)
		ret = rpma_srq_cfg_set_rq_size(scfg, ib->slots);
	if (!ret)
		ret = rpma_srq_cfg_set_rcq_size(scfg, ib->slots);
	if (!ret)
		ret = rpma_srq_new(ib->peer, scfg, &ib->srq);
	(void)rpma_srq_cfg_delete(&scfg);
	if (!ret)
		ret = rpma_srq_get_rcq(ib->srq, &ib->rcq);
	if (!ret && !ib->rcq)
		ret = RPMA_E_UNKNOWN;
	if (!ret)
		ret = rpma_cq_get_fd(ib->rcq, &ib->rcq_fd);
	/* a connection receives into the shared queue and sends only acknowledgements */
	if (!ret)
		ret = rpma_conn_cfg_new(&ib->conn_cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_srq(ib->conn_cfg, ib->srq);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(ib->conn_cfg, INBOX_ACK_BUFS);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(ib->conn_cfg, INBOX_ACK_BUFS);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(ib->conn_cfg, 1);
	for (uint32_t i = 0; !ret && i < ib->slots; i++)
		ret = post(ib, i);
	if (ret) {
		snprintf(why, n, "inbox: cannot make the shared receive queue of %u receives: %s",
			ib->slots, rpma_err_2str(ret));
		return -1;
	}
	snprintf(port, sizeof(port), "%u", cfg->port);
	ret = rpma_ep_listen(ib->peer, cfg->address, port, &ib->ep);
	if (!ret)
		ret = rpma_ep_get_fd(ib->ep, &ib->ep_fd);
	if (ret) {
		snprintf(why, n, "inbox: cannot listen on %s: %s", ib->listen, rpma_err_2str(ret));
		return -1;
	}
	if (fd_set_nonblock(ib->ep_fd) || fd_set_nonblock(ib->rcq_fd)) {
		snprintf(why, n, "inbox: fcntl: %s", strerror(errno));
		return -1;
	}
	ib->ep_watch = (struct loop_watch){on_listener, ib};
	ib->rcq_watch = (struct loop_watch){on_receives, ib};
	if (loop_watch(ib->loop, ib->ep_fd, &ib->ep_watch) ||
		loop_watch(ib->loop, ib->rcq_fd, &ib->rcq_watch)) {
		snprintf(why, n, "inbox: cannot watch the listener");
		return -1;
	}
	return 0;
}

int inbox_new(const struct rpmafs_inbox_cfg *cfg, struct loop *loop, struct inbox **ib_ptr,
	char *why, size_t whylen)
{
	struct inbox *ib = calloc(1, sizeof(*ib));
	long page = sysconf(_SC_PAGESIZE);
	const char *bad;

	if (!ib) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&ib->lock, NULL);
	pthread_mutex_init(&ib->ack_lock, NULL);
	ib->due_task = (struct loop_task){NULL, inbox_conn_ack_due, ib};
	ib->loop = loop;
	ib->ep_fd = ib->rcq_fd = -1;
	ib->slots = cfg->slots;
	ib->slot_size = inbox_slot_size(cfg);
	snprintf(ib->listen, sizeof(ib->listen), strchr(cfg->address, ':') ? "[%s]:%u" : "%s:%u",
		cfg->address, cfg->port);
	*ib_ptr = ib;
	if (recv_allow_new(&ib->allow) || rpmafs_sessions_new(NULL, &ib->sessions) ||
		posix_memalign((void **)&ib->buf, page > 0 ? (size_t)page : 4096,
			(size_t)ib->slots * ib->slot_size) ||
		inbox_queue_new(ib->slots,
			cfg->format == RPMAFS_INBOX_LEN	  ? RPMAFS_RECORD_LEN
			: cfg->format == RPMAFS_INBOX_RAW ? RPMAFS_RECORD_RAW
							  : RPMAFS_RECORD_LINES,
			on_release, ib, &ib->q)) {
		snprintf(why, whylen, "inbox: out of memory");
		return -1;
	}
	if (cfg->keys && inbox_auth_new(cfg->keys, cfg->keys_dir,
				 cfg->protect == RPMAFS_PROTECT_ENCRYPT, &ib->auth)) {
		snprintf(why, whylen, "inbox: out of memory");
		return -1;
	}
	for (size_t i = 0; i < cfg->nallow; i++) {
		if (recv_allow_add(ib->allow, cfg->allow[i], &bad)) {
			snprintf(why, whylen, "allow = %s: %s", cfg->allow[i], bad);
			return -1;
		}
	}
	return setup_rdma(ib, cfg, why, whylen);
}

void inbox_delete(struct inbox **ib_ptr)
{
	struct inbox *ib = *ib_ptr;

	if (!ib)
		return;
	ib->closing = true;
	while (ib->conns)
		inbox_conn_free(ib->conns);
	if (ib->ep) {
		loop_unwatch(ib->loop, ib->ep_fd);
		(void)rpma_ep_shutdown(&ib->ep);
	}
	if (ib->rcq_fd >= 0 && ib->srq)
		loop_unwatch(ib->loop, ib->rcq_fd);
	/* the queue wakes its waiters before the buffers go */
	inbox_queue_delete(&ib->q);
	if (ib->conn_cfg)
		(void)rpma_conn_cfg_delete(&ib->conn_cfg);
	if (ib->srq)
		(void)rpma_srq_delete(&ib->srq);
	if (ib->mr)
		(void)rpma_mr_dereg(&ib->mr);
	inbox_ack_delete(&ib->acks);
	if (ib->peer)
		(void)rpma_peer_delete(&ib->peer);
	recv_allow_delete(&ib->allow);
	inbox_auth_delete(&ib->auth);
	rpmafs_sessions_delete(&ib->sessions);
	free(ib->buf);
	pthread_mutex_destroy(&ib->ack_lock);
	pthread_mutex_destroy(&ib->lock);
	free(ib);
	*ib_ptr = NULL;
}

uint32_t inbox_slot_size(const struct rpmafs_inbox_cfg *cfg)
{
	return cfg->max_message + (cfg->keys ? RPMAFS_AUTH_TAG_BYTES : 0);
}

void inbox_set_arrival(struct inbox *ib, void (*on_arrival)(void *), void *arg)
{
	pthread_mutex_lock(&ib->lock);
	ib->on_arrival = on_arrival;
	ib->arg = arg;
	pthread_mutex_unlock(&ib->lock);
}

struct inbox_queue *inbox_queue(struct inbox *ib)
{
	return ib->q;
}

void inbox_stats_get(struct inbox *ib, struct inbox_stats *st)
{
	memset(st, 0, sizeof(*st));
	inbox_queue_counts(ib->q, &st->q);
	pthread_mutex_lock(&ib->lock);
	st->connections = ib->nconns;
	st->accepted = ib->accepted;
	st->rejected = ib->rejected;
	st->failed = ib->bad;
	st->acks = ib->acks_sent;
	st->duplicates = ib->duplicates;
	st->auth_failures = ib->auth_failures;
	snprintf(st->listen, sizeof(st->listen), "%s", ib->listen);
	snprintf(st->last_sender, sizeof(st->last_sender), "%s", ib->last_sender);
	st->state = ib->failed ? "failed" : "listening";
	pthread_mutex_unlock(&ib->lock);
}
