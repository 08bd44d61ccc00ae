// SPDX-License-Identifier: BSD-3-Clause
/* rxq.c -- the receive paths: the shared receive queue, or each connection's own (see rxq.h) */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef RPMA_HAVE_EXT
#include <librpma_ext.h>
#endif

#include "auth.h"
#include "conn_priv.h"
#include "fd.h"
#include "log.h"
#include "qpmap.h"
#include "rxq.h"
#include "srq.h"

#define WC_BATCH RECV_BATCH_MAX /* a poll brings at most one batch */

struct recv_rxq {
	struct recv_server *srv;
	struct recv_srq *srq;	/* the shared queue; NULL: each connection has its own */
	struct recv_qpmap *qps; /* qp_num -> connection, for the shared queue's completions */
	bool srq_pending;	/* the shared CQ has completions left to handle */
	bool draining;		/* in drain_srq(): no nested drain */
	unsigned pending;	/* own queues with completions left to handle */
	uint64_t stray;		/* shared completions of no open connection (dropped) */
};

/*
 * slot_size -- a receive takes the largest message, and with --keys its
 * tag (docs/design.md §11): an authenticated SEND is payload + 16 bytes
 */
static uint32_t slot_size(const struct recv_server *srv)
{
	return srv->opts->max_message + (srv->opts->keys ? RPMAFS_AUTH_TAG_BYTES : 0);
}

int recv_rxq_new(struct recv_server *srv, struct recv_rxq **rxq_ptr)
{
	const struct recv_options *opts = srv->opts;
	struct recv_rxq *q = calloc(1, sizeof(*q));

	if (!q) {
		fprintf(stderr, "rpma-recv: out of memory\n");
		return -1;
	}
	q->srv = srv;
	if (opts->srq) {
		if (recv_srq_new(srv->peer, opts->slots, slot_size(srv), &q->srq)) {
			recv_rxq_delete(&q);
			return -1;
		}
		if (recv_qpmap_new(&q->qps)) {
			fprintf(stderr, "rpma-recv: out of memory\n");
			recv_rxq_delete(&q);
			return -1;
		}
		srv->locked = q->srq->buf_size;
	}
	*rxq_ptr = q;
	return 0;
}

void recv_rxq_delete(struct recv_rxq **rxq_ptr)
{
	struct recv_rxq *q = *rxq_ptr;

	if (!q)
		return;
	recv_srq_delete(&q->srq);
	recv_qpmap_delete(&q->qps);
	free(q);
	*rxq_ptr = NULL;
}

int recv_rxq_conn_cfg(const struct recv_rxq *q, struct rpma_conn_cfg *cfg)
{
	uint32_t slots = q->srv->opts->slots;
	int ret;

	if (q->srq) {
		/*
		 * A connection on the shared queue receives into it and sends
		 * nothing: its own queues are the smallest there are, so that a
		 * connection costs a queue pair and little else.
		 */
		ret = rpma_conn_cfg_set_srq(cfg, q->srq->srq);
		/* it sends only acknowledgements (confirm.h), a few at a time */
		if (!ret)
			ret = rpma_conn_cfg_set_sq_size(cfg, RECV_ACK_BUFS);
		if (!ret)
			ret = rpma_conn_cfg_set_cq_size(cfg, RECV_ACK_BUFS);
		if (!ret)
			ret = rpma_conn_cfg_set_rq_size(cfg, 1);
		return ret;
	}
	/* one CQ entry per slot and per acknowledgement in flight */
	ret = rpma_conn_cfg_set_sq_size(cfg, RECV_ACK_BUFS);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, slots + RECV_ACK_BUFS);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, slots);
	return ret;
}

int recv_rxq_fd(const struct recv_rxq *q)
{
	return q->srq ? q->srq->rcq_fd : -1;
}

uint32_t recv_rxq_credits(const struct recv_rxq *q)
{
	return q->srq ? 0 : q->srv->opts->slots;
}

uint32_t recv_rxq_ack_share(const struct recv_rxq *q, uint32_t reserved, bool *held)
{
	uint32_t slots = q->srv->opts->slots, share, room;

	*held = false;
	if (!q->srq)
		return slots < 2 ? 2 : slots;
	share = slots / 8;
	if (share > 64)
		share = 64;
	if (share < 2)
		share = 2;
	/*
	 * Only what is left is held: reserved may not pass slots (the room
	 * would wrap and every later sender be promised a whole share again).
	 * Past the shares a sender gets two, not held: one credit, so the
	 * queue is overdrawn by at most one receive per such sender.
	 */
	room = reserved < slots ? slots - reserved : 0;
	if (share > room)
		share = room;
	if (share < 2)
		return 2;
	*held = true;
	return share;
}

/* ---- a connection's own receive queue ---- */

/* own_buffers -- one registered region of slots x slot_size bytes */
static int own_buffers(struct recv_conn *c)
{
	struct recv_server *srv = c->srv;
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	int ret;

	c->rx.slot_size = slot_size(srv);
	c->rx.slots = srv->opts->slots;
	c->rx.buf_size = (size_t)c->rx.slot_size * c->rx.slots;
	if (posix_memalign((void **)&c->rx.buf, page > 0 ? (size_t)page : 4096, c->rx.buf_size)) {
		c->rx.buf = NULL;
		recv_log(RECV_LOG_ERROR,
			"connection %s: cannot allocate %zu bytes of receive buffers", c->peer,
			c->rx.buf_size);
		return -1;
	}
	ret = rpma_mr_reg(srv->peer, c->rx.buf, c->rx.buf_size, RPMA_MR_USAGE_RECV, &c->rx.mr);
	if (!ret) {
		srv->locked += c->rx.buf_size;
		return 0;
	}

	/* the usual reason, worth spelling out with the figures */
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		srv->locked + c->rx.buf_size > rl.rlim_cur) {
		recv_log(RECV_LOG_ERROR,
			"connection %s: cannot register %zu bytes of receive buffers (%u slots of "
			"%u bytes): %zu bytes are registered already and RLIMIT_MEMLOCK is %llu "
			"bytes; raise it (ulimit -l, LimitMEMLOCK= in a systemd unit) or lower "
			"--slots or --max-message",
			c->peer, c->rx.buf_size, c->rx.slots, c->rx.slot_size, srv->locked,
			(unsigned long long)rl.rlim_cur);
	} else {
		recv_log(RECV_LOG_ERROR,
			"connection %s: cannot register %zu bytes of receive buffers: %s", c->peer,
			c->rx.buf_size, rpma_err_2str(ret));
	}
	return -1;
}

int recv_rxq_prepare(
	struct recv_rxq *q, struct recv_conn *c, struct rpma_conn_req *req, char *why, size_t size)
{
	int ret;

	c->rx.cq_fd = -1;
	if (q->srq)
		return 0;
	if (own_buffers(c)) {
		snprintf(why, size, "no receive buffers (see above)");
		return -1;
	}
	for (uint32_t i = 0; i < c->rx.slots; i++) {
		ret = rpma_conn_req_recv(req, c->rx.mr, (size_t)i * c->rx.slot_size,
			c->rx.slot_size, (const void *)(uintptr_t)i);
		if (ret) {
			snprintf(why, size, "posting receive %u of %u failed: %s", i + 1,
				c->rx.slots, rpma_err_2str(ret));
			return -1;
		}
	}
	return 0;
}

int recv_rxq_attach(struct recv_rxq *q, struct recv_conn *c)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->rx.cq_watch};
	int ret;

	if (q->srq) {
		/* its receives complete on the shared CQ, and name it by its queue pair */
		if (recv_qpmap_put(q->qps, c->qp_num, c)) {
			recv_log(
				RECV_LOG_ERROR, "connection %lu %s: out of memory", c->id, c->peer);
			return -1;
		}
		c->rx.in_map = true;
		return 0;
	}
	ret = rpma_conn_get_cq(c->conn, &c->rx.cq);
	if (!ret)
		ret = rpma_cq_get_fd(c->rx.cq, &c->rx.cq_fd);
	if (ret) {
		c->rx.cq_fd = -1;
		recv_log(RECV_LOG_ERROR, "connection %lu %s: cannot get its file descriptors: %s",
			c->id, c->peer, rpma_err_2str(ret));
		return -1;
	}
	if (fd_set_nonblock(c->rx.cq_fd)) {
		c->rx.cq_fd = -1;
		recv_log(RECV_LOG_ERROR, "connection %lu %s: fcntl: %s", c->id, c->peer,
			strerror(errno));
		return -1;
	}
	c->rx.cq_watch = (struct recv_watch){RECV_WATCH_CONN_CQ, c};
	if (epoll_ctl(q->srv->epfd, EPOLL_CTL_ADD, c->rx.cq_fd, &ev)) {
		c->rx.cq_fd = -1;
		recv_log(RECV_LOG_ERROR, "connection %lu %s: epoll_ctl: %s", c->id, c->peer,
			strerror(errno));
		return -1;
	}
	return 0;
}

void recv_rxq_describe(const struct recv_rxq *q, const struct recv_conn *c, char *text, size_t size)
{
	if (q->srq)
		snprintf(text, size, "queue pair %" PRIu32 " on the shared receive queue",
			c->qp_num);
	else
		snprintf(
			text, size, "%u receives of %u bytes posted", c->rx.slots, c->rx.slot_size);
}

static void set_pending(struct recv_conn *c, bool pending)
{
	struct recv_rxq *q = c->srv->rxq;

	if (c->rx.pending == pending)
		return;
	c->rx.pending = pending;
	if (pending)
		q->pending++;
	else
		q->pending--;
}

static void drain_srq(struct recv_rxq *q, unsigned budget);

void recv_rxq_stop(struct recv_rxq *q, struct recv_conn *c)
{
	if (q->srq)
		drain_srq(q, 0);
	set_pending(c, false);
	if (c->rx.cq_fd >= 0)
		(void)epoll_ctl(q->srv->epfd, EPOLL_CTL_DEL, c->rx.cq_fd, NULL);
	c->rx.cq_fd = -1;
}

void recv_rxq_release(struct recv_rxq *q, struct recv_conn *c)
{
	if (c->rx.in_map)
		recv_qpmap_remove(q->qps, c->qp_num);
	c->rx.in_map = false;
	if (c->rx.mr) {
		int ret = rpma_mr_dereg(&c->rx.mr);

		if (ret)
			recv_log(RECV_LOG_ERROR, "connection %lu: deregistering its buffers: %s",
				c->id, rpma_err_2str(ret));
		q->srv->locked -= c->rx.buf_size;
	}
	free(c->rx.buf);
	c->rx.buf = NULL;
}

/* ---- completions ---- */

/*
 * failed_receive -- a receive completed with an error: nothing to do for a
 * flush (a disconnect; the CM event tells the story), else the connection
 * is closed
 */
static void failed_receive(struct recv_conn *c, const struct ibv_wc *wc)
{
	char why[96];

	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return;
	snprintf(why, sizeof(why), "receive failed: %s%s", ibv_wc_status_str(wc->status),
		wc->status == IBV_WC_LOC_LEN_ERR ? ", a message over --max-message?" : "");
	recv_log(RECV_LOG_ERROR, "connection %lu %s: %s", c->id, c->peer, why);
	recv_conn_close(c, why);
}

/* on_completion -- own queue: a completion of the connection's receives or sends */
static void on_completion(struct recv_conn *c, const struct ibv_wc *wc)
{
	uint64_t slot = wc->wr_id;
	const char *why;
	size_t offset;

	if ((slot & RECV_ACK_TAG) && c->confirm) {
		/* an acknowledgement went out (or failed to) */
		if (recv_confirm_sent(c->confirm, wc, &why) && wc->status != IBV_WC_WR_FLUSH_ERR) {
			recv_log(RECV_LOG_ERROR, "connection %lu %s: acknowledgement failed: %s",
				c->id, c->peer, why);
			recv_conn_close(c, "acknowledgement failed");
		}
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		failed_receive(c, wc);
		return;
	}
	if (wc->opcode != IBV_WC_RECV || slot >= c->rx.slots || wc->byte_len > c->rx.slot_size) {
		recv_log(RECV_LOG_ERROR,
			"connection %lu %s: unexpected completion (opcode %d, slot %" PRIu64
			", %" PRIu32 " bytes)",
			c->id, c->peer, (int)wc->opcode, slot, wc->byte_len);
		recv_conn_close(c, "unexpected completion");
		return;
	}

	offset = (size_t)slot * c->rx.slot_size;
	recv_deliver(c, wc, c->rx.buf + offset);
	/* the slot is free again once its message is written out */
	recv_deliver_repost_later(c->srv, c, (uint32_t)slot);
}

/*
 * on_srq_completion -- a completion of the shared receive queue: written
 * out for the connection its queue pair number names, and the slot, which
 * belongs to everyone, is posted again whatever became of the connection
 */
static void on_srq_completion(struct recv_rxq *q, const struct ibv_wc *wc)
{
	struct recv_srq *s = q->srq;
	struct recv_conn *c = recv_qpmap_get(q->qps, wc->qp_num);
	uint64_t slot = wc->wr_id;

	if (slot >= s->slots) {
		/* not one of ours: nothing to post again */
		recv_log(RECV_LOG_ERROR,
			"shared receive queue: unexpected completion (opcode %d, wr_id %" PRIu64
			", queue pair %" PRIu32 ")",
			(int)wc->opcode, slot, wc->qp_num);
		return;
	}
	s->posted--;
	if (wc->status != IBV_WC_SUCCESS) {
		if (c)
			failed_receive(c, wc);
	} else if (!c) {
		/* its connection is gone (it cannot be: recv_rxq_stop() drains first) */
		q->stray++;
		recv_log(RECV_LOG_DEBUG,
			"shared receive queue: a message of %" PRIu32
			" bytes for queue pair %" PRIu32 ", which is no open connection: dropped",
			wc->byte_len, wc->qp_num);
	} else if (wc->opcode != IBV_WC_RECV || wc->byte_len > s->slot_size) {
		recv_log(RECV_LOG_ERROR,
			"connection %lu %s: unexpected completion (opcode %d, %" PRIu32 " bytes)",
			c->id, c->peer, (int)wc->opcode, wc->byte_len);
		recv_conn_close(c, "unexpected completion");
	} else {
		recv_deliver(c, wc, recv_srq_slot(s, (uint32_t)slot));
	}

	recv_deliver_repost_later(q->srv, NULL, (uint32_t)slot);
}

/*
 * take_events -- take the completion channel's event, if one is there, and
 * re-arm the CQ, so that a completion arriving meanwhile raises a new one.
 * One rpma_cq_wait on the non-blocking channel, not a poll(2) before and
 * after it: the loop saw the channel readable (or, for a pending drain, a
 * read that finds nothing is EAGAIN, leaving the CQ armed as it was), and
 * a CQ raises one event per arming, so there is never a second to take.
 */
static int take_events(struct rpma_cq *cq, char *why, size_t size)
{
	int ret = rpma_cq_wait(cq);

	if (ret && ret != RPMA_E_NO_COMPLETION) {
		snprintf(why, size, "waiting for completions: %s", rpma_err_2str(ret));
		return -1;
	}
	return 0;
}

/*
 * drain_cq -- own queue: handle the connection's completions: all of them,
 * or at most about budget, leaving the rest pending for the next turn
 */
static void drain_cq(struct recv_conn *c, unsigned budget)
{
	struct ibv_wc wc[WC_BATCH];
	char why[96];
	unsigned done = 0;
	int n, ret;

	if (take_events(c->rx.cq, why, sizeof(why)))
		recv_log(RECV_LOG_ERROR, "connection %lu %s: %s", c->id, c->peer, why);

	while (budget == 0 || done < budget) {
		n = 0;
		ret = rpma_cq_get_wc(c->rx.cq, WC_BATCH, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION) {
			set_pending(c, false);
			return;
		}
		if (ret) {
			recv_log(RECV_LOG_ERROR, "connection %lu %s: polling completions: %s",
				c->id, c->peer, rpma_err_2str(ret));
			set_pending(c, false);
			recv_conn_close(c, "completion queue error");
			return;
		}
		for (int i = 0; i < n && c->state != CONN_FINISHED; i++)
			on_completion(c, &wc[i]);
		recv_deliver_flush(c->srv);
		if (c->state == CONN_FINISHED)
			return;
		done += (unsigned)n;
	}
	set_pending(c, true);
}

/*
 * drain_srq -- the same for the shared receive queue's CQ, in arrival
 * order, which keeps every connection's messages in its order. Never
 * nested: a nested drain would hand out completions polled after those
 * of the outer batch still in hand.
 */
static void drain_srq(struct recv_rxq *q, unsigned budget)
{
	struct recv_srq *s = q->srq;
	struct recv_server *srv = q->srv;
	struct ibv_wc wc[WC_BATCH];
	char why[96];
	unsigned done = 0;
	int n, ret;

	if (q->draining)
		return;
	q->draining = true;
	if (take_events(s->rcq, why, sizeof(why)))
		recv_log(RECV_LOG_ERROR, "shared receive queue: %s", why);

	q->srq_pending = true;
	while (budget == 0 || done < budget) {
		n = 0;
		ret = rpma_cq_get_wc(s->rcq, WC_BATCH, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION) {
			q->srq_pending = false;
			break;
		}
		if (ret) {
			/* nothing the loop could do about it: stop, write what is there */
			recv_log(RECV_LOG_ERROR, "shared receive queue: polling completions: %s",
				rpma_err_2str(ret));
			q->srq_pending = false;
			if (srv->stop == RECV_RUNNING)
				srv->stop = RECV_STOP_ENDPOINT;
			break;
		}
		for (int i = 0; i < n; i++)
			on_srq_completion(q, &wc[i]);
		recv_deliver_flush(srv);
		done += (unsigned)n;
	}
	q->draining = false;
}

void recv_rxq_drain(struct recv_rxq *q, struct recv_conn *c)
{
	if (q->srq)
		drain_srq(q, 0);
	else
		drain_cq(c, 0);
}

void recv_rxq_settle(struct recv_rxq *q, struct recv_conn *c)
{
	if (!q->srq)
		drain_cq(c, 0);
}

void recv_rxq_drain_all(struct recv_rxq *q)
{
	if (q->srq) {
		drain_srq(q, 0);
		return;
	}
	for (struct recv_conn *c = q->srv->conns; c; c = c->next)
		drain_cq(c, 0);
}

void recv_rxq_turn(struct recv_rxq *q, struct recv_conn *c)
{
	if (q->srq)
		drain_srq(q, q->srq->slots + WC_BATCH);
	else
		drain_cq(c, c->rx.slots + WC_BATCH);
}

void recv_rxq_run_pending(struct recv_rxq *q)
{
	struct recv_conn *c = q->srv->conns, *next;

	if (q->srq_pending)
		drain_srq(q, q->srq->slots + WC_BATCH);
	for (; c && q->pending; c = next) {
		next = c->next;
		if (c->rx.pending)
			drain_cq(c, c->rx.slots + WC_BATCH);
	}
}

bool recv_rxq_pending(const struct recv_rxq *q)
{
	return q->pending || q->srq_pending;
}

static int post_own_slots(struct recv_conn *c, const uint32_t *slots, unsigned n)
{
#ifdef RPMA_HAVE_EXT
	struct rpma_recv_desc d[RECV_BATCH_MAX];

	for (unsigned i = 0; i < n; i++)
		d[i] = (struct rpma_recv_desc){c->rx.mr, (size_t)slots[i] * c->rx.slot_size,
			c->rx.slot_size, (const void *)(uintptr_t)slots[i]};
	return rpma_recv_batch(c->conn, d, n, NULL);
#else
	for (unsigned i = 0; i < n; i++) {
		int ret = rpma_recv(c->conn, c->rx.mr, (size_t)slots[i] * c->rx.slot_size,
			c->rx.slot_size, (const void *)(uintptr_t)slots[i]);

		if (ret)
			return ret;
	}
	return 0;
#endif
}

void recv_rxq_post(struct recv_rxq *q, struct recv_conn *owner, const uint32_t *slots, unsigned n)
{
	uint32_t failed;
	int ret;

	if (!owner) {
		ret = recv_srq_post_slots(q->srq, slots, n, &failed);
		if (ret)
			recv_log(RECV_LOG_ERROR,
				"shared receive queue: posting receive %" PRIu32
				" again failed: %s; %u of %u receives left posted",
				failed, rpma_err_2str(ret), q->srq->posted, q->srq->slots);
		return;
	}
	/* unless it is closing */
	if (!recv_conn_talking(owner))
		return;
	ret = post_own_slots(owner, slots, n);
	if (ret) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: posting a receive failed: %s",
			owner->id, owner->peer, rpma_err_2str(ret));
		recv_conn_close(owner, "receive not posted");
	}
}

void recv_rxq_take_sends(struct recv_rxq *q, struct recv_conn *c)
{
	struct rpma_cq *cq;
	const char *why;

	if (!q->srq) {
		drain_cq(c, 0); /* its sends complete beside its receives */
		return;
	}
	if (rpma_conn_get_cq(c->conn, &cq) == 0 && recv_confirm_poll(c->confirm, cq, &why)) {
		recv_log(RECV_LOG_ERROR, "connection %lu %s: acknowledgement failed: %s", c->id,
			c->peer, why);
		recv_conn_close(c, "acknowledgement failed");
	}
}

struct rpma_cq *recv_rxq_send_cq(const struct recv_rxq *q, const struct recv_conn *c)
{
	struct rpma_cq *cq = NULL;

	/* with the shared queue, the connection's own CQ holds only our sends */
	if (q->srq && rpma_conn_get_cq(c->conn, &cq))
		cq = NULL;
	return cq;
}

uint32_t recv_rxq_unposted(const struct recv_rxq *q, uint32_t *slots)
{
	*slots = q->srv->opts->slots;
	return q->srq ? q->srq->slots - q->srq->posted : 0;
}

uint64_t recv_rxq_stray(const struct recv_rxq *q)
{
	return q->stray;
}
