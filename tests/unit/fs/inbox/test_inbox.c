// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_inbox.c -- fs/inbox/inbox.c, the mount's receiving end, on the fake
 * RDMA provider (common-mocks): senders accepted or refused at connect
 * time, messages landing in the shared receive queue and read through
 * inbox_queue.h, a message over the limit, a disconnect, acknowledgements
 * to receiver-confirmed senders, inbox_new's failures and inbox_delete
 * with senders connected.
 *
 * The loop is a fake the test drives as the loop thread, one batch at a
 * time as runtime/loop.c runs them: the watches whose descriptors are
 * readable when the batch starts (each one called even if it is unwatched
 * during the batch, as an event epoll already returned is), the tasks
 * handed over with loop_run_soon, then the after-batch tasks. Nothing runs
 * after the test's last batch: loop_delete runs no task, so what inbox.c
 * leaves to a batch after inbox_delete is never run (and leaks).
 *
 * The fake provider does not move bytes: a message is written into the
 * buffer of the receive it consumes next, as the adapter would, before its
 * completion comes (arrive()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "ack.h"
#include "auth.h"
#include "inbox/inbox.h"
#include "inbox/inbox_ack.h"
#include "pdata.h"
#include "runtime/log.h"
#include "runtime/loop.h"

/*
 * inbox.c takes its receive buffers from posix_memalign(), which
 * alloc_fail.c does not count, and gives them back with free(), which it
 * does: here they come from the counted malloc, so that the teardown's
 * balance of blocks holds and the allocation sweep reaches them (the fake
 * provider does not care about their alignment).
 */
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size);
int __wrap_posix_memalign(void **ptr, size_t alignment, size_t size)
{
	(void)alignment;
	*ptr = malloc(size);
	return *ptr ? 0 : ENOMEM;
}

/* ---- a fake loop, driven by the test as the loop thread ---- */

struct loop {
	int unused;
};
static struct loop Loop;

#define MAX_WATCH 16
static struct {
	struct {
		int fd;
		struct loop_watch *w;
	} watch[MAX_WATCH];
	struct loop_task *soon, **soon_tail;
	struct loop_task *after;
	uint64_t armed; /* the last deadline loop_arm was given */
} L;

int loop_watch(struct loop *loop, int fd, struct loop_watch *w)
{
	int free_at = -1;

	(void)loop;
	for (int i = 0; i < MAX_WATCH; i++) {
		if (L.watch[i].w && L.watch[i].fd == fd)
			return -EEXIST; /* as epoll_ctl(EPOLL_CTL_ADD) says */
		if (!L.watch[i].w && free_at < 0)
			free_at = i;
	}
	if (free_at < 0)
		return -ENOSPC;
	L.watch[free_at].fd = fd;
	L.watch[free_at].w = w;
	return 0;
}

void loop_unwatch(struct loop *loop, int fd)
{
	(void)loop;
	for (int i = 0; i < MAX_WATCH; i++)
		if (L.watch[i].w && L.watch[i].fd == fd)
			L.watch[i].w = NULL;
}

void loop_run_soon(struct loop *loop, struct loop_task *t)
{
	(void)loop;
	t->next = NULL;
	*L.soon_tail = t;
	L.soon_tail = &t->next;
}

void loop_after_batch(struct loop *loop, struct loop_task *t)
{
	(void)loop;
	t->next = L.after;
	L.after = t;
}

void loop_arm(struct loop *loop, uint64_t at_ms)
{
	(void)loop;
	L.armed = at_ms;
}

static unsigned watches(void)
{
	unsigned n = 0;

	for (int i = 0; i < MAX_WATCH; i++)
		n += L.watch[i].w != NULL;
	return n;
}

static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* one batch of the loop thread; false when there was nothing to do */
static bool batch(void)
{
	struct loop_watch *ready[MAX_WATCH];
	struct loop_task *t = L.soon;
	int n = 0;

	for (int i = 0; i < MAX_WATCH; i++)
		if (L.watch[i].w && readable(L.watch[i].fd))
			ready[n++] = L.watch[i].w;
	if (!n && !t)
		return false;
	for (int i = 0; i < n; i++)
		ready[i]->fn(ready[i]->arg);
	/* the wake-up: the tasks handed over before the batch, oldest first */
	L.soon = NULL;
	L.soon_tail = &L.soon;
	while (t) {
		struct loop_task *next = t->next;

		t->fn(t->arg);
		t = next;
	}
	while (L.after) {
		struct loop_task *a = L.after;

		L.after = a->next;
		a->fn(a->arg);
	}
	return true;
}

/* the loop runs until it has nothing left to do */
static void settle(void)
{
	for (int i = 0; batch(); i++)
		assert_true(i < 100);
}

/* ---- the daemon's log, captured ---- */

#define LOGS_MAX 64
static struct {
	int prio;
	char text[256];
} Logs[LOGS_MAX];
static int Nlogs;

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	if (Nlogs == LOGS_MAX)
		return;
	Logs[Nlogs].prio = prio;
	va_start(ap, fmt);
	vsnprintf(Logs[Nlogs].text, sizeof(Logs[Nlogs].text), fmt, ap);
	va_end(ap);
	Nlogs++;
}

/* a message at prio containing both a and b (b may be NULL) was logged */
static bool logged(int prio, const char *a, const char *b)
{
	for (int i = 0; i < Nlogs; i++)
		if (Logs[i].prio == prio && strstr(Logs[i].text, a) &&
			(!b || strstr(Logs[i].text, b)))
			return true;
	return false;
}

static void assert_logged(int prio, const char *a, const char *b)
{
	if (logged(prio, a, b))
		return;
	for (int i = 0; i < Nlogs; i++)
		fprintf(stderr, "logged (%d): %s\n", Logs[i].prio, Logs[i].text);
	fail_msg("nothing logged at %d with \"%s\" and \"%s\"", prio, a, b ? b : "");
}

/* ---- the inbox under test ---- */

#define SLOTS 8
#define MAX_MESSAGE 64
#define SENDER_PORT 5000

static struct {
	struct rpmafs_inbox_cfg cfg;
	struct inbox *ib;
	int ep_fd;
	struct ibv_srq *srq;
	unsigned arrivals;
	char keydir[64];	      /* listen_keys: made by with_keys, removed by teardown */
	struct rpmafs_auth *auths[8]; /* the keyed senders' connection states */
	unsigned nauths;
} F;

static void on_arrival(void *arg)
{
	(*(unsigned *)arg)++;
}

static int setup(void **state)
{
	unit_setup(state);
	memset(&L, 0, sizeof(L));
	L.soon_tail = &L.soon;
	memset(&F, 0, sizeof(F));
	Nlogs = 0;
	F.cfg.enabled = true;
	snprintf(F.cfg.address, sizeof(F.cfg.address), "%s", UNIT_ADDR);
	F.cfg.port = 7204;
	F.cfg.format = RPMAFS_INBOX_LEN;
	F.cfg.slots = SLOTS;
	F.cfg.max_message = MAX_MESSAGE;
	return 0;
}

/* as mount.c: the loop stops (what it was handed runs), the inbox goes, then the loop */
static int teardown(void **state)
{
	settle();
	inbox_delete(&F.ib);
	assert_null(F.ib);
	assert_int_equal(watches(), 0);
	for (unsigned i = 0; i < F.nauths; i++)
		rpmafs_auth_delete(&F.auths[i]);
	rpmafs_keyring_delete(&F.cfg.keys);
	if (F.keydir[0]) {
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", F.keydir);
		assert_int_equal(system(cmd), 0);
	}
	return unit_teardown(state);
}

static void start(void)
{
	char why[256] = "";

	if (inbox_new(&F.cfg, &Loop, &F.ib, why, sizeof(why)))
		fail_msg("inbox_new: %s", why);
	inbox_set_arrival(F.ib, on_arrival, &F.arrivals);
	/* the listener and the shared receive queue's completions */
	assert_int_equal(watches(), 2);
	F.ep_fd = -1;
	for (int i = 0; i < MAX_WATCH; i++)
		if (L.watch[i].w && fake_cm_id_by_channel_fd(L.watch[i].fd))
			F.ep_fd = L.watch[i].fd;
	assert_true(F.ep_fd >= 0);
	F.srq = fake_srq_nth(0);
	assert_non_null(F.srq);
	assert_null(fake_srq_nth(1));
	assert_int_equal(fake_srq_recv_count(F.srq), SLOTS);
}

static struct inbox_stats stats(void)
{
	struct inbox_stats st;

	inbox_stats_get(F.ib, &st);
	return st;
}

static uint32_t srq_posted(void)
{
	return fake_srq_recv_count(F.srq);
}

enum kind {
	PLAIN,	/* no private data: a librpma or verbs sender */
	RPMAFS, /* an rpmafs header without the flag */
	ACKED,	/* an rpmafs header offering receiver confirmation */
};

/* a connection request from ip:SENDER_PORT with pdata reaches the listener; the loop runs */
static void request(const char *ip, const void *pdata, uint8_t len)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(SENDER_PORT)};

	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	assert_non_null(
		fake_cm_push_connect_request_from(F.ep_fd, (struct sockaddr *)&sin, pdata, len));
	settle();
}

struct sender {
	struct rdma_cm_id *id; /* valid while it is connected */
	struct ibv_qp *qp;
	struct ibv_cq *scq;	  /* its send completions: the acknowledgements' */
	struct rpmafs_auth *auth; /* a keyed sender's connection state (F.auths) */
};

/*
 * a sender of kind connects from ip and is accepted (ACKED with a non-zero
 * session: a version 2 header carrying it); the kernel says it is up
 */
static struct sender accepted_session(const char *ip, enum kind kind, uint64_t session)
{
	uint8_t pd[RPMAFS_PDATA_MAX_LEN];
	size_t pd_len;
	unsigned accepts = fake_calls(FAKE_RDMA_ACCEPT);
	uint64_t before = stats().accepted;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(SENDER_PORT)};
	struct sender s = {0};

	pd_len = rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = MAX_MESSAGE,
					     .credits = 0,
					     .flags = kind == ACKED ? RPMAFS_PDATA_F_ACK : 0,
					     .session = session},
		pd);
	assert_int_equal(pd_len, session ? RPMAFS_PDATA_LEN_2 : RPMAFS_PDATA_LEN);
	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	s.id = fake_cm_push_connect_request_from(F.ep_fd, (struct sockaddr *)&sin,
		kind == PLAIN ? NULL : pd, kind == PLAIN ? 0 : pd_len);
	assert_non_null(s.id);
	settle();
	assert_int_equal(fake_calls(FAKE_RDMA_ACCEPT), accepts + 1);
	assert_int_equal(stats().accepted, before + 1);
	s.qp = s.id->qp;
	assert_non_null(s.qp);
	assert_ptr_equal(s.qp->srq, F.srq);
	s.scq = fake_qp_attr(s.qp).send_cq;
	assert_non_null(s.scq);
	fake_cm_push_event(s.id->channel->fd, s.id, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	settle();
	return s;
}

static struct sender accepted(const char *ip, enum kind kind)
{
	return accepted_session(ip, kind, 0);
}

/* what the inbox put in its accept */
static struct rpmafs_pdata accept_reply(void)
{
	struct fake_conn_param p = fake_last_accept();
	struct rpmafs_pdata pd = {0};

	assert_int_equal(
		rpmafs_pdata_parse(p.pdata, p.param.private_data_len, &pd, NULL), RPMAFS_PDATA_OK);
	return pd;
}

/*
 * a message of len bytes from s lands in the receive the shared queue
 * consumes next (with its number in the immediate data when imm); returns
 * where it landed
 */
static uint8_t *arrive(struct sender *s, const void *bytes, uint32_t len, bool imm, uint32_t num)
{
	struct fake_recv_wr r;

	assert_true(srq_posted() > 0);
	r = fake_srq_recv_get(F.srq, 0);
	assert_int_equal(r.num_sge, 1);
	/* with listen_keys a receive holds the message and its tag */
	assert_int_equal(r.sge.length, MAX_MESSAGE + (F.cfg.keys ? RPMAFS_AUTH_TAG_BYTES : 0));
	if (len)
		memcpy((void *)(uintptr_t)r.sge.addr, bytes,
			len < r.sge.length ? len : r.sge.length);
	assert_true(fake_srq_deliver(s->qp, len, imm, htonl(num)));
	return (uint8_t *)(uintptr_t)r.sge.addr;
}

/* the disconnect of s reaches its connection's events */
static void disconnect(struct sender *s)
{
	fake_cm_push_event(s->id->channel->fd, s->id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
	s->id = NULL; /* freed with its connection */
	settle();
}

/* a reader takes one record whole (a 4-byte little-endian length, then the payload) */
static void read_record(struct inbox_reader *rd, const void *want, uint32_t len)
{
	uint8_t out[4 + MAX_MESSAGE + 16];
	ssize_t n = inbox_queue_read(inbox_queue(F.ib), rd, out, sizeof(out), NULL);

	assert_int_equal(n, 4 + len);
	assert_int_equal(out[0] | out[1] << 8 | out[2] << 16 | (uint32_t)out[3] << 24, len);
	if (len)
		assert_memory_equal(out + 4, want, len);
	assert_false(rd->active);
}

static void read_one(const void *want, uint32_t len)
{
	struct inbox_reader rd = {0};

	read_record(&rd, want, len);
}

/* the acknowledgement posted as s's send i: what it says */
static struct rpmafs_ack sent_ack(struct sender *s, unsigned i)
{
	struct fake_send_wr wr = fake_send_get(s->qp, i);
	struct rpmafs_ack ack = {0};

	assert_int_equal(wr.opcode, IBV_WR_SEND);
	assert_true(wr.send_flags & IBV_SEND_SIGNALED);
	assert_int_equal(
		rpmafs_ack_parse((const void *)(uintptr_t)wr.sge.addr, wr.sge.length, &ack, NULL),
		0);
	return ack;
}

/* the completion of s's send i comes, with status */
static void complete(struct sender *s, unsigned i, enum ibv_wc_status status)
{
	struct ibv_wc wc = fx_wc(fake_send_get(s->qp, i).wr_id, IBV_WC_SEND, status);

	wc.qp_num = s->qp->qp_num;
	fake_cq_push_wc(s->scq, &wc);
	settle();
}

/* ---- the tests ---- */

/* an rpmafs sender is accepted; its messages reach the queue in order, bytes intact */
static void receives_into_the_queue(void **state)
{
	static const uint8_t one[] = {'h', 'i', 0, '\n', 0xff, '\\', 'x'};
	static const char two[] = "second message";
	struct inbox_reader rd = {0};
	struct inbox_stats st;
	struct rpmafs_pdata reply;
	struct sender s;
	uint8_t *where;

	(void)state;
	start();
	s = accepted("192.168.77.9", RPMAFS);
	st = stats();
	assert_int_equal(st.connections, 1);
	assert_int_equal(st.rejected, 0);
	assert_string_equal(st.state, "listening");
	assert_string_equal(st.listen, "192.168.77.2:7204");
	assert_string_equal(st.last_sender, "");
	assert_logged(LOG_INFO, "accepting 192.168.77.9:5000 (rpmafs sender)", NULL);
	/* the limit in answer; nothing promised, no flag */
	reply = accept_reply();
	assert_int_equal(reply.max_message, MAX_MESSAGE);
	assert_int_equal(reply.credits, 0);
	assert_int_equal(reply.flags, 0);

	where = arrive(&s, one, sizeof(one), false, 0);
	arrive(&s, two, sizeof(two) - 1, false, 0);
	settle();
	assert_int_equal(F.arrivals, 1); /* once for the batch */
	st = stats();
	assert_int_equal(st.q.received, 2);
	assert_int_equal(st.q.bytes, sizeof(one) + sizeof(two) - 1);
	assert_int_equal(st.q.waiting, 2);
	assert_string_equal(st.last_sender, "192.168.77.9:5000");
	assert_int_equal(srq_posted(), SLOTS - 2);

	read_record(&rd, one, sizeof(one));
	/* read whole: its receive goes back to the queue at once, on the reader's thread */
	assert_int_equal(srq_posted(), SLOTS - 1);
	assert_null(L.soon); /* nothing handed to the loop */
	settle();
	assert_int_equal(srq_posted(), SLOTS - 1);
	assert_ptr_equal((void *)(uintptr_t)fake_srq_recv_get(F.srq, SLOTS - 2).sge.addr, where);
	read_record(&rd, two, sizeof(two) - 1);
	assert_int_equal(inbox_queue_read(inbox_queue(F.ib), &rd, where, 1, NULL), -EAGAIN);
	settle();
	assert_int_equal(srq_posted(), SLOTS);
	assert_int_equal(stats().q.read, 2);
	/* a sender without the flag is never acknowledged */
	assert_int_equal(fake_send_count(s.qp), 0);
	assert_int_equal(stats().acks, 0);
}

/* a 0-byte message is a message: an empty record (len: 4 zero bytes) */
static void zero_byte_message(void **state)
{
	struct sender s;

	(void)state;
	start();
	s = accepted("192.168.77.9", PLAIN);
	assert_logged(LOG_INFO, "accepting 192.168.77.9:5000 (no rpmafs private data)", NULL);
	arrive(&s, NULL, 0, false, 0);
	settle();
	assert_int_equal(F.arrivals, 1);
	assert_int_equal(stats().q.received, 1);
	assert_int_equal(stats().q.bytes, 0);
	assert_int_equal(stats().q.waiting, 1);
	read_one(NULL, 0);
	settle();
	assert_int_equal(srq_posted(), SLOTS);
	assert_int_equal(stats().q.read, 1);
}

/* raw: a 0-byte message has no byte to read, yet it is taken and its receive goes back */
static void zero_byte_message_raw(void **state)
{
	struct inbox_reader rd = {0};
	struct sender s;
	char out[16];

	(void)state;
	F.cfg.format = RPMAFS_INBOX_RAW;
	start();
	s = accepted("192.168.77.9", PLAIN);
	arrive(&s, NULL, 0, false, 0);
	arrive(&s, "ab", 2, false, 0);
	settle();
	assert_int_equal(stats().q.received, 2);
	assert_int_equal(inbox_queue_read(inbox_queue(F.ib), &rd, out, sizeof(out), NULL), 2);
	assert_memory_equal(out, "ab", 2);
	settle();
	assert_int_equal(stats().q.read, 2);
	assert_int_equal(srq_posted(), SLOTS);
}

/* [rpmafs] allow: an address outside every network is refused at connect time */
static void refuses_an_address_not_allowed(void **state)
{
	(void)state;
	snprintf(F.cfg.allow[0], sizeof(F.cfg.allow[0]), "10.0.0.0/8");
	F.cfg.nallow = 1;
	start();
	request("192.168.1.5", NULL, 0);
	assert_int_equal(stats().rejected, 1);
	assert_int_equal(stats().accepted, 0);
	assert_int_equal(stats().connections, 0);
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 1);
	assert_int_equal(fake_calls(FAKE_RDMA_ACCEPT), 0);
	assert_int_equal(fake_live(FAKE_QP), 0); /* the request's QP went with it */
	assert_logged(LOG_NOTICE, "rejected connection from 192.168.1.5:5000",
		"address not allowed by [rpmafs] allow");

	/* inside the network: taken */
	accepted("10.1.2.3", PLAIN);
	assert_int_equal(stats().connections, 1);
	assert_int_equal(stats().rejected, 1);

	/* a request whose address is not known cannot be matched: refused */
	assert_non_null(fake_cm_push_connect_request(F.ep_fd, NULL, 0));
	settle();
	assert_int_equal(stats().rejected, 2);
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 2);
	assert_logged(LOG_NOTICE, "rejected connection from (address unknown)", "allow");
}

/* private data that is not an rpmafs header, or a broken one, is refused; zeros are plain */
static void refuses_bad_private_data(void **state)
{
	uint8_t bad[RPMAFS_PDATA_MAX_LEN], zeros[FAKE_CONNECT_PDATA_MAX] = {0};
	const char foreign[RPMAFS_PDATA_LEN] = "HELLO, RECEIVER";

	(void)state;
	start();
	rpmafs_pdata_encode(
		&(struct rpmafs_pdata){
			.max_message = MAX_MESSAGE, .credits = 0, .flags = 0, .session = 0},
		bad);
	bad[4] = 99; /* the version */
	request("192.168.77.9", bad, RPMAFS_PDATA_LEN);
	assert_int_equal(stats().rejected, 1);
	assert_logged(LOG_NOTICE, "rejected connection from 192.168.77.9:5000",
		"unsupported rpmafs header version");
	request("192.168.77.9", foreign, sizeof(foreign));
	assert_int_equal(stats().rejected, 2);
	assert_logged(LOG_NOTICE, "rejected connection from 192.168.77.9:5000",
		"private data is not an rpmafs header");
	rpmafs_pdata_encode(
		&(struct rpmafs_pdata){
			.max_message = MAX_MESSAGE, .credits = 0, .flags = 0, .session = 0},
		bad);
	bad[5] = RPMAFS_PDATA_LEN + 1; /* the header's length */
	request("192.168.77.9", bad, RPMAFS_PDATA_LEN);
	assert_int_equal(stats().rejected, 3);
	assert_logged(LOG_NOTICE, "rejected connection from", "rpmafs header length is wrong");
	assert_int_equal(fake_calls(FAKE_RDMA_REJECT), 3);
	assert_int_equal(fake_calls(FAKE_RDMA_ACCEPT), 0);
	assert_int_equal(stats().accepted, 0);
	assert_int_equal(fake_live(FAKE_QP), 0);

	/* the transport's padding alone: a plain sender */
	request("192.168.77.9", zeros, sizeof(zeros));
	assert_int_equal(stats().accepted, 1);
	assert_int_equal(stats().rejected, 3);
}

/*
 * a message over inbox_max_message completes in error: its sender is
 * closed and counted, its receive goes back, nothing reaches the queue;
 * another sender is not touched, and one of exactly the limit is fine
 */
static void message_over_the_limit(void **state)
{
	uint8_t big[MAX_MESSAGE + 1];
	struct sender a, b;

	(void)state;
	memset(big, 'z', sizeof(big));
	start();
	a = accepted("192.168.77.9", RPMAFS);
	b = accepted("192.168.77.10", RPMAFS);
	assert_int_equal(fake_live(FAKE_QP), 2);
	arrive(&a, big, sizeof(big), false, 0);
	settle();
	assert_int_equal(stats().failed, 1);
	assert_int_equal(stats().connections, 1);
	assert_int_equal(stats().q.received, 0);
	assert_int_equal(F.arrivals, 0);
	assert_logged(LOG_NOTICE, "connection 192.168.77.9:5000: receive failed",
		"(a message over inbox_max_message?)");
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 1);
	assert_int_equal(fake_live(FAKE_QP), 1);
	assert_int_equal(watches(), 3);
	assert_int_equal(srq_posted(), SLOTS);

	arrive(&b, big, MAX_MESSAGE, false, 0);
	settle();
	assert_int_equal(stats().q.received, 1);
	assert_int_equal(stats().failed, 1);
	assert_string_equal(stats().last_sender, "192.168.77.10:5000");
	read_one(big, MAX_MESSAGE);
}

/*
 * the sender goes away with messages in the queue: they stay and are read
 * whole, its connection is closed and freed (and its place taken again)
 */
static void disconnect_keeps_what_arrived(void **state)
{
	struct sender s;

	(void)state;
	start();
	s = accepted("192.168.77.9", RPMAFS);
	arrive(&s, "one", 3, false, 0);
	arrive(&s, "two", 3, false, 0);
	settle();
	disconnect(&s);
	assert_logged(LOG_INFO, "connection 192.168.77.9:5000 ended", NULL);
	assert_int_equal(stats().connections, 0);
	assert_int_equal(stats().failed, 0);
	assert_int_equal(fake_live(FAKE_QP), 0);
	assert_int_equal(fake_live(FAKE_CM_ID), 1); /* the listener's */
	assert_int_equal(watches(), 2);
	assert_int_equal(stats().q.waiting, 2);
	assert_int_equal(stats().q.withdrawn, 0);
	read_one("one", 3);
	read_one("two", 3);
	settle();
	assert_int_equal(srq_posted(), SLOTS);
	s = accepted("192.168.77.9", RPMAFS);
	assert_int_equal(stats().connections, 1);
}

/*
 * an acknowledging sender goes away: the message a reader is on stays and
 * is read whole (acknowledged to nobody); the ones nobody started are
 * taken back (it sends them again) and their receives posted at once; its
 * share of the queue comes back for the next senders
 */
static void disconnect_of_an_acknowledging_sender(void **state)
{
	struct inbox_reader rd = {0};
	struct sender s;
	uint8_t part[2];
	uint8_t rest[4 + MAX_MESSAGE];

	(void)state;
	start();
	s = accepted("192.168.77.9", ACKED);
	arrive(&s, "first", 5, true, 1);
	arrive(&s, "second", 6, true, 2);
	arrive(&s, "third", 5, true, 3 | RPMAFS_IMM_PROMPT);
	settle();
	assert_int_equal(stats().q.received, 3);
	assert_int_equal(inbox_queue_read(inbox_queue(F.ib), &rd, part, sizeof(part), NULL), 2);
	assert_true(rd.active);
	disconnect(&s);
	assert_int_equal(stats().connections, 0);
	assert_int_equal(fake_live(FAKE_QP), 0);
	assert_int_equal(stats().q.withdrawn, 2);
	assert_int_equal(stats().q.waiting, 1);
	assert_int_equal(srq_posted(), SLOTS - 1);
	/* the reader finishes the one it started */
	assert_int_equal(inbox_queue_read(inbox_queue(F.ib), &rd, rest, sizeof(rest), NULL), 7);
	assert_memory_equal(rest + 2, "first", 5);
	settle();
	assert_int_equal(srq_posted(), SLOTS);
	assert_int_equal(stats().acks, 0);
	assert_int_equal(stats().q.waiting, 0);
	/* 8 slots: four shares of 2, each promising one receive, the first's given back */
	for (int i = 0; i < 4; i++) {
		accepted("192.168.77.9", ACKED);
		assert_int_equal(accept_reply().credits, 1);
		assert_int_equal(accept_reply().flags, RPMAFS_PDATA_F_ACK);
	}
	assert_int_equal(stats().connections, 4);
}

/*
 * a receiver-confirmed sender: the flag and its credits in answer; each
 * message acknowledged once read whole (its receive already back), a
 * duplicate dropped, a request answered
 */
static void acknowledges_what_was_read(void **state)
{
	struct rpmafs_pdata reply;
	struct rpmafs_ack ack;
	struct sender s;

	(void)state;
	start();
	s = accepted("192.168.77.9", ACKED);
	assert_logged(LOG_INFO, "accepting 192.168.77.9:5000", "acknowledged at read");
	reply = accept_reply();
	assert_int_equal(reply.flags, RPMAFS_PDATA_F_ACK);
	assert_int_equal(reply.credits, 1); /* a share of 2 (8 slots / 4), one kept for a request */
	assert_int_equal(reply.max_message, MAX_MESSAGE);
	assert_int_equal(watches(), 4); /* and its send completions */

	arrive(&s, "abc", 3, true, 1);
	arrive(&s, "de", 2, true, 2 | RPMAFS_IMM_PROMPT);
	settle();
	assert_int_equal(stats().q.received, 2);
	assert_int_equal(fake_send_count(s.qp), 0); /* nothing read, nothing acknowledged */

	read_one("abc", 3);
	settle();
	assert_int_equal(fake_send_count(s.qp), 1);
	ack = sent_ack(&s, 0);
	assert_int_equal(ack.acked, 1);
	assert_int_equal(ack.credits, 1);
	assert_int_equal(ack.requests, 0);
	assert_int_equal(stats().acks, 1);
	assert_int_equal(srq_posted(), SLOTS - 1);
	complete(&s, 0, IBV_WC_SUCCESS);

	read_one("de", 2);
	settle();
	assert_int_equal(fake_send_count(s.qp), 2);
	assert_int_equal(sent_ack(&s, 1).acked, 2);
	assert_int_equal(stats().acks, 2);
	assert_int_equal(srq_posted(), SLOTS);

	/* it sends 2 again (it did not see the acknowledgement yet): dropped, not queued */
	arrive(&s, "de", 2, true, 2 | RPMAFS_IMM_PROMPT);
	settle();
	assert_int_equal(stats().duplicates, 1);
	assert_int_equal(stats().q.received, 2);
	assert_int_equal(srq_posted(), SLOTS);
	assert_logged(LOG_INFO, "connection 192.168.77.9:5000: message 2 again", "duplicate");

	/* it asks: answered with what was read and the count of its requests */
	arrive(&s, NULL, 0, true, RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT);
	settle();
	assert_int_equal(fake_send_count(s.qp), 3);
	ack = sent_ack(&s, 2);
	assert_int_equal(ack.acked, 2);
	assert_int_equal(ack.requests, 1);
	assert_int_equal(stats().acks, 3);
	assert_int_equal(stats().q.received, 2);
	assert_int_equal(srq_posted(), SLOTS);
	assert_int_equal(F.arrivals, 1);
	assert_int_equal(stats().connections, 1);
}

/*
 * coalesced (inbox_ack.h): a sender given no share (the shares are used up)
 * gets an acknowledgement per 16 messages read, held at most
 * INBOX_ACK_DELAY_MS otherwise (the loop armed for it, the tick sends it);
 * what it waits for (PROMPT) goes at once; a connection lost while its
 * acknowledgement is held leaves nothing for the tick
 */
static void holds_what_nobody_waits_for(void **state)
{
	struct sender s[5];
	uint64_t at;

	(void)state;
	start();
	for (int i = 0; i < 5; i++)
		s[i] = accepted("192.168.77.9", ACKED);
	assert_int_equal(accept_reply().credits, 0); /* the fifth: no share left */
	arrive(&s[4], "abc", 3, true, 1);
	settle();
	L.armed = 0;
	read_one("abc", 3);
	settle();
	assert_int_equal(fake_send_count(s[4].qp), 0); /* held */
	assert_int_equal(srq_posted(), SLOTS);	       /* its receive is back at once */
	at = L.armed;
	assert_true(at > 0);
	assert_int_equal(inbox_tick(F.ib, at - 1), at); /* not yet: the same deadline */
	assert_int_equal(fake_send_count(s[4].qp), 0);
	assert_int_equal(inbox_tick(F.ib, at), 0);
	assert_int_equal(fake_send_count(s[4].qp), 1);
	assert_int_equal(sent_ack(&s[4], 0).acked, 1);
	assert_int_equal(stats().acks, 1);
	complete(&s[4], 0, IBV_WC_SUCCESS);

	/* a sync write's message: acknowledged as soon as it is read */
	arrive(&s[4], "de", 2, true, 2 | RPMAFS_IMM_PROMPT);
	settle();
	read_one("de", 2);
	settle();
	assert_int_equal(fake_send_count(s[4].qp), 2);
	assert_int_equal(sent_ack(&s[4], 1).acked, 2);
	complete(&s[4], 1, IBV_WC_SUCCESS);

	/* held, then the connection goes: the tick has nothing to send */
	arrive(&s[4], "f", 1, true, 3);
	settle();
	read_one("f", 1);
	settle();
	assert_int_equal(fake_send_count(s[4].qp), 2);
	disconnect(&s[4]);
	assert_int_equal(inbox_tick(F.ib, UINT64_MAX / 2), 0);
	assert_int_equal(stats().acks, 2);
	assert_int_equal(stats().connections, 4);
}

/* competing readers finish out of order: one acknowledgement for the prefix, once it is read */
static void acknowledges_the_prefix_read(void **state)
{
	struct inbox_reader first = {0};
	struct sender s;
	uint8_t buf[4 + MAX_MESSAGE];

	(void)state;
	start();
	s = accepted("192.168.77.9", ACKED);
	arrive(&s, "one", 3, true, 7);
	arrive(&s, "two", 3, true, 8);
	settle();
	assert_int_equal(inbox_queue_read(inbox_queue(F.ib), &first, buf, 1, NULL), 1);
	read_one("two", 3);
	settle();
	assert_int_equal(fake_send_count(s.qp), 0);
	assert_int_equal(srq_posted(), SLOTS - 2);
	assert_int_equal(inbox_queue_read(inbox_queue(F.ib), &first, buf, sizeof(buf), NULL), 6);
	settle();
	assert_int_equal(fake_send_count(s.qp), 1);
	assert_int_equal(sent_ack(&s, 0).acked, 8);
	assert_int_equal(srq_posted(), SLOTS);
}

/* an acknowledgement whose send fails ends the connection; its messages were read */
static void failed_acknowledgement_closes(void **state)
{
	struct sender s;

	(void)state;
	start();
	s = accepted("192.168.77.9", ACKED);
	arrive(&s, "abc", 3, true, 1);
	settle();
	read_one("abc", 3);
	settle();
	assert_int_equal(fake_send_count(s.qp), 1);
	complete(&s, 0, IBV_WC_RETRY_EXC_ERR);
	assert_int_equal(stats().connections, 0);
	assert_logged(
		LOG_NOTICE, "connection 192.168.77.9:5000", "the acknowledgement's send failed");
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 1);
	assert_int_equal(fake_live(FAKE_QP), 0);
	assert_int_equal(watches(), 2);
}

/* an accept that fails is counted as refused; nothing of it stays */
static void failed_accept_is_counted(void **state)
{
	(void)state;
	start();
	fake_fail(FAKE_RDMA_ACCEPT, 1, EINVAL);
	request("192.168.77.9", NULL, 0);
	assert_int_equal(stats().rejected, 1);
	assert_int_equal(stats().accepted, 0);
	assert_int_equal(stats().connections, 0);
	assert_logged(LOG_NOTICE, "accepting 192.168.77.9:5000 failed", NULL);
	assert_int_equal(fake_live(FAKE_QP), 0);
	assert_int_equal(watches(), 2);
}

/* the listener's device goes: the state says so, the connections it had go on */
static void listener_lost(void **state)
{
	struct sender s;

	(void)state;
	start();
	s = accepted("192.168.77.9", RPMAFS);
	fake_cm_push_event(F.ep_fd, fake_cm_id_by_channel_fd(F.ep_fd), RDMA_CM_EVENT_DEVICE_REMOVAL,
		0, NULL, 0);
	settle();
	assert_string_equal(stats().state, "failed");
	assert_logged(LOG_ERR, "the listener on 192.168.77.2:7204 failed", NULL);
	assert_int_equal(watches(), 2); /* the queue's completions and the connection's events */
	assert_int_equal(fake_live(FAKE_CM_ID), 1); /* the connection's; the listener's went */
	arrive(&s, "still", 5, false, 0);
	settle();
	read_one("still", 5);
}

/* inbox_delete with senders connected, messages queued and part read: everything goes */
static void delete_with_senders_connected(void **state)
{
	struct inbox_reader rd = {0};
	struct sender a, b;
	uint8_t part[1];

	(void)state;
	start();
	a = accepted("192.168.77.9", ACKED);
	b = accepted("192.168.77.10", PLAIN);
	arrive(&a, "x", 1, true, 1);
	arrive(&a, "y", 1, true, 2);
	arrive(&b, "z", 1, false, 0);
	settle();
	assert_int_equal(inbox_queue_read(inbox_queue(F.ib), &rd, part, sizeof(part), NULL), 1);
	assert_int_equal(stats().connections, 2);
	/* the loop stops, then the inbox goes: no batch runs after it */
	settle();
	inbox_delete(&F.ib);
	assert_null(F.ib);
	assert_int_equal(watches(), 0);
	assert_int_equal(fake_calls(FAKE_RDMA_DISCONNECT), 2);
	assert_int_equal(fake_calls(FAKE_IBV_POST_SEND), 0); /* unread: never acknowledged */
	unit_assert_clean();
}

/* a read parked with nothing waiting ends when the inbox goes */
static int Woken, Woken_closing;

static void woken(struct inbox_waiter *w, bool closing)
{
	(void)w;
	Woken++;
	Woken_closing += closing;
}

static void delete_wakes_a_parked_read(void **state)
{
	struct inbox_reader rd = {0};
	struct inbox_waiter w = {.ready = woken};
	uint8_t buf[8];

	(void)state;
	Woken = Woken_closing = 0;
	start();
	assert_int_equal(inbox_queue_read(inbox_queue(F.ib), &rd, buf, sizeof(buf), &w), -EAGAIN);
	assert_int_equal(stats().q.readers, 1);
	inbox_delete(&F.ib);
	assert_int_equal(Woken, 1);
	assert_int_equal(Woken_closing, 1);
}

/* inbox_new's refusals say why; what it made is freed by inbox_delete */
static void new_refusals(void **state)
{
	char why[256] = "";

	(void)state;
	snprintf(F.cfg.address, sizeof(F.cfg.address), "127.0.0.1"); /* no RDMA device */
	assert_int_equal(inbox_new(&F.cfg, &Loop, &F.ib, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "listen = 127.0.0.1: no RDMA device has this address"));
	inbox_delete(&F.ib);
	assert_null(F.ib);

	snprintf(F.cfg.address, sizeof(F.cfg.address), "%s", UNIT_ADDR);
	snprintf(F.cfg.allow[0], sizeof(F.cfg.allow[0]), "10.0.0.0/99");
	F.cfg.nallow = 1;
	assert_int_equal(inbox_new(&F.cfg, &Loop, &F.ib, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "allow = 10.0.0.0/99: "));
	inbox_delete(&F.ib);
	assert_null(F.ib);
	assert_int_equal(watches(), 0);
}

/* every allocation of inbox_new failing in turn: -1 with a reason, and nothing left behind */
static void new_out_of_memory(void **state)
{
	unsigned n;

	(void)state;
	for (n = 1; n < 1000; n++) {
		char why[256] = "";
		bool fired;
		int ret;

		alloc_fail_nth(n);
		ret = inbox_new(&F.cfg, &Loop, &F.ib, why, sizeof(why));
		fired = alloc_fail_fired();
		alloc_fail_nth(0);
		if (!fired) {
			assert_int_equal(ret, 0);
			break;
		}
		if (ret != -1)
			fail_msg("allocation %u failed, inbox_new returned %d", n, ret);
		assert_true(why[0] != '\0');
		inbox_delete(&F.ib);
		assert_null(F.ib);
		assert_int_equal(watches(), 0);
		unit_assert_clean();
	}
	/* the inbox's own blocks, the queue's, the acknowledgements' and librpma's */
	assert_true(n > 10);
}

/* ---- exactly once across connections of a sender session (§13.4) ---- */

#define SESSION_A 0x5e55100000000a01ull
#define SESSION_B 0x5e55100000000b02ull

/* the last acknowledgement s was sent: what it says */
static struct rpmafs_ack last_ack(struct sender *s)
{
	unsigned n = fake_send_count(s->qp);

	assert_true(n > 0);
	return sent_ack(s, n - 1);
}

/*
 * numbers 1..3 queued from a session's first connection, 1 read and
 * acknowledged; the connection is lost: 2 and 3 stay queued (not
 * withdrawn). Its second connection sends 1..3 again (the acknowledgement
 * of 1 may have been lost too): none queued again, three duplicates. 1
 * was read: acknowledged at once. 2 and 3 are still unread: their re-sends
 * are acknowledged only once the originals are read, or an inbox unmounted
 * before that would lose what its sender was told was delivered. 4 after
 * them is queued, and acknowledged once read.
 */
static void session_resend_is_acknowledged_not_queued(void **state)
{
	struct sender s1, s2;

	(void)state;
	start();
	s1 = accepted_session("192.168.77.9", ACKED, SESSION_A);
	assert_logged(LOG_INFO, "accepting 192.168.77.9:5000", "a session, acknowledged");
	assert_int_equal(accept_reply().flags, RPMAFS_PDATA_F_ACK);
	arrive(&s1, "m1", 2, true, 1);
	arrive(&s1, "m2", 2, true, 2);
	arrive(&s1, "m3", 2, true, 3);
	settle();
	assert_int_equal(stats().q.received, 3);
	read_one("m1", 2);
	settle();
	assert_int_equal(last_ack(&s1).acked, 1);
	disconnect(&s1);
	assert_int_equal(stats().connections, 0);
	assert_int_equal(stats().q.withdrawn, 0);
	assert_int_equal(stats().q.waiting, 2);
	assert_int_equal(srq_posted(), SLOTS - 2);

	s2 = accepted_session("192.168.77.9", ACKED, SESSION_A);
	arrive(&s2, "m1", 2, true, 1);
	settle();
	assert_int_equal(fake_send_count(s2.qp), 1);
	assert_int_equal(last_ack(&s2).acked, 1);
	assert_int_equal(srq_posted(), SLOTS - 2); /* 1's re-send: its receive is back */
	complete(&s2, 0, IBV_WC_SUCCESS);
	arrive(&s2, "m2", 2, true, 2);
	arrive(&s2, "m3", 2, true, 3 | RPMAFS_IMM_PROMPT);
	settle();
	assert_logged(LOG_INFO, "message 3 of its session again", "duplicate");
	assert_int_equal(stats().duplicates, 3);
	assert_int_equal(stats().q.received, 3);
	assert_int_equal(stats().q.waiting, 2);
	/* 2 and 3 unread: their re-sends held, not acknowledged, even prompted */
	assert_int_equal(fake_send_count(s2.qp), 1);
	assert_int_equal(srq_posted(), SLOTS - 4);

	arrive(&s2, "m4", 2, true, 4);
	settle();
	assert_int_equal(stats().q.received, 4);
	/* the first connection's, then the new one, each once */
	read_one("m2", 2);
	settle();
	assert_int_equal(srq_posted(), SLOTS - 3); /* 2 and its re-send back; 3, 3', 4 held */
	read_one("m3", 2);
	read_one("m4", 2);
	settle();
	assert_int_equal(last_ack(&s2).acked, 4);
	assert_int_equal(stats().q.waiting, 0);
	assert_int_equal(stats().q.read, 4);
	assert_int_equal(srq_posted(), SLOTS);
	assert_int_equal(stats().duplicates, 3);
}

/*
 * a re-send held for its unread original, its connection lost before the
 * original is read: its slot goes back when the original is read, and the
 * next connection's re-send of it is acknowledged then
 */
static void held_resend_of_a_lost_connection(void **state)
{
	struct sender s1, s2, s3;

	(void)state;
	start();
	s1 = accepted_session("192.168.77.9", ACKED, SESSION_A);
	arrive(&s1, "m1", 2, true, 1);
	settle();
	disconnect(&s1);
	s2 = accepted_session("192.168.77.9", ACKED, SESSION_A);
	arrive(&s2, "m1", 2, true, 1 | RPMAFS_IMM_PROMPT);
	settle();
	assert_int_equal(fake_send_count(s2.qp), 0);
	assert_int_equal(srq_posted(), SLOTS - 2);
	disconnect(&s2);
	assert_int_equal(srq_posted(), SLOTS - 2); /* held until the original is read */
	s3 = accepted_session("192.168.77.9", ACKED, SESSION_A);
	arrive(&s3, "m1", 2, true, 1 | RPMAFS_IMM_PROMPT);
	settle();
	assert_int_equal(fake_send_count(s3.qp), 0);
	assert_int_equal(stats().duplicates, 2);
	assert_int_equal(stats().q.received, 1);
	read_one("m1", 2);
	settle();
	assert_int_equal(last_ack(&s3).acked, 1);
	assert_int_equal(srq_posted(), SLOTS);
}

/* another session's same numbers are other messages: queued */
static void other_session_same_numbers_are_queued(void **state)
{
	struct sender a, b;

	(void)state;
	start();
	a = accepted_session("192.168.77.9", ACKED, SESSION_A);
	b = accepted_session("192.168.77.10", ACKED, SESSION_B);
	arrive(&a, "a1", 2, true, 1);
	arrive(&a, "a2", 2, true, 2);
	arrive(&b, "b1", 2, true, 1);
	arrive(&b, "b2", 2, true, 2);
	settle();
	assert_int_equal(stats().q.received, 4);
	assert_int_equal(stats().duplicates, 0);
	/* and a's second connection's 1 and 2 are a's duplicates, not b's */
	disconnect(&a);
	a = accepted_session("192.168.77.9", ACKED, SESSION_A);
	arrive(&a, "a1", 2, true, 1);
	arrive(&a, "a2", 2, true, 2);
	settle();
	assert_int_equal(stats().q.received, 4);
	assert_int_equal(stats().duplicates, 2);
	read_one("a1", 2);
	read_one("a2", 2);
	read_one("b1", 2);
	read_one("b2", 2);
	settle();
	assert_int_equal(last_ack(&b).acked, 2);
	assert_int_equal(srq_posted(), SLOTS);
}

/*
 * a version 1 sender (no session) as before: what was not started when
 * its connection was lost is withdrawn, and queued again when it comes
 * again on the next; no duplicates across connections
 */
static void version_1_sender_as_before(void **state)
{
	struct sender s;

	(void)state;
	start();
	s = accepted("192.168.77.9", ACKED);
	assert_logged(
		LOG_INFO, "accepting 192.168.77.9:5000", "rpmafs sender, acknowledged at read");
	arrive(&s, "m1", 2, true, 1);
	arrive(&s, "m2", 2, true, 2);
	settle();
	disconnect(&s);
	assert_int_equal(stats().q.withdrawn, 2);
	assert_int_equal(stats().q.waiting, 0);
	assert_int_equal(srq_posted(), SLOTS);
	s = accepted("192.168.77.9", ACKED);
	arrive(&s, "m1", 2, true, 1);
	arrive(&s, "m2", 2, true, 2);
	settle();
	assert_int_equal(stats().q.received, 4);
	assert_int_equal(stats().q.waiting, 2);
	assert_int_equal(stats().duplicates, 0);
	read_one("m1", 2);
	read_one("m2", 2);
	settle();
	assert_int_equal(last_ack(&s).acked, 2);
}

/*
 * a duplicate counts as taken in its place in its connection's order: a
 * new message before it, unread, holds its acknowledgement back
 */
static void session_duplicate_acknowledged_in_order(void **state)
{
	struct sender s1, s2;

	(void)state;
	start();
	s1 = accepted_session("192.168.77.9", ACKED, SESSION_A);
	arrive(&s1, "m6", 2, true, 6);
	settle();
	disconnect(&s1);
	assert_int_equal(stats().q.waiting, 1);
	s2 = accepted_session("192.168.77.9", ACKED, SESSION_A);
	arrive(&s2, "m5", 2, true, 5);
	arrive(&s2, "m6", 2, true, 6);
	settle();
	assert_int_equal(stats().duplicates, 1);
	assert_int_equal(stats().q.received, 2);
	assert_int_equal(fake_send_count(s2.qp), 0); /* 5 is not read yet */
	assert_int_equal(srq_posted(), SLOTS - 3);   /* 6's slot held until then */
	read_one("m6", 2);
	settle();
	assert_int_equal(fake_send_count(s2.qp), 0);
	read_one("m5", 2);
	settle();
	assert_int_equal(fake_send_count(s2.qp), 1);
	assert_int_equal(last_ack(&s2).acked, 6);
	assert_int_equal(srq_posted(), SLOTS);
}

/* ---- listen_keys (inbox_auth.h, docs/design.md §13.5) ---- */

/* key_file -- a 0600 key file F.keydir/name.key (made on first use) of 32 bytes of seed */
static void key_file(const char *dir, const char *name, uint8_t seed, struct rpmafs_key **key)
{
	uint8_t k[RPMAFS_AUTH_KEY_BYTES];
	char path[128], err[256];
	int fd;

	for (size_t i = 0; i < sizeof(k); i++)
		k[i] = (uint8_t)(seed + i * 13);
	snprintf(path, sizeof(path), "%s/%s.key", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, k, sizeof(k)), sizeof(k));
	close(fd);
	if (key)
		assert_int_equal(rpmafs_key_load(path, NULL, key, err, sizeof(err)), 0);
}

/*
 * with_keys -- listen_keys = F.keydir holding alpha.key (seed 1), the
 * sender's copy of it in *alpha; beta.key (seed 2) outside the ring in
 * *beta; encrypt: listen_protect = encrypt
 */
static void with_keys(struct rpmafs_key **alpha, struct rpmafs_key **beta, bool encrypt)
{
	char err[256], other[96];

	snprintf(F.keydir, sizeof(F.keydir), "/tmp/test-inbox-keys.XXXXXX");
	assert_non_null(mkdtemp(F.keydir));
	key_file(F.keydir, "alpha", 1, alpha);
	snprintf(other, sizeof(other), "%s/other", F.keydir);
	assert_int_equal(mkdir(other, 0700), 0);
	key_file(other, "beta", 2, beta);
	assert_int_equal(rpmafs_keyring_load(F.keydir, &F.cfg.keys, err, sizeof(err)), 0);
	snprintf(F.cfg.keys_dir, sizeof(F.cfg.keys_dir), "%s", F.keydir);
	F.cfg.protect = encrypt ? RPMAFS_PROTECT_ENCRYPT : RPMAFS_PROTECT_MAC;
}

/* a version 3 request made with key (F_ACK when acked, asking for encrypt) into req */
static void keyed_request(const struct rpmafs_key *key, bool acked, bool encrypt,
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN])
{
	assert_int_equal(rpmafs_auth_request_encode(key,
				 &(struct rpmafs_pdata){.max_message = MAX_MESSAGE,
					 .flags = acked ? RPMAFS_PDATA_F_ACK : 0},
				 encrypt, req),
		RPMAFS_AUTH_REQUEST_LEN);
}

/*
 * a sender with key connects from ip with the request req and is accepted:
 * the accept proves the key (s.auth, the sender's side); the kernel says
 * the connection is up; no SEND yet (not even the proof)
 */
static struct sender keyed_accepted(
	const char *ip, const struct rpmafs_key *key, const uint8_t req[RPMAFS_AUTH_REQUEST_LEN])
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(SENDER_PORT)};
	uint64_t before = stats().accepted;
	struct fake_conn_param acc;
	const char *why = NULL;
	struct sender s = {0};

	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	s.id = fake_cm_push_connect_request_from(
		F.ep_fd, (struct sockaddr *)&sin, req, RPMAFS_AUTH_REQUEST_LEN);
	assert_non_null(s.id);
	settle();
	assert_int_equal(stats().accepted, before + 1);
	acc = fake_last_accept();
	assert_int_equal(acc.param.private_data_len, RPMAFS_AUTH_ACCEPT_LEN);
	assert_int_equal(rpmafs_auth_accept_check(key, req, acc.pdata, acc.param.private_data_len,
				 false, &s.auth, &why),
		0);
	assert_true(F.nauths < sizeof(F.auths) / sizeof(F.auths[0]));
	F.auths[F.nauths++] = s.auth;
	s.qp = s.id->qp;
	s.scq = fake_qp_attr(s.qp).send_cq;
	fake_cm_push_event(s.id->channel->fd, s.id, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	settle();
	return s;
}

/* s's proof of key, its first SEND */
static void send_proof(struct sender *s)
{
	uint8_t tag[RPMAFS_AUTH_TAG_BYTES];

	rpmafs_auth_seal_proof(s->auth, tag);
	arrive(s, tag, sizeof(tag), false, 0);
	settle();
}

/* a message of len bytes sealed by s (with its number as immediate data when imm) */
static void send_sealed(struct sender *s, const void *bytes, uint32_t len, bool imm, uint32_t num)
{
	uint8_t buf[MAX_MESSAGE + RPMAFS_AUTH_TAG_BYTES];

	assert_true(len <= MAX_MESSAGE);
	memcpy(buf, bytes, len);
	rpmafs_auth_seal(s->auth, imm ? num : 0, buf, len, buf + len);
	arrive(s, buf, len + RPMAFS_AUTH_TAG_BYTES, imm, num);
	settle();
}

/*
 * a sender with one of DIR's keys: its accept proves the key back; nothing of it is
 * queued before its proof; its messages, a 0-byte one too, are queued
 * with their tags off; each acknowledgement is sealed and opens with the
 * sender's keys; last_sender names the key
 */
static void keyed_sender_delivers(void **state)
{
	struct rpmafs_key *alpha = NULL, *beta = NULL;
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN];
	struct fake_send_wr wr;
	struct rpmafs_ack ack;
	struct sender s;

	(void)state;
	with_keys(&alpha, &beta, false);
	start();
	keyed_request(alpha, true, false, req);
	s = keyed_accepted("192.168.77.9", alpha, req);
	assert_false(rpmafs_auth_encrypts(s.auth));
	assert_logged(LOG_INFO, "accepting 192.168.77.9:5000", "key alpha, mac");
	assert_int_equal(accept_reply().max_message, MAX_MESSAGE);
	/* a share of 2: one kept for a request; the proof takes one only of more */
	assert_int_equal(accept_reply().credits, 1);
	assert_true(L.armed > 0); /* the proof's deadline */

	send_proof(&s);
	assert_logged(LOG_INFO, "connection alpha@192.168.77.9:5000: proof of key taken", NULL);
	assert_int_equal(stats().q.received, 0);
	assert_int_equal(srq_posted(), SLOTS); /* the proof's receive is back */

	send_sealed(&s, "hello", 5, true, 1);
	send_sealed(&s, "", 0, true, 2);
	assert_int_equal(stats().q.received, 2);
	assert_string_equal(stats().last_sender, "alpha@192.168.77.9:5000");
	read_one("hello", 5);
	read_one("", 0);
	settle();
	/* the acknowledgement and its tag, which only the sender's keys open */
	assert_true(fake_send_count(s.qp) >= 1);
	wr = fake_send_get(s.qp, fake_send_count(s.qp) - 1);
	assert_int_equal(wr.sge.length, RPMAFS_ACK_LEN + RPMAFS_AUTH_TAG_BYTES);
	for (unsigned i = 0; i < fake_send_count(s.qp); i++) {
		struct fake_send_wr w = fake_send_get(s.qp, i);
		const uint8_t *b = (const uint8_t *)(uintptr_t)w.sge.addr;

		assert_int_equal(
			rpmafs_auth_open_ack(s.auth, b, RPMAFS_ACK_LEN, b + RPMAFS_ACK_LEN), 0);
	}
	assert_int_equal(
		rpmafs_ack_parse((const void *)(uintptr_t)wr.sge.addr, RPMAFS_ACK_LEN, &ack, NULL),
		0);
	assert_int_equal(ack.acked, 2);
	assert_int_equal(stats().auth_failures, 0);
	rpmafs_key_delete(&alpha);
	rpmafs_key_delete(&beta);
}

/* the sender asked for encrypt: its ciphertext is queued as plaintext */
static void keyed_encrypt_delivers_plaintext(void **state)
{
	struct rpmafs_key *alpha = NULL, *beta = NULL;
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN];
	struct sender s;

	(void)state;
	with_keys(&alpha, &beta, false);
	start();
	keyed_request(alpha, false, true, req);
	s = keyed_accepted("192.168.77.9", alpha, req);
	assert_true(rpmafs_auth_encrypts(s.auth));
	assert_logged(LOG_INFO, "accepting 192.168.77.9:5000", "key alpha, encrypt");
	send_proof(&s);
	send_sealed(&s, "secret one", 10, false, 0);
	read_one("secret one", 10);
	rpmafs_key_delete(&alpha);
	rpmafs_key_delete(&beta);
}

/* listen_protect = encrypt: a sender asking for mac is answered in encrypt mode */
static void listen_protect_encrypt(void **state)
{
	struct rpmafs_key *alpha = NULL, *beta = NULL;
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN];
	struct sender s;

	(void)state;
	with_keys(&alpha, &beta, true);
	start();
	keyed_request(alpha, true, false, req);
	s = keyed_accepted("192.168.77.9", alpha, req);
	assert_true(rpmafs_auth_encrypts(s.auth));
	send_proof(&s);
	send_sealed(&s, "secret two", 10, true, 1);
	read_one("secret two", 10);
	rpmafs_key_delete(&alpha);
	rpmafs_key_delete(&beta);
}

/* a request that proves no key of DIR's is rejected, logged and counted in auth_failures */
static void keyed_refusals(void **state)
{
	struct rpmafs_key *alpha = NULL, *beta = NULL;
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN], pd[RPMAFS_PDATA_MAX_LEN];
	size_t pd_len;

	(void)state;
	with_keys(&alpha, &beta, false);
	start();
	/* a plain librpma sender, then an rpmafs one without a key */
	request("192.168.77.9", NULL, 0);
	assert_logged(LOG_NOTICE, "rejected connection from 192.168.77.9:5000",
		"sender proves no key (no private data: a plain RDMA peer)");
	pd_len = rpmafs_pdata_encode(&(struct rpmafs_pdata){.max_message = MAX_MESSAGE}, pd);
	request("192.168.77.9", pd, (uint8_t)pd_len);
	assert_logged(LOG_NOTICE, "rejected connection from 192.168.77.9:5000",
		"sender proves no key (rpmafs private data without a key)");
	/* another key */
	keyed_request(beta, false, false, req);
	request("192.168.77.9", req, sizeof(req));
	assert_logged(LOG_NOTICE, "sender's key is not one of", F.keydir);
	/* a tampered request: its tag no longer matches */
	keyed_request(alpha, false, false, req);
	req[40] ^= 1;
	request("192.168.77.9", req, sizeof(req));
	assert_int_equal(stats().auth_failures, 4);
	/* a replay: the same request twice, the second refused */
	keyed_request(alpha, false, false, req);
	keyed_accepted("192.168.77.9", alpha, req);
	request("192.168.77.10", req, sizeof(req));
	assert_logged(LOG_NOTICE, "rejected connection from 192.168.77.10:5000",
		"replayed connect request (key alpha)");
	assert_int_equal(stats().auth_failures, 5);
	assert_int_equal(stats().rejected, 5);
	assert_int_equal(stats().connections, 1);
	assert_int_equal(fake_calls(FAKE_RDMA_ACCEPT), 1);
	rpmafs_key_delete(&alpha);
	rpmafs_key_delete(&beta);
}

/* an inbox without listen_keys refuses a sender that offers a key (it would take us for a forger) */
static void keyless_inbox_refuses_a_key(void **state)
{
	struct rpmafs_key *alpha = NULL, *beta = NULL;
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN];

	(void)state;
	with_keys(&alpha, &beta, false);
	rpmafs_keyring_delete(&F.cfg.keys);
	F.cfg.keys_dir[0] = '\0';
	start();
	keyed_request(alpha, true, false, req);
	request("192.168.77.9", req, sizeof(req));
	assert_logged(LOG_NOTICE, "rejected connection from 192.168.77.9:5000",
		"sender offers a key, this receiver has none");
	assert_int_equal(stats().auth_failures, 1);
	assert_int_equal(fake_calls(FAKE_RDMA_ACCEPT), 0);
	rpmafs_key_delete(&alpha);
	rpmafs_key_delete(&beta);
}

/*
 * a flipped bit in a message, or a first SEND that is not the proof: the
 * connection is dropped and counted; nothing from it is queued, not even
 * a good message that was behind the bad one; other senders go on
 */
static void keyed_bad_send_drops_the_connection(void **state)
{
	struct rpmafs_key *alpha = NULL, *beta = NULL;
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN], buf[5 + RPMAFS_AUTH_TAG_BYTES];
	struct sender s, t, u;

	(void)state;
	with_keys(&alpha, &beta, false);
	start();
	keyed_request(alpha, false, false, req);
	s = keyed_accepted("192.168.77.9", alpha, req);
	keyed_request(alpha, false, false, req);
	t = keyed_accepted("192.168.77.10", alpha, req);
	send_proof(&s);
	send_proof(&t);
	send_sealed(&s, "good", 4, false, 0);
	/* s's next SEND, its payload changed after it was sealed; then one sealed well */
	memcpy(buf, "bad!!", 5);
	rpmafs_auth_seal(s.auth, 0, buf, 5, buf + 5);
	buf[2] ^= 0x10;
	arrive(&s, buf, sizeof(buf), false, 0);
	memcpy(buf, "after", 5);
	rpmafs_auth_seal(s.auth, 0, buf, 5, buf + 5);
	arrive(&s, buf, sizeof(buf), false, 0);
	settle();
	assert_logged(LOG_NOTICE, "connection alpha@192.168.77.9:5000",
		"the tag of a SEND of 21 bytes is wrong (mac)");
	assert_int_equal(stats().auth_failures, 1);
	assert_int_equal(stats().connections, 1);
	assert_int_equal(stats().q.received, 1);
	assert_int_equal(srq_posted(), SLOTS - 1); /* only "good" holds a slot */
	s.id = NULL;				   /* gone with its connection */
	send_sealed(&t, "other", 5, false, 0);
	read_one("good", 4);
	read_one("other", 5);
	/* a first SEND that is a message, not the proof */
	keyed_request(alpha, false, false, req);
	u = keyed_accepted("192.168.77.11", alpha, req);
	arrive(&u, "0123456789abcdef", 16, true, 7);
	settle();
	assert_logged(LOG_NOTICE, "connection alpha@192.168.77.11:5000",
		"its first SEND (16 bytes, with immediate data) is not the proof of key");
	assert_int_equal(stats().auth_failures, 2);
	assert_int_equal(stats().q.received, 2);
	rpmafs_key_delete(&alpha);
	rpmafs_key_delete(&beta);
}

/* connect-and-idle: no proof within RPMAFS_AUTH_PROOF_TIMEOUT_MS, the tick drops it */
static void keyed_no_proof_in_time(void **state)
{
	struct rpmafs_key *alpha = NULL, *beta = NULL;
	uint8_t req[RPMAFS_AUTH_REQUEST_LEN];
	struct sender t;
	uint64_t at;

	(void)state;
	with_keys(&alpha, &beta, false);
	start();
	keyed_request(alpha, false, false, req);
	keyed_accepted("192.168.77.9", alpha, req); /* it sends nothing */
	at = L.armed;				    /* its deadline */
	assert_true(at > 0);
	keyed_request(alpha, false, false, req);
	t = keyed_accepted("192.168.77.10", alpha, req);
	send_proof(&t);
	assert_int_equal(inbox_tick(F.ib, at - 1), at); /* not yet: the deadline again */
	assert_int_equal(stats().connections, 2);
	assert_int_equal(inbox_tick(F.ib, at), 0); /* s dropped; t is proven: nothing left */
	settle();
	assert_logged(
		LOG_NOTICE, "connection alpha@192.168.77.9:5000", "no proof of key within 5000 ms");
	assert_int_equal(stats().connections, 1);
	assert_int_equal(stats().auth_failures, 1);
	send_sealed(&t, "still here", 10, false, 0);
	read_one("still here", 10);
	rpmafs_key_delete(&alpha);
	rpmafs_key_delete(&beta);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(receives_into_the_queue),
		T(zero_byte_message),
		T(zero_byte_message_raw),
		T(refuses_an_address_not_allowed),
		T(refuses_bad_private_data),
		T(message_over_the_limit),
		T(disconnect_keeps_what_arrived),
		T(disconnect_of_an_acknowledging_sender),
		T(acknowledges_what_was_read),
		T(acknowledges_the_prefix_read),
		T(holds_what_nobody_waits_for),
		T(session_resend_is_acknowledged_not_queued),
		T(held_resend_of_a_lost_connection),
		T(other_session_same_numbers_are_queued),
		T(version_1_sender_as_before),
		T(session_duplicate_acknowledged_in_order),
		T(failed_acknowledgement_closes),
		T(failed_accept_is_counted),
		T(listener_lost),
		T(delete_with_senders_connected),
		T(delete_wakes_a_parked_read),
		T(new_refusals),
		T(new_out_of_memory),
		T(keyed_sender_delivers),
		T(keyed_encrypt_delivers_plaintext),
		T(listen_protect_encrypt),
		T(keyed_refusals),
		T(keyless_inbox_refuses_a_key),
		T(keyed_bad_send_drops_the_connection),
		T(keyed_no_proof_in_time),
#undef T
	};

	/* libsodium's own allocations, once per process: before any test's baseline */
	assert_int_equal(rpmafs_auth_init(), 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
