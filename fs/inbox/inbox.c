// SPDX-License-Identifier: BSD-3-Clause
/* inbox.c -- the listener, the shared receive queue, its slots and connections */

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librpma.h>
#include <librpma_ext.h>

#include "ack.h"
#include "allow.h"
#include "fd.h"
#include "inbox.h"
#include "inbox_ack.h"
#include "pdata.h"
#include "peer_check.h"
#include "runtime/log.h"
#include "runtime/loop.h"
#include "sessions.h"
#include "wc.h"

struct inbox_conn {
	struct inbox_conn *next, *prev;
	struct inbox *ib;
	struct rpma_conn *conn;
	int event_fd;
	uint32_t qp_num;
	struct loop_watch watch;
	struct loop_task free_task;
	struct inbox_ack_conn ack; /* receiver confirmation (inbox_ack.h); off for plain senders */
	struct rpma_cq *cq;	   /* its send completions: acknowledgements only */
	int cq_fd;
	struct loop_watch cq_watch;
	bool dead; /* deleted; freed after the loop's batch (an event may be in it) */
	uint64_t session; /* non-zero: its numbers are told apart across connections (§13.4) */
	char peer[64];
};

/* a slot whose last byte was read, on its way back to the shared queue */
struct slot_task {
	struct loop_task task;
	struct inbox *ib;
	uint32_t slot;
};

struct inbox {
	struct loop *loop;
	void (*on_arrival)(void *arg);
	void *arg;
	struct recv_allow *allow;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	int ep_fd;
	struct loop_watch ep_watch;
	struct rpma_srq *srq;
	struct rpma_cq *rcq;
	int rcq_fd;
	struct loop_watch rcq_watch;
	struct rpma_conn_cfg *conn_cfg;
	struct rpma_mr_local *mr;
	uint8_t *buf;
	uint32_t slots, slot_size;
	struct slot_task *tasks;
	struct inbox_queue *q;
	struct inbox_ack *acks;
	struct rpmafs_sessions *sessions; /* what each sender session had queued (§13.4) */
	struct inbox_conn *conns;
	bool failed;
	bool closing; /* inbox_delete: nothing goes back to the queue */

	pthread_mutex_t lock; /* the figures below, read by inbox_stats_get() */
	uint32_t nconns;
	uint64_t accepted, rejected, bad, acks_sent, duplicates;
	char last_sender[64];
	char listen[300];
};

static void count(struct inbox *ib, uint64_t *what)
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

/* on the loop thread: the slot is free, its receive goes back to the queue */
static void post_slot(void *arg, uint32_t slot)
{
	struct inbox *ib = arg;
	int ret;

	if (ib->closing)
		return;
	ret = post(ib, slot);
	if (ret)
		log_err("inbox: posting receive %u again failed: %s", slot, rpma_err_2str(ret));
}

static void conn_free(struct inbox_conn *c);

/* send c's acknowledgement if one is due; a failure ends the connection */
static void ack(struct inbox_conn *c)
{
	const char *why;
	int ret;
	uint64_t before = c->ack.acks;

	if (c->dead || !c->ack.on)
		return;
	ret = inbox_ack_send(c->ib->acks, &c->ack, c->conn, &why);
	if (c->ack.acks != before)
		count(c->ib, &c->ib->acks_sent); /* the counters stats reads, under the lock */
	if (ret < 0) {
		log_notice("inbox: connection %s: acknowledgement failed: %s; closing it", c->peer,
			why);
		conn_free(c);
	}
}

/* on the loop thread: slot's message was read whole (inbox_ack.h) */
static void on_read(void *arg)
{
	struct slot_task *t = arg;
	struct inbox_ack_conn *ac = inbox_ack_released(t->ib->acks, t->slot, post_slot, t->ib);

	if (ac)
		ack((struct inbox_conn *)((char *)ac - offsetof(struct inbox_conn, ack)));
}

/* on the loop thread: a message of c's nobody has started is taken back */
static bool withdraw(void *arg, uint32_t slot)
{
	struct inbox *ib = arg;

	return !ib->closing && inbox_queue_withdraw(ib->q, slot);
}

/* a session's messages were marked when queued: they stay, a re-send is a duplicate */
static bool keep(void *arg, uint32_t slot)
{
	(void)arg;
	(void)slot;
	return false;
}

/* the mount's monotonic clock in ms: the table lives as long as the inbox */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The message in slot was read to its last byte (inbox_queue.h): on the
 * loop thread, it is acknowledged to a receiver-confirmed sender and its
 * receive posted again (on_read).
 */
static void on_release(void *arg, uint32_t slot, bool unread)
{
	struct inbox *ib = arg;

	if (unread)
		return; /* the inbox is going: never acknowledged, never re-posted */
	loop_run_soon(ib->loop, &ib->tasks[slot].task);
}

static void conn_free(struct inbox_conn *c)
{
	struct inbox *ib = c->ib;

	if (c->dead)
		return;
	c->dead = true;
	if (c->event_fd >= 0)
		loop_unwatch(ib->loop, c->event_fd);
	if (c->cq_fd >= 0)
		loop_unwatch(ib->loop, c->cq_fd);
	/*
	 * what it sent and nobody started reading was never acknowledged: it
	 * comes again. Without a session it is taken back, to be queued when
	 * it does; with one it stays queued, and comes again as a duplicate.
	 */
	inbox_ack_drop(ib->acks, &c->ack, c->session ? keep : withdraw, post_slot, ib);
	(void)rpma_conn_disconnect(c->conn);
	(void)rpma_conn_delete(&c->conn);
	if (c->prev)
		c->prev->next = c->next;
	else
		ib->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_lock(&ib->lock);
	ib->nconns--;
	pthread_mutex_unlock(&ib->lock);
	c->free_task = (struct loop_task){NULL, free, c};
	if (ib->closing) /* inbox_delete: the loop is stopped and runs no task again */
		free(c);
	else
		loop_after_batch(ib->loop, &c->free_task);
}

static struct inbox_conn *conn_by_qp(struct inbox *ib, uint32_t qp_num)
{
	for (struct inbox_conn *c = ib->conns; c; c = c->next)
		if (c->qp_num == qp_num)
			return c;
	return NULL;
}

/* c's send completions: its acknowledgements went out (or failed to) */
static void on_send_cq(void *arg)
{
	struct inbox_conn *c = arg;
	struct ibv_wc wc[INBOX_ACK_BUFS];
	const char *why;
	int n, ret;

	while (!c->dead && fd_readable(c->cq_fd))
		if (rpma_cq_wait(c->cq))
			break;
	while (!c->dead) {
		n = 0;
		ret = rpma_cq_get_wc(c->cq, INBOX_ACK_BUFS, wc, &n);
		if (ret)
			break;
		for (int i = 0; i < n && !c->dead; i++) {
			if (inbox_ack_sent(c->ib->acks, &c->ack, &wc[i], &why) &&
				wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				log_notice("inbox: connection %s: %s: %s; closing it", c->peer, why,
					ibv_wc_status_str(wc[i].status));
				conn_free(c);
			}
		}
	}
	if (!c->dead && c->ack.owed)
		ack(c);
}

static void on_conn_event(void *arg)
{
	struct inbox_conn *c = arg;
	enum rpma_conn_event ev;
	int ret;

	while (!c->dead && fd_readable(c->event_fd)) {
		ev = RPMA_CONN_UNDEFINED;
		ret = rpma_conn_next_event(c->conn, &ev);
		if (ret == RPMA_E_NO_EVENT)
			return;
		if (ret == RPMA_E_UNKNOWN)
			continue;
		if (!ret && ev == RPMA_CONN_ESTABLISHED) {
			log_info("inbox: connection %s established", c->peer);
			continue;
		}
		log_info("inbox: connection %s ended", c->peer);
		conn_free(c);
		return;
	}
}

static void reject(struct inbox *ib, struct rpma_conn_req **req, const char *peer, const char *why)
{
	(void)rpma_conn_req_delete(req);
	count(ib, &ib->rejected);
	log_notice("inbox: rejected connection from %s: %s", peer, why);
}

static void on_request(struct inbox *ib, struct rpma_conn_req **req)
{
	struct rpma_conn_private_data their = {NULL, 0}, ours;
	uint8_t reply[RPMAFS_PDATA_MAX_LEN];
	struct sockaddr_storage ss = {0};
	struct peer_request pr = {0};
	struct peer_facts facts;
	char peer[64] = "(address unknown)";
	struct inbox_conn *c;
	int ret, credits = 0;

	if (rpma_conn_req_get_peer_addr(*req, &ss) == 0) {
		pr.addr = &ss;
		if (!peer_describe(&ss, peer, sizeof(peer)))
			snprintf(peer, sizeof(peer), "(unknown)");
	}
	if (rpma_conn_req_get_private_data(*req, &their)) {
		their.ptr = NULL;
		their.len = 0;
	}
	pr.pdata = their.ptr;
	pr.pdata_len = their.len;
	pr.open = ib->nconns;
	pr.max_conns = INBOX_CONNS_MAX;
	switch (peer_check(ib->allow, &pr, &facts)) {
	case PEER_ACCEPT:
		break;
	case PEER_NOT_ALLOWED:
		reject(ib, req, peer, "address not allowed by [rpmafs] allow");
		return;
	case PEER_FOREIGN:
	case PEER_MALFORMED:
		reject(ib, req, peer, facts.why);
		return;
	case PEER_TOO_MANY:
		reject(ib, req, peer, "too many connections open");
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		reject(ib, req, peer, "out of memory");
		return;
	}
	c->ib = ib;
	c->event_fd = c->cq_fd = -1;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	if (facts.acked)
		credits = inbox_ack_offer(ib->acks, &c->ack);
	c->session = c->ack.on ? facts.session : 0;
	/*
	 * Plain senders: no credits, the shared queue promises no receive to
	 * any one of them. A receiver-confirmed sender: its share, less one
	 * kept for a REQUEST (inbox_ack_offer), and the flag in answer.
	 */
	ours.len = (uint8_t)rpmafs_pdata_encode(
		&(struct rpmafs_pdata){.max_message = ib->slot_size,
			.credits = credits > 0 ? (uint32_t)credits : 0,
			.flags = c->ack.on ? RPMAFS_PDATA_F_ACK : 0},
		reply);
	ours.ptr = reply;
	ret = rpma_conn_req_connect(req, &ours, &c->conn);
	if (ret) {
		log_notice("inbox: accepting %s failed: %s", peer, rpma_err_2str(ret));
		inbox_ack_drop(ib->acks, &c->ack, withdraw, post_slot, ib);
		free(c);
		count(ib, &ib->rejected);
		return;
	}
	c->next = ib->conns;
	if (ib->conns)
		ib->conns->prev = c;
	ib->conns = c;
	pthread_mutex_lock(&ib->lock);
	ib->nconns++;
	ib->accepted++;
	pthread_mutex_unlock(&ib->lock);
	c->watch = (struct loop_watch){on_conn_event, c};
	if (rpma_conn_get_event_fd(c->conn, &c->event_fd) ||
		rpma_conn_get_qp_num(c->conn, &c->qp_num) || fd_set_nonblock(c->event_fd) ||
		loop_watch(ib->loop, c->event_fd, &c->watch)) {
		c->event_fd = -1;
		log_err("inbox: connection %s: cannot watch it", peer);
		conn_free(c);
		return;
	}
	c->cq_watch = (struct loop_watch){on_send_cq, c};
	if (c->ack.on &&
		(rpma_conn_get_cq(c->conn, &c->cq) || rpma_cq_get_fd(c->cq, &c->cq_fd) ||
			fd_set_nonblock(c->cq_fd) || loop_watch(ib->loop, c->cq_fd, &c->cq_watch))) {
		c->cq_fd = -1;
		log_err("inbox: connection %s: cannot watch its completions", peer);
		conn_free(c);
		return;
	}
	log_info("inbox: accepting %s (%s)", peer,
		facts.kind != RPMAFS_PDATA_OK ? "no rpmafs private data"
		: c->session ? "rpmafs sender, a session, acknowledged at read"
		: c->ack.on  ? "rpmafs sender, acknowledged at read"
			     : "rpmafs sender");
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
		on_request(ib, &req);
	}
}

static void on_wc(struct inbox *ib, const struct ibv_wc *wc, bool *arrived)
{
	uint64_t slot = wc->wr_id;
	struct inbox_conn *c = conn_by_qp(ib, wc->qp_num);

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
			count(ib, &ib->bad);
			conn_free(c);
		}
		post_slot(ib, (uint32_t)slot);
		return;
	}
	if (c && c->ack.on) {
		const char *why = "";
		enum inbox_take take = inbox_ack_take(ib->acks, &c->ack, (uint32_t)slot, wc, &why);

		if (take == INBOX_TAKE_DUPLICATE) {
			log_info("inbox: connection %s: message %u again: a duplicate, dropped",
				c->peer, (unsigned)(ntohl(wc->imm_data) & RPMAFS_SEQ_MASK));
			count(ib, &ib->duplicates);
		} else if (take == INBOX_TAKE_BAD) {
			log_notice("inbox: connection %s: %s; closing it", c->peer, why);
			count(ib, &ib->bad);
		}
		if (take != INBOX_TAKE_RECORD) {
			/* nothing to read: the receive goes back, a duplicate or request is answered */
			post_slot(ib, (uint32_t)slot);
			if (take == INBOX_TAKE_BAD)
				conn_free(c);
			else
				ack(c);
			return;
		}
		if (c->session) {
			uint32_t n = inbox_ack_num(ib->acks, (uint32_t)slot);

			if (rpmafs_sessions_seen(ib->sessions, c->session, n, now_ms())) {
				/* queued from an earlier connection: taken as read, in order */
				log_info("inbox: connection %s: message %u of its session again: "
					 "a duplicate, dropped",
					c->peer, (unsigned)n);
				count(ib, &ib->duplicates);
				(void)inbox_ack_released(ib->acks, (uint32_t)slot, post_slot, ib);
				ack(c);
				return;
			}
			/* delivered once queued (§13.4): it is never queued again */
			rpmafs_sessions_mark(ib->sessions, c->session, n, now_ms());
		}
	} else {
		inbox_ack_plain(ib->acks, (uint32_t)slot);
	}
	pthread_mutex_lock(&ib->lock);
	snprintf(ib->last_sender, sizeof(ib->last_sender), "%s", c ? c->peer : "(gone)");
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

	while (fd_readable(ib->rcq_fd))
		if (rpma_cq_wait(ib->rcq))
			break;
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
	ib->loop = loop;
	ib->ep_fd = ib->rcq_fd = -1;
	ib->slots = cfg->slots;
	ib->slot_size = cfg->max_message;
	snprintf(ib->listen, sizeof(ib->listen), strchr(cfg->address, ':') ? "[%s]:%u" : "%s:%u",
		cfg->address, cfg->port);
	*ib_ptr = ib;
	ib->tasks = calloc(ib->slots, sizeof(*ib->tasks));
	if (!ib->tasks || recv_allow_new(&ib->allow) || rpmafs_sessions_new(NULL, &ib->sessions) ||
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
	for (uint32_t i = 0; i < ib->slots; i++)
		ib->tasks[i] = (struct slot_task){{NULL, on_read, &ib->tasks[i]}, ib, i};
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
		conn_free(ib->conns);
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
	rpmafs_sessions_delete(&ib->sessions);
	free(ib->buf);
	free(ib->tasks);
	pthread_mutex_destroy(&ib->lock);
	free(ib);
	*ib_ptr = NULL;
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
	snprintf(st->listen, sizeof(st->listen), "%s", ib->listen);
	snprintf(st->last_sender, sizeof(st->last_sender), "%s", ib->last_sender);
	st->state = ib->failed ? "failed" : "listening";
	pthread_mutex_unlock(&ib->lock);
}
