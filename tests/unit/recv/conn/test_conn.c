// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_conn.c -- tools/rpma-recv/conn.c on the fake provider: at an orderly
 * stop (--count reached, a signal) a connection of an acknowledging sender
 * gets the acknowledgement of everything written out, and is disconnected
 * only once that send completed (a send still queued at the disconnect is
 * flushed, and its sender re-sends what it never saw acknowledged), or
 * once LAST_ACK_MAX_MS passed without it (a dead or hostile peer). With
 * the shared receive queue and with --no-srq. And the state table: a
 * transition it does not list is refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "ack.h"
#include "auth.h"
#include "confirm.h"
#include "conn.h"
#include "conn_priv.h"
#include "log.h"
#include "pdata.h"
#include "sessions.h"

/*
 * conn.c, confirm.c and srq.c take their registered buffers from
 * posix_memalign(), and output.c its name from strdup(), which
 * alloc_fail.c does not count, and give them back with free(), which it
 * does: here they come from the counted malloc, so that the teardown's
 * balance of blocks holds (the fake provider does not care about their
 * alignment).
 */
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size);
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size)
{
	(void)alignment;
	*ptr = malloc(size);
	return *ptr ? 0 : ENOMEM;
}

char *__wrap_strdup(const char *s);
char *__wrap_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	return d ? memcpy(d, s, n) : NULL;
}

/* the same for common/key.c's key names and its ring's message (--keys) */
char *__wrap_strndup(const char *s, size_t max);
char *__wrap_strndup(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *d = malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

int __wrap_asprintf(char **out, const char *fmt, ...);
int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(*out = malloc((size_t)n + 1)))
		return -1;
	va_start(ap, fmt);
	(void)vsnprintf(*out, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return n;
}

#define SLOTS 8
#define MAX_MESSAGE 64

struct fx {
	struct recv_options opts;
	struct recv_server srv;
	struct rpma_ep *ep;
	struct recv_watch srq_watch;
	char out_path[64];
	struct ibv_qp *qp;
	struct ibv_cq *cq; /* the connection's own: its sends (and --no-srq, its receives) */
};

static void fx_start(struct fx *f, bool srq, uint64_t count)
{
	uint8_t pdata[RPMAFS_PDATA_MAX_LEN];
	size_t pdata_len;
	struct rpma_conn_req *req;
	struct recv_server *srv = &f->srv;
	int fd;

	memset(f, 0, sizeof(*f));
	recv_log_init(RECV_QUIET);
	f->opts.max_message = MAX_MESSAGE;
	f->opts.slots = SLOTS;
	f->opts.srq = srq;
	f->opts.max_conns = 4;
	f->opts.count = count;
	assert_int_equal(recv_allow_new(&f->opts.allow), 0); /* empty: everyone */
	srv->opts = &f->opts;
	srv->peer = fx_peer();
	srv->epfd = epoll_create1(0);
	assert_true(srv->epfd >= 0);
	snprintf(f->out_path, sizeof(f->out_path), "/tmp/test-recv-conn.%d", (int)getpid());
	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, f->out_path, &srv->out), 0);
	assert_int_equal(recv_rxq_new(srv, &srv->rxq), 0);
	assert_int_equal(rpma_conn_cfg_new(&srv->conn_cfg), 0);
	assert_int_equal(recv_rxq_conn_cfg(srv->rxq, srv->conn_cfg), 0);
	assert_true((recv_rxq_fd(srv->rxq) >= 0) == srq);
	f->srq_watch = (struct recv_watch){RECV_WATCH_SRQ_CQ, NULL};
	f->ep = fx_ep(srv->peer);
	assert_int_equal(rpma_ep_get_fd(f->ep, &fd), 0);

	/* an rpmafs sender that offers receiver confirmation */
	pdata_len = rpmafs_pdata_encode(
		&(struct rpmafs_pdata){
			.max_message = MAX_MESSAGE, .credits = SLOTS, .flags = RPMAFS_PDATA_F_ACK},
		pdata);
	req = fx_req_passive(f->ep, srv->conn_cfg, pdata, pdata_len);
	recv_conn_request(srv, &req);
	assert_null(req);
	assert_int_equal(srv->open, 1);
	assert_int_equal(fake_live(FAKE_QP), 1);
	for (uint32_t n = 0x100; n < 0x100 + 1000 && !f->qp; n++)
		f->qp = fake_qp_by_num(n);
	assert_non_null(f->qp);
	f->cq = fake_qp_attr(f->qp).send_cq;
}

static void fx_stop(struct fx *f)
{
	struct recv_server *srv = &f->srv;

	recv_conn_drop_all(srv, "the test ends");
	recv_conn_reap(srv);
	assert_int_equal(rpma_ep_shutdown(&f->ep), 0);
	assert_int_equal(rpma_conn_cfg_delete(&srv->conn_cfg), 0);
	recv_rxq_delete(&srv->rxq);
	assert_null(srv->rxq);
	assert_int_equal(recv_output_close(&srv->out), 0);
	unlink(f->out_path);
	close(srv->epfd);
	assert_int_equal(rpma_peer_delete(&srv->peer), 0);
	recv_allow_delete(&f->opts.allow);
}

/* pump -- one turn of the loop's epoll (main.c): hand each event to conn.c */
static void pump(struct fx *f, int timeout)
{
	struct epoll_event evs[8];
	int n = epoll_wait(f->srv.epfd, evs, 8, timeout);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++)
		recv_conn_handle(&f->srv, evs[i].data.ptr);
	if (f->opts.srq)
		recv_conn_handle(&f->srv, &f->srq_watch);
}

/* arrive -- message number num (the sender waits for it) comes in */
static void arrive(struct fx *f, uint32_t num, uint32_t len)
{
	uint32_t imm = num | RPMAFS_IMM_PROMPT;

	if (f->opts.srq) {
		assert_true(fake_srq_deliver(f->qp, len, true, htonl(imm)));
		return;
	}
	struct ibv_wc wc = fx_wc(num % SLOTS, IBV_WC_RECV, IBV_WC_SUCCESS);

	wc.byte_len = len;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(imm);
	wc.qp_num = f->qp->qp_num;
	fake_cq_push_wc(f->cq, &wc);
}

/* the acknowledgement posted as send i: what it says */
static struct rpmafs_ack sent_ack(struct fx *f, unsigned i)
{
	struct fake_send_wr wr = fake_send_get(f->qp, i);
	struct rpmafs_ack ack;

	assert_int_equal(wr.opcode, IBV_WR_SEND);
	assert_int_equal(
		rpmafs_ack_parse((const void *)(uintptr_t)wr.sge.addr, wr.sge.length, &ack, NULL),
		0);
	return ack;
}

/* complete -- the peer took send i: its completion comes */
static void complete(struct fx *f, unsigned i)
{
	struct ibv_wc wc = fx_wc(fake_send_get(f->qp, i).wr_id, IBV_WC_SEND, IBV_WC_SUCCESS);

	wc.qp_num = f->qp->qp_num;
	fake_cq_push_wc(f->cq, &wc);
}

/*
 * --count reached: the last message is written, its acknowledgement goes
 * out, and the disconnect waits for its completion
 */
static void count_acks_last_then_disconnects(bool srq)
{
	struct fx f;

	fx_start(&f, srq, 3);
	for (uint32_t n = 1; n <= 3; n++) {
		arrive(&f, n, 5);
		pump(&f, 0);
		if (f.srv.stop != RECV_RUNNING)
			break; /* main.c's next turn begins the stop before any ack */
		(void)recv_conn_acks(&f.srv);
		assert_int_equal(fake_send_count(f.qp), n);
		complete(&f, n - 1);
	}
	assert_int_equal(f.srv.messages, 3);
	assert_int_equal(f.srv.stop, RECV_STOP_COUNT);
	assert_int_equal(fake_send_count(f.qp), 2);

	/* begin_stop (main.c): --count drains nothing */
	recv_conn_shutdown_all(&f.srv, false);
	assert_int_equal(fake_send_count(f.qp), 3);
	assert_int_equal(sent_ack(&f, 2).acked, 3);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 0);

	/* the loop looks again soon, and waits */
	assert_true(recv_conn_settle(&f.srv) > 0);
	pump(&f, 0);
	assert_true(recv_conn_settle(&f.srv) > 0);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 0);

	/* the peer takes it: now the goodbye */
	complete(&f, 2);
	pump(&f, 0);
	(void)recv_conn_settle(&f.srv);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 1);
	fx_stop(&f);
}

static void count_srq(void **state)
{
	(void)state;
	count_acks_last_then_disconnects(true);
}

static void count_no_srq(void **state)
{
	(void)state;
	count_acks_last_then_disconnects(false);
}

/* a signal: what arrived is written out and acknowledged before the goodbye */
static void signal_drains_acks_then_disconnects(void **state)
{
	struct fx f;

	(void)state;
	fx_start(&f, false, 0);
	arrive(&f, 1, 7);
	f.srv.stop = RECV_STOP_SIGNAL; /* before the loop took it in */
	recv_conn_shutdown_all(&f.srv, true);
	assert_int_equal(f.srv.messages, 1);
	assert_int_equal(fake_send_count(f.qp), 1);
	assert_int_equal(sent_ack(&f, 0).acked, 1);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 0);

	/* a message after the stop is not written (nor acknowledged: sent again) */
	arrive(&f, 2, 7);
	pump(&f, 0);
	assert_true(recv_conn_settle(&f.srv) > 0);
	assert_int_equal(f.srv.messages, 1);
	assert_int_equal(fake_send_count(f.qp), 1);

	complete(&f, 0);
	pump(&f, 0);
	(void)recv_conn_settle(&f.srv);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 1);
	fx_stop(&f);
}

/*
 * a peer that never takes the last acknowledgement does not hold the stop
 * for ever: the connection is closed after LAST_ACK_MAX_MS (waited for as
 * the loop does, on the timeout conn.c asks for)
 */
static void dead_peer_is_closed_in_time(void **state)
{
	struct fx f;
	int64_t start;
	int wait;

	(void)state;
	fx_start(&f, true, 1);
	arrive(&f, 1, 3);
	pump(&f, 0);
	assert_int_equal(f.srv.stop, RECV_STOP_COUNT);
	recv_conn_shutdown_all(&f.srv, false);
	assert_int_equal(fake_send_count(f.qp), 1);
	start = recv_now_ms();
	while (fake_calls(FAKE_RDMA_DISCONNECT) == 0) {
		wait = recv_conn_settle(&f.srv);
		if (fake_calls(FAKE_RDMA_DISCONNECT))
			break;
		assert_true(wait > 0);
		assert_true(recv_now_ms() - start < 10000); /* the safety bound */
		pump(&f, wait);
	}
	assert_true(recv_now_ms() - start >= 900);
	fx_stop(&f);
}

/* output gone: nothing more is acknowledged, the goodbye is at once */
static void output_gone_disconnects_at_once(void **state)
{
	struct fx f;

	(void)state;
	fx_start(&f, true, 0);
	arrive(&f, 1, 3);
	pump(&f, 0);
	f.srv.stop = RECV_STOP_OUTPUT_GONE;
	recv_conn_shutdown_all(&f.srv, false);
	assert_int_equal(fake_send_count(f.qp), 0);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 1);
	fx_stop(&f);
}

/*
 * the state table: what it lists is allowed, and nothing else; no state
 * goes back to an earlier one, none to itself, none out of FINISHED
 */
static void transition_table(void **state)
{
	static const enum conn_state legal[][2] = {
		{CONN_ACCEPTING, CONN_RECEIVING},
		{CONN_ACCEPTING, CONN_SENDING_LAST_ACK},
		{CONN_RECEIVING, CONN_SENDING_LAST_ACK},
		{CONN_ACCEPTING, CONN_DISCONNECTING},
		{CONN_RECEIVING, CONN_DISCONNECTING},
		{CONN_SENDING_LAST_ACK, CONN_DISCONNECTING},
		{CONN_DISCONNECTING, CONN_SETTLING},
		{CONN_SETTLING, CONN_FINISHED},
		{CONN_ACCEPTING, CONN_FINISHED},
		{CONN_RECEIVING, CONN_FINISHED},
		{CONN_SENDING_LAST_ACK, CONN_FINISHED},
		{CONN_DISCONNECTING, CONN_FINISHED},
	};
	unsigned allowed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
		assert_true(recv_conn_may(legal[i][0], legal[i][1]));
	for (int from = 0; from < CONN_STATES; from++)
		for (int to = 0; to < CONN_STATES; to++)
			allowed += recv_conn_may((enum conn_state)from, (enum conn_state)to);
	assert_int_equal(allowed, sizeof(legal) / sizeof(legal[0]));

	assert_false(recv_conn_may(CONN_FINISHED, CONN_RECEIVING));
	assert_false(recv_conn_may(CONN_SETTLING, CONN_RECEIVING));
	assert_false(recv_conn_may(CONN_RECEIVING, CONN_ACCEPTING));
	assert_false(recv_conn_may(CONN_ACCEPTING, CONN_SETTLING));
	assert_false(recv_conn_may(CONN_RECEIVING, CONN_RECEIVING));
	for (int s = 0; s < CONN_STATES; s++)
		assert_non_null(recv_conn_state_name((enum conn_state)s));
}

/*
 * a live connection asked for a transition the table does not have stays
 * as it was; one the table has is taken
 */
static void illegal_transition_is_refused(void **state)
{
	struct recv_conn *c;
	struct fx f;

	(void)state;
	fx_start(&f, true, 0);
	c = f.srv.conns;
	assert_non_null(c);
	assert_int_equal(c->state, CONN_ACCEPTING);
	assert_true(recv_conn_talking(c));

	assert_false(recv_conn_to(c, CONN_SETTLING)); /* not without its disconnect */
	assert_int_equal(c->state, CONN_ACCEPTING);
	assert_int_equal(f.srv.settling, 0);

	assert_true(recv_conn_to(c, CONN_RECEIVING));
	assert_int_equal(c->state, CONN_RECEIVING);
	assert_false(recv_conn_to(c, CONN_ACCEPTING));
	assert_int_equal(c->state, CONN_RECEIVING);

	/* a close takes it on by the table: disconnecting, no longer talking */
	recv_conn_close(c, "the test");
	assert_int_equal(c->state, CONN_DISCONNECTING);
	assert_false(recv_conn_talking(c));
	assert_false(recv_conn_to(c, CONN_RECEIVING));
	assert_int_equal(c->state, CONN_DISCONNECTING);
	fx_stop(&f);
}

/*
 * the shares of the shared queue (SLOTS 8: 2 each) are held only while
 * they fit: past that a sender gets 2, not held, whatever is reserved
 */
static void ack_shares_stay_within_the_queue(void **state)
{
	struct fx f;
	bool held;

	(void)state;
	fx_start(&f, true, 0);
	assert_int_equal(recv_rxq_ack_share(f.srv.rxq, 0, &held), 2);
	assert_true(held);
	assert_int_equal(recv_rxq_ack_share(f.srv.rxq, 6, &held), 2);
	assert_true(held);
	assert_int_equal(recv_rxq_ack_share(f.srv.rxq, 7, &held), 2);
	assert_false(held);
	assert_int_equal(recv_rxq_ack_share(f.srv.rxq, 8, &held), 2);
	assert_false(held);
	/* reserved past the slots must not wrap into a whole share held */
	assert_int_equal(recv_rxq_ack_share(f.srv.rxq, 10, &held), 2);
	assert_false(held);
	fx_stop(&f);
}

static void push(struct recv_server *srv, struct recv_conn *c, uint32_t num, const char *msg)
{
	struct recv_batch *b = &srv->batch;

	b->rec[b->n] = (struct recv_record){msg, strlen(msg)};
	b->conn[b->n] = c;
	b->num[b->n++] = num;
}

/*
 * Exactly once across connections: a message and its re-send in one batch
 * (two connections of one session, the old one not torn down yet) are
 * written once and acknowledged on both; a re-send in a later batch is
 * known by the table; another session's same numbers are its own.
 */
static void batch_resend_is_written_once(void **unused)
{
	struct recv_options opts = {0};
	struct recv_server srv = {0};
	struct recv_confirm ca = {0}, cb = {0}, cc = {0};
	struct recv_conn a = {0}, b = {0}, c = {0};
	char path[] = "/tmp/test-recv-dup.XXXXXX";
	static const char want[] = "\3\0\0\0one\3\0\0\0two\5\0\0\0three\3\0\0\0one";
	char got[64];
	int fd = mkstemp(path);

	(void)unused;
	assert_true(fd >= 0);
	close(fd);
	srv.opts = &opts;
	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, path, &srv.out), 0);
	assert_int_equal(rpmafs_sessions_new(NULL, &srv.sessions), 0);
	a = (struct recv_conn){.srv = &srv, .id = 1, .confirm = &ca, .session = 0x5e55};
	b = (struct recv_conn){.srv = &srv, .id = 2, .confirm = &cb, .session = 0x5e55};
	c = (struct recv_conn){.srv = &srv, .id = 3, .confirm = &cc, .session = 0xe7e};

	push(&srv, &a, 1, "one");
	push(&srv, &a, 2, "two");
	push(&srv, &b, 1, "one"); /* the re-sends, on the new connection */
	push(&srv, &b, 2, "two");
	push(&srv, &b, 3, "three");
	recv_deliver_flush(&srv);
	assert_int_equal(srv.messages, 3);
	assert_int_equal(srv.session_duplicates, 2);
	assert_int_equal(ca.written, 2);
	assert_int_equal(cb.written, 3); /* acknowledged as if written, in order */
	assert_int_equal(cb.unacked, 3);

	push(&srv, &b, 3, "three"); /* a later batch: the table knows it */
	push(&srv, &c, 1, "one");   /* another session's number 1 */
	recv_deliver_flush(&srv);
	assert_int_equal(srv.messages, 4);
	assert_int_equal(srv.session_duplicates, 3);
	assert_int_equal(cc.written, 1);

	assert_int_equal(recv_output_close(&srv.out), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, got, sizeof(got)), sizeof(want) - 1);
	assert_memory_equal(got, want, sizeof(want) - 1);
	close(fd);
	unlink(path);
	rpmafs_sessions_delete(&srv.sessions);
}

/* ---- --keys (docs/design.md §11): the receiver's side of authenticated peers ---- */

struct afx {
	struct fx f;
	char dir[64];
	char key_path[96];
	struct rpmafs_key *key;	    /* the sender's copy of the key */
	struct rpmafs_auth *sender; /* the sender's connection state */
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN];
	unsigned slot; /* --no-srq: the next of the connection's own receives */
};

static void afx_keys(struct afx *a)
{
	uint8_t k[RPMAFS_AUTH_KEY_BYTES];
	char err[256];
	int fd;

	snprintf(a->dir, sizeof(a->dir), "/tmp/test-recv-keys.XXXXXX");
	assert_non_null(mkdtemp(a->dir));
	snprintf(a->key_path, sizeof(a->key_path), "%s/alpha.key", a->dir);
	for (size_t i = 0; i < sizeof(k); i++)
		k[i] = (uint8_t)(i * 7 + 1);
	fd = open(a->key_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, k, sizeof(k)), sizeof(k));
	close(fd);
	assert_int_equal(rpmafs_key_load(a->key_path, NULL, &a->key, err, sizeof(err)), 0);
}

/* afx_request -- the request pdata comes in; true when it was accepted */
static bool afx_request(struct afx *a, const uint8_t *pdata, size_t len)
{
	struct rpma_conn_req *req = fx_req_passive(a->f.ep, a->f.srv.conn_cfg, pdata, (uint8_t)len);
	unsigned open = a->f.srv.open;

	recv_conn_request(&a->f.srv, &req);
	assert_null(req);
	return a->f.srv.open == open + 1;
}

/* an rpma-recv --keys with one connection of a sender with the key, F_ACK, mac */
static void afx_start(struct afx *a, bool srq)
{
	struct recv_server *srv;
	struct fake_conn_param acc;
	const char *why = NULL;
	char err[256];
	int fd;

	memset(a, 0, sizeof(*a));
	afx_keys(a);
	/* as fx_start, with --keys, without its connection */
	struct fx *f = &a->f;

	recv_log_init(RECV_QUIET);
	f->opts.max_message = MAX_MESSAGE;
	f->opts.slots = SLOTS;
	f->opts.srq = srq;
	f->opts.max_conns = 4;
	f->opts.keys = a->dir;
	assert_int_equal(recv_allow_new(&f->opts.allow), 0);
	srv = &f->srv;
	srv->opts = &f->opts;
	assert_int_equal(rpmafs_keyring_load(a->dir, &srv->keys, err, sizeof(err)), 0);
	assert_int_equal(rpmafs_nonces_new(4096, &srv->nonces), 0);
	srv->peer = fx_peer();
	srv->epfd = epoll_create1(0);
	snprintf(f->out_path, sizeof(f->out_path), "/tmp/test-recv-conn.%d", (int)getpid());
	assert_int_equal(recv_output_open(RECV_FORMAT_LEN, f->out_path, &srv->out), 0);
	assert_int_equal(recv_rxq_new(srv, &srv->rxq), 0);
	assert_int_equal(rpma_conn_cfg_new(&srv->conn_cfg), 0);
	assert_int_equal(recv_rxq_conn_cfg(srv->rxq, srv->conn_cfg), 0);
	f->srq_watch = (struct recv_watch){RECV_WATCH_SRQ_CQ, NULL};
	f->ep = fx_ep(srv->peer);
	assert_int_equal(rpma_ep_get_fd(f->ep, &fd), 0);

	assert_int_equal(rpmafs_auth_request_encode(a->key,
				 &(struct rpmafs_pdata){
					 .max_message = MAX_MESSAGE, .flags = RPMAFS_PDATA_F_ACK},
				 false, a->req),
		RPMAFS_AUTH_REQUEST_LEN);
	assert_true(afx_request(a, a->req, sizeof(a->req)));
	acc = fake_last_accept();
	assert_int_equal(acc.param.private_data_len, RPMAFS_AUTH_ACCEPT_LEN);
	assert_int_equal(rpmafs_auth_accept_check(a->key, a->req, acc.pdata,
				 acc.param.private_data_len, false, &a->sender, &why),
		0);
	for (uint32_t n = 0x100; n < 0x100 + 1000 && !f->qp; n++)
		f->qp = fake_qp_by_num(n);
	assert_non_null(f->qp);
	f->cq = fake_qp_attr(f->qp).send_cq;
	assert_int_equal(srv->unproven, 1);
	assert_string_equal(strstr(srv->conns->peer, "key="), "key=alpha");
}

static void afx_stop(struct afx *a)
{
	rpmafs_auth_delete(&a->sender);
	rpmafs_key_delete(&a->key);
	rpmafs_nonces_delete(&a->f.srv.nonces);
	rpmafs_keyring_delete(&a->f.srv.keys);
	fx_stop(&a->f);
	unlink(a->key_path);
	rmdir(a->dir);
}

/*
 * afx_send -- a SEND of len bytes (payload and tag, as the sender made
 * them) arrives: written into the receive buffer it lands in, then its
 * completion; imm 0: without immediate data
 */
static void afx_send(struct afx *a, const uint8_t *bytes, uint32_t len, uint32_t imm)
{
	struct fx *f = &a->f;

	if (f->opts.srq) {
		struct ibv_srq *srq = fake_srq_nth(0);

		memcpy((void *)(uintptr_t)fake_srq_recv_get(srq, 0).sge.addr, bytes, len);
		assert_true(fake_srq_deliver(f->qp, len, imm != 0, htonl(imm)));
		return;
	}
	struct recv_conn *c = f->srv.conns;
	unsigned slot = a->slot++ % SLOTS;
	struct ibv_wc wc = fx_wc(slot, IBV_WC_RECV, IBV_WC_SUCCESS);

	memcpy(c->rx.buf + (size_t)slot * c->rx.slot_size, bytes, len);
	wc.byte_len = len;
	wc.wc_flags = imm ? IBV_WC_WITH_IMM : 0;
	wc.imm_data = htonl(imm);
	wc.qp_num = f->qp->qp_num;
	fake_cq_push_wc(f->cq, &wc);
}

/* afx_message -- the sender seals text as message num (PROMPT), flip: one bit of its tag */
static void afx_message(struct afx *a, uint32_t num, const char *text, bool flip)
{
	uint8_t b[MAX_MESSAGE + RPMAFS_AUTH_TAG_BYTES];
	size_t len = strlen(text);
	uint32_t imm = num | RPMAFS_IMM_PROMPT;

	memcpy(b, text, len);
	rpmafs_auth_seal(a->sender, imm, b, len, b + len);
	if (flip)
		b[len + 3] ^= 0x40;
	afx_send(a, b, (uint32_t)(len + RPMAFS_AUTH_TAG_BYTES), imm);
}

static void afx_proof(struct afx *a)
{
	uint8_t tag[RPMAFS_AUTH_TAG_BYTES];

	rpmafs_auth_seal_proof(a->sender, tag);
	afx_send(a, tag, sizeof(tag), 0);
}

/* the output so far */
static size_t afx_output(struct afx *a, char *buf, size_t size)
{
	int fd = open(a->f.out_path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, size);
	close(fd);
	assert_true(n >= 0);
	return (size_t)n;
}

/*
 * the proof first, then messages opened and written without their tags (a
 * 0-byte message as a 16-byte SEND), acknowledged with a sealed 32-byte
 * acknowledgement; a bad tag in a batch: the message before it written,
 * it and the one after not, the connection dropped and counted
 */
static void keyed_connection(bool srq)
{
	static const char want[] = "\5\0\0\0hello\0\0\0\0\3\0\0\0one";
	struct fake_send_wr wr;
	struct afx a;
	struct rpmafs_ack ack;
	char got[128];
	uint8_t *b;

	afx_start(&a, srq);
	afx_proof(&a);
	pump(&a.f, 0);
	assert_true(a.f.srv.conns->proven);
	assert_int_equal(a.f.srv.unproven, 0);
	assert_int_equal(a.f.srv.messages, 0);

	afx_message(&a, 1, "hello", false);
	afx_message(&a, 2, "", false); /* a 0-byte message */
	pump(&a.f, 0);
	assert_int_equal(a.f.srv.messages, 2);
	(void)recv_conn_acks(&a.f.srv);
	assert_int_equal(fake_send_count(a.f.qp), 1);
	wr = fake_send_get(a.f.qp, 0);
	assert_int_equal(wr.sge.length, RPMAFS_ACK_LEN + RPMAFS_AUTH_TAG_BYTES);
	b = (uint8_t *)(uintptr_t)wr.sge.addr;
	assert_int_equal(rpmafs_auth_open_ack(a.sender, b, RPMAFS_ACK_LEN, b + RPMAFS_ACK_LEN), 0);
	assert_int_equal(rpmafs_ack_parse(b, RPMAFS_ACK_LEN, &ack, NULL), 0);
	assert_int_equal(ack.acked, 2);
	complete(&a.f, 0);
	pump(&a.f, 0);

	/* one batch: a good one, a bad tag, a good one after it */
	afx_message(&a, 3, "one", false);
	afx_message(&a, 4, "two", true);
	afx_message(&a, 5, "six", false);
	pump(&a.f, 0);
	assert_int_equal(a.f.srv.messages, 3);
	assert_int_equal(a.f.srv.auth_failures, 1);
	assert_true(a.f.srv.conns->discard);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 1);
	assert_int_equal(afx_output(&a, got, sizeof(got)), sizeof(want) - 1);
	assert_memory_equal(got, want, sizeof(want) - 1);
	afx_stop(&a);
}

static void keyed_srq(void **state)
{
	(void)state;
	keyed_connection(true);
}

static void keyed_no_srq(void **state)
{
	(void)state;
	keyed_connection(false);
}

/* a message before the proof: dropped, nothing written */
static void keyed_message_before_proof(void **state)
{
	struct afx a;

	(void)state;
	afx_start(&a, true);
	afx_message(&a, 1, "early", false);
	pump(&a.f, 0);
	assert_int_equal(a.f.srv.messages, 0);
	assert_int_equal(a.f.srv.auth_failures, 1);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 1);
	afx_stop(&a);
}

/* at connect: no key, a replay, another key, and a key to a receiver without keys */
static void keyed_rejections(void **state)
{
	uint8_t v1[RPMAFS_PDATA_MAX_LEN], other[RPMAFS_AUTH_REQUEST_LEN];
	struct rpmafs_key *k2;
	char err[256], path[128];
	struct afx a;
	uint8_t k[RPMAFS_AUTH_KEY_BYTES] = {9};
	int fd;

	(void)state;
	afx_start(&a, true);
	assert_false(afx_request(
		&a, v1, rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = 8}, v1)));
	assert_int_equal(a.f.srv.auth_failures, 1);
	assert_false(afx_request(&a, a.req, sizeof(a.req))); /* its nonce was seen */
	assert_int_equal(a.f.srv.auth_failures, 2);
	assert_false(afx_request(&a, NULL, 0)); /* a plain peer */
	assert_int_equal(a.f.srv.auth_failures, 3);

	snprintf(path, sizeof(path), "%s/../test-recv-beta.%d", a.dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, k, sizeof(k)), sizeof(k));
	close(fd);
	assert_int_equal(rpmafs_key_load(path, NULL, &k2, err, sizeof(err)), 0);
	unlink(path);
	rpmafs_auth_request_encode(k2, &(struct rpmafs_pdata){.max_message = 8}, false, other);
	assert_false(afx_request(&a, other, sizeof(other)));
	assert_int_equal(a.f.srv.auth_failures, 4);

	/* the same request to a receiver without keys */
	rpmafs_keyring_delete(&a.f.srv.keys);
	a.f.opts.keys = NULL;
	rpmafs_auth_request_encode(k2, &(struct rpmafs_pdata){.max_message = 8}, false, other);
	assert_false(afx_request(&a, other, sizeof(other)));
	assert_int_equal(a.f.srv.auth_failures, 5);
	assert_int_equal(a.f.srv.open, 1);
	rpmafs_key_delete(&k2);
	afx_stop(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		rpma_unit_test(ack_shares_stay_within_the_queue),
		rpma_unit_test(count_srq),
		rpma_unit_test(count_no_srq),
		rpma_unit_test(signal_drains_acks_then_disconnects),
		rpma_unit_test(dead_peer_is_closed_in_time),
		rpma_unit_test(output_gone_disconnects_at_once),
		rpma_unit_test(transition_table),
		rpma_unit_test(illegal_transition_is_refused),
		rpma_unit_test(batch_resend_is_written_once),
		rpma_unit_test(keyed_srq),
		rpma_unit_test(keyed_no_srq),
		rpma_unit_test(keyed_message_before_proof),
		rpma_unit_test(keyed_rejections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
