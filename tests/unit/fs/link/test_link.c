// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_link.c -- fs/link.c against the fake RDMA provider (common-mocks)
 *
 * The real rpma library runs on the fake provider; the loop is a fake that
 * the test drives as the loop thread: it runs the watch callbacks, the
 * tasks handed over (the attempt's result, waited for as an event) and the
 * after-batch tasks. devices_get is a fake device with the pool registered.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "ack.h"
#include "auth.h"
#include "pdata.h"
#include "link/devices.h"
#include "link/link.h"
#include "link/linkack.h"
#include "link/linkauth.h"
#include "runtime/clock.h"
#include "runtime/loop.h"

/* ---- a fake loop, driven by the test ---- */

struct loop {
	int unused;
};

#define MAX_WATCH 8
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct loop_task *soon;
	struct loop_task *after;
	uint64_t armed;
	unsigned kicks, holds;
	struct {
		int fd;
		struct loop_watch *w;
	} watch[MAX_WATCH];
} L = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
static struct loop Loop;

void loop_arm(struct loop *loop, uint64_t at)
{
	(void)loop;
	pthread_mutex_lock(&L.lock);
	if (at && (!L.armed || at < L.armed))
		L.armed = at;
	pthread_mutex_unlock(&L.lock);
}

void loop_kick(struct loop *loop)
{
	(void)loop;
	L.kicks++;
}

void loop_run_soon(struct loop *loop, struct loop_task *t)
{
	(void)loop;
	pthread_mutex_lock(&L.lock);
	t->next = L.soon;
	L.soon = t;
	pthread_cond_broadcast(&L.cond);
	pthread_mutex_unlock(&L.lock);
}

void loop_after_batch(struct loop *loop, struct loop_task *t)
{
	(void)loop;
	t->next = L.after;
	L.after = t;
}

void loop_hold(struct loop *loop)
{
	(void)loop;
	pthread_mutex_lock(&L.lock);
	L.holds++;
	pthread_mutex_unlock(&L.lock);
}

void loop_release(struct loop *loop)
{
	(void)loop;
	pthread_mutex_lock(&L.lock);
	L.holds--;
	pthread_mutex_unlock(&L.lock);
}

int loop_watch(struct loop *loop, int fd, struct loop_watch *w)
{
	(void)loop;
	for (int i = 0; i < MAX_WATCH; i++)
		if (!L.watch[i].w) {
			L.watch[i].fd = fd;
			L.watch[i].w = w;
			return 0;
		}
	return -ENOSPC;
}

void loop_unwatch(struct loop *loop, int fd)
{
	(void)loop;
	for (int i = 0; i < MAX_WATCH; i++)
		if (L.watch[i].w && L.watch[i].fd == fd)
			L.watch[i].w = NULL;
}

static unsigned watches(void)
{
	unsigned n = 0;

	for (int i = 0; i < MAX_WATCH; i++)
		n += L.watch[i].w != NULL;
	return n;
}

/* the loop thread's batch: every watch whose fd is readable, then the after-batch tasks */
static void run_after_batch(void)
{
	while (L.after) {
		struct loop_task *t = L.after;

		L.after = t->next;
		t->fn(t->arg);
	}
}

static void run_watches(void)
{
	for (int i = 0; i < MAX_WATCH; i++) {
		struct loop_watch *w = L.watch[i].w;

		if (w)
			w->fn(w->arg);
	}
	run_after_batch();
}

/* wait (an event, not a time) for the attempt's thread to hand its result over, run it */
static void run_attempt_result(void)
{
	struct loop_task *t;

	pthread_mutex_lock(&L.lock);
	while (!L.soon)
		pthread_cond_wait(&L.cond, &L.lock);
	t = L.soon;
	L.soon = t->next;
	pthread_mutex_unlock(&L.lock);
	t->fn(t->arg);
	run_after_batch();
}

/* ---- a fake device, and the user's side of link_ops ---- */

static struct device Dev;
static int Dev_ret;
static char Pool[8192];

int devices_get(
	struct devices *devs, const char *address, struct device **dev, char *why, size_t whylen)
{
	(void)devs;
	(void)address;
	if (Dev_ret) {
		snprintf(why, whylen, "no device reaches it");
		return Dev_ret;
	}
	*dev = &Dev;
	return 0;
}

/* transitions move_locked refused: a link that tries one has a bug (teardown checks) */
static unsigned Refused_moves;
/* the session fallback's log lines, and the last of them */
static unsigned Fallback_logs;
static char Fallback_log[256];

void log_msg(int prio, const char *fmt, ...)
{
	(void)prio;
	if (strstr(fmt, "not a transition of the link"))
		Refused_moves++;
	if (strstr(fmt, "rejected the connect request with a session")) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(Fallback_log, sizeof(Fallback_log), fmt, ap);
		va_end(ap);
		Fallback_logs++;
	}
}

static struct {
	unsigned ups, downs[3], completion_calls, completions;
	uint32_t peer_max;
	unsigned credits;
	uint64_t wr_ids[64];
	char reason[256];
	unsigned outstanding; /* what the user says is still posted */
	unsigned acks, refused_acks;
	char lost[256]; /* the reason given with LINK_LOST */
	uint32_t acked;
	unsigned ack_credits;
	bool lazy; /* awaits: only while outstanding (else always, as without awaits) */
	uint64_t push_in_awaits; /* a completion that comes while awaits is asked (0: none) */
	unsigned awaits_asked;
	unsigned after_loss; /* completions given after LINK_LOST */
} U;

static void push_wc(uint64_t wr_id, enum ibv_wc_status status);

static bool awaits(void *ctx)
{
	(void)ctx;
	U.awaits_asked++;
	if (U.push_in_awaits) {
		push_wc(U.push_in_awaits, IBV_WC_SUCCESS);
		U.push_in_awaits = 0;
	}
	return !U.lazy || U.outstanding > 0;
}

static void on_ack(void *ctx, const struct rpmafs_ack *ack, unsigned unanswered)
{
	(void)ctx;
	(void)unanswered;
	if (!ack) {
		U.refused_acks++;
		return;
	}
	U.acks++;
	U.acked = ack->acked;
	U.ack_credits = ack->credits;
}

static void on_up(void *ctx, uint32_t peer_max, unsigned credits)
{
	(void)ctx;
	U.ups++;
	U.peer_max = peer_max;
	U.credits = credits;
}

static unsigned on_completions(void *ctx, const struct ibv_wc *wc, int n)
{
	(void)ctx;
	U.completion_calls++;
	if (U.downs[LINK_LOST])
		U.after_loss += (unsigned)n;
	for (int i = 0; i < n; i++) {
		if (U.completions < 64)
			U.wr_ids[U.completions] = wc[i].wr_id;
		U.completions++;
		if (U.outstanding)
			U.outstanding--;
	}
	return U.outstanding;
}

static unsigned on_down(void *ctx, enum link_down why, const char *reason)
{
	(void)ctx;
	U.downs[why]++;
	snprintf(U.reason, sizeof(U.reason), "%s", reason);
	if (why == LINK_LOST)
		snprintf(U.lost, sizeof(U.lost), "%s", reason);
	return U.outstanding;
}

static const struct link_ops Ops = {.on_up = on_up,
	.on_completions = on_completions,
	.on_down = on_down,
	.on_ack = on_ack,
	.awaits = awaits};

static struct rpmafs_peer_cfg Peer = {.name = "alpha",
	.address = UNIT_ADDR,
	.port = 7204,
	.type = RPMAFS_PEER_RDMA,
	.max_message = 4096,
	.send_timeout_ms = 5000,
	.connect_timeout_ms = 1000};

static struct link *Link;

static int setup(void **state)
{
	unit_setup(state);
	memset(&L.watch, 0, sizeof(L.watch));
	L.soon = L.after = NULL;
	L.armed = 0;
	L.kicks = L.holds = 0;
	memset(&U, 0, sizeof(U));
	Dev_ret = 0;
	Refused_moves = 0;
	Fallback_logs = 0;
	Fallback_log[0] = '\0';
	Dev.peer = fx_peer();
	assert_int_equal(
		rpma_mr_reg(Dev.peer, Pool, sizeof(Pool), RPMA_MR_USAGE_SEND, &Dev.pool_mr), 0);
	struct link_cfg cfg = {.peer = &Peer, .loop = &Loop, .window = 18, .ops = &Ops};
	assert_int_equal(link_new(&cfg, &Link), 0);
	return 0;
}

static int teardown(void **state)
{
	link_close(Link);
	run_after_batch();
	link_delete(&Link);
	assert_null(Link);
	assert_int_equal(rpma_mr_dereg(&Dev.pool_mr), 0);
	assert_int_equal(rpma_peer_delete(&Dev.peer), 0);
	assert_int_equal(L.holds, 0);
	assert_int_equal(Refused_moves, 0);
	return unit_teardown(state);
}

/* the receiver answers with an rpmafs header */
static void answer_established(uint32_t max, unsigned credits)
{
	uint8_t hdr[RPMAFS_PDATA_MAX_LEN];
	struct rpmafs_pdata pd = {.max_message = max, .credits = credits};
	size_t len = rpmafs_pdata_encode(&pd, hdr);

	fake_cm_auto_answer(true, RDMA_CM_EVENT_ESTABLISHED, hdr, len);
}

/* tick at now: an attempt starts; wait for it and run its result */
static void attempt(void)
{
	assert_int_equal(link_tick(Link, now_ms()), 0);
	assert_int_equal(link_state(Link), LINK_CONNECTING);
	run_attempt_result();
}

static void connect_up(void)
{
	answer_established(2048, 8);
	attempt();
	assert_int_equal(link_state(Link), LINK_UP);
}

/* the connection's CM ID: the one whose channel is watched */
static struct rdma_cm_id *the_id(void)
{
	struct rdma_cm_id *id = NULL;

	for (int i = 0; i < MAX_WATCH && !id; i++)
		if (L.watch[i].w)
			id = fake_cm_id_by_channel_fd(L.watch[i].fd);
	assert_non_null(id);
	return id;
}

static struct ibv_qp *the_qp(void)
{
	assert_non_null(the_id()->qp);
	return the_id()->qp;
}

static struct ibv_cq *the_cq(void)
{
	for (int i = 0; i < MAX_WATCH; i++) {
		struct ibv_cq *cq = L.watch[i].w ? fake_cq_by_channel_fd(L.watch[i].fd, 0) : NULL;

		if (cq)
			return cq;
	}
	fail_msg("no watched CQ");
	return NULL;
}

static void push_wc(uint64_t wr_id, enum ibv_wc_status status)
{
	struct ibv_wc wc = fx_wc(wr_id, IBV_WC_SEND, status);

	fake_cq_push_wc(the_cq(), &wc);
}

/* the receiver answers with an rpmafs header offering receiver confirmation */
static void connect_up_acked(void)
{
	uint8_t hdr[RPMAFS_PDATA_MAX_LEN];
	struct rpmafs_pdata pd = {.max_message = 2048, .credits = 8, .flags = RPMAFS_PDATA_F_ACK};
	size_t len = rpmafs_pdata_encode(&pd, hdr);

	fake_cm_auto_answer(true, RDMA_CM_EVENT_ESTABLISHED, hdr, len);
	attempt();
	assert_int_equal(link_state(Link), LINK_UP);
}

/* the receiver's bytes arrive in the acknowledgement receive i */
static void deliver_ack(unsigned i, const void *bytes, uint32_t len)
{
	struct fake_recv_wr r = fake_recv_get(the_qp(), i);
	struct ibv_wc wc = fx_wc(r.wr_id, IBV_WC_RECV, IBV_WC_SUCCESS);

	memcpy((void *)(uintptr_t)r.sge.addr, bytes, len < r.sge.length ? len : r.sge.length);
	wc.byte_len = len;
	fake_cq_push_wc(the_cq(), &wc);
	run_watches();
}

static void send_numbered(uint64_t wr_id, uint32_t num)
{
	assert_int_equal(link_post_imm(Link, LINK_SEND_EMPTY, 0, 0, wr_id, true, num), 0);
}

/* ---- the tests ---- */

static void new_link_waits_to_connect(void **state)
{
	(void)state;
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_string_equal(link_status(Link), "connecting");
	/* the first attempt is due at once: any now is past it */
	answer_established(0, 0);
	attempt();
	assert_string_equal(link_status(Link), "connected");
}

static void up_reports_receiver_limits(void **state)
{
	(void)state;
	connect_up();
	assert_int_equal(U.ups, 1);
	assert_int_equal(U.peer_max, 2048);
	assert_int_equal(U.credits, 8);
	assert_int_equal(watches(), 2); /* the CM event fd and the completion channel */
	assert_int_equal(L.holds, 0);
}

static void plain_receiver_reports_no_limit(void **state)
{
	(void)state;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	attempt();
	assert_int_equal(link_state(Link), LINK_UP);
	assert_int_equal(U.peer_max, 0);
	assert_int_equal(U.credits, 0);
}

static void sq_depth_is_window_plus_fence_and_spare(void **state)
{
	(void)state;
	connect_up();
	struct ibv_qp_init_attr a = fake_qp_attr(the_qp());

	assert_int_equal(a.cap.max_send_wr, LINK_SQ_DEPTH(18));
	assert_int_equal(LINK_SQ_DEPTH(LINK_WINDOW(16)), 16 + 4);
	/* and room for the completions of the acknowledgement receives */
	assert_int_equal(fake_last_cqe(), LINK_SQ_DEPTH(18) + 1 + LINKACK_RECVS);
}

/* confirm = receiver against a receiver that does not acknowledge: no silent downgrade */
static void receiver_confirmation_refused_retries_slowly(void **state)
{
	(void)state;
	Peer.confirm = RPMAFS_CONFIRM_RECEIVER;
	answer_established(2048, 8); /* an RPMF header without RPMAFS_PDATA_F_ACK */
	attempt();
	Peer.confirm = RPMAFS_CONFIRM_AUTO;
	assert_int_equal(link_state(Link), LINK_RETRY_SLOW);
	assert_non_null(strstr(U.reason, "confirm = receiver"));
	assert_false(link_acks(Link));
}

/* an offer taken: receives posted for acknowledgements, numbers in the immediate data */
static void acks_are_received_and_checked(void **state)
{
	uint8_t ack[RPMAFS_ACK_LEN];

	(void)state;
	connect_up_acked();
	assert_true(link_acks(Link));
	assert_int_equal(fake_last_connect().pdata[6], RPMAFS_PDATA_F_ACK); /* we offered */
	assert_int_equal(fake_recv_count(the_qp()), LINKACK_RECVS);
	send_numbered(1, 7);
	send_numbered(2, 8 | RPMAFS_IMM_PROMPT);
	struct fake_send_wr w = fake_send_get(the_qp(), 1);

	assert_int_equal(w.opcode, IBV_WR_SEND_WITH_IMM);
	assert_int_equal(ntohl(w.imm_data), 8 | RPMAFS_IMM_PROMPT);
	rpmafs_ack_encode(&(struct rpmafs_ack){8, 5, 0}, ack);
	deliver_ack(0, ack, sizeof(ack));
	assert_int_equal(U.acks, 1);
	assert_int_equal(U.acked, 8);
	assert_int_equal(U.ack_credits, 5);
	/* the receive is posted again */
	assert_int_equal(fake_recv_count(the_qp()), LINKACK_RECVS + 1);
	assert_int_equal(link_state(Link), LINK_UP);
}

static void hostile_ack(const void *bytes, uint32_t len, const char *why)
{
	connect_up_acked();
	send_numbered(1, 100);
	deliver_ack(0, bytes, len);
	assert_int_equal(U.acks, 0);
	assert_int_equal(U.refused_acks, 1);
	/* dropped: UP -> DRAINING (and at once BACKOFF, nothing being outstanding) */
	assert_int_equal(U.downs[LINK_LOST], 1);
	assert_int_not_equal(link_state(Link), LINK_UP);
	assert_non_null(strstr(U.lost, "acknowledgement refused"));
	if (!strstr(U.lost, why))
		fail_msg("reason \"%s\", want \"%s\"", U.lost, why);
}

static void ack_from_the_future_drops_the_connection(void **state)
{
	uint8_t ack[RPMAFS_ACK_LEN];

	(void)state;
	rpmafs_ack_encode(&(struct rpmafs_ack){101, 5, 0}, ack);
	hostile_ack(ack, sizeof(ack), "future");
}

static void wrapped_ack_drops_the_connection(void **state)
{
	uint8_t ack[RPMAFS_ACK_LEN];

	(void)state;
	rpmafs_ack_encode(&(struct rpmafs_ack){100 + (1u << 29) + 7, 5, 0}, ack);
	hostile_ack(ack, sizeof(ack), "before this connection");
}

static void garbage_ack_drops_the_connection(void **state)
{
	uint8_t junk[40];

	(void)state;
	memset(junk, 0x5a, sizeof(junk));
	hostile_ack(junk, sizeof(junk), "oversized");
}

static void malformed_ack_drops_the_connection(void **state)
{
	uint8_t junk[RPMAFS_ACK_LEN];

	(void)state;
	memset(junk, 0x5a, sizeof(junk));
	hostile_ack(junk, sizeof(junk), "magic");
}

/* confirm = transport: no offer, no receives, no numbers */
static void transport_offers_nothing(void **state)
{
	(void)state;
	Peer.confirm = RPMAFS_CONFIRM_TRANSPORT;
	connect_up_acked(); /* even a receiver that offers is not taken up on it */
	Peer.confirm = RPMAFS_CONFIRM_AUTO;
	assert_false(link_acks(Link));
	assert_int_equal(fake_last_connect().pdata[6], 0);
	assert_int_equal(fake_recv_count(the_qp()), 0);
	send_numbered(1, 5);
	assert_int_equal(fake_send_get(the_qp(), 0).opcode, IBV_WR_SEND);
}

/* ---- the sender's session (docs/design.md §8.6, §11) ---- */

#define SESSION 0x0123456789abcdefull

/* the link again, as a spool with session makes it */
static void relink(uint64_t session)
{
	link_close(Link);
	run_after_batch();
	link_delete(&Link);
	struct link_cfg cfg = {
		.peer = &Peer, .loop = &Loop, .window = 18, .session = session, .ops = &Ops};
	assert_int_equal(link_new(&cfg, &Link), 0);
}

/* what the last connect request carried */
static enum rpmafs_pdata_kind offered(struct rpmafs_pdata *pd)
{
	struct fake_conn_param c = fake_last_connect();

	return rpmafs_pdata_parse(c.pdata, c.param.private_data_len, pd, NULL);
}

/* the next attempt, once the back-off is over, against the current auto answer */
static void next_attempt(void)
{
	uint64_t due = link_tick(Link, 0);

	assert_true(due > 0);
	assert_int_equal(link_tick(Link, due), 0);
	run_attempt_result();
}

/* the next attempt meets a receiver that acknowledges */
static void connect_up_acked_next(void)
{
	uint8_t hdr[RPMAFS_PDATA_MAX_LEN];
	struct rpmafs_pdata pd = {.max_message = 2048, .credits = 8, .flags = RPMAFS_PDATA_F_ACK};
	size_t len = rpmafs_pdata_encode(&pd, hdr);

	fake_cm_auto_answer(true, RDMA_CM_EVENT_ESTABLISHED, hdr, len);
	next_attempt();
	assert_int_equal(link_state(Link), LINK_UP);
}

static int unsent(bool waited);

/* a confirming sender's request is version 2 with its session, every time */
static void session_is_offered_in_every_request(void **state)
{
	struct rpmafs_pdata pd;

	(void)state;
	relink(SESSION);
	assert_int_equal(link_session(Link), SESSION);
	connect_up_acked();
	assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
	assert_int_equal(fake_last_connect().param.private_data_len, RPMAFS_PDATA_LEN_2);
	assert_int_equal(fake_last_connect().pdata[4], RPMAFS_PDATA_VERSION_2);
	assert_int_equal(pd.session, SESSION);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_SESSION);
	/* the connection is lost: the next request offers the same session */
	link_drop(Link, "test", 0);
	link_tick(Link, now_ms()); /* the drain ends */
	run_after_batch();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	next_attempt();
	assert_int_equal(link_state(Link), LINK_UP);
	assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
	assert_int_equal(pd.session, SESSION);
	assert_int_equal(Fallback_logs, 0);
}

/* confirm = transport: a version 1 header, whatever session the link was given */
static void transport_offers_no_session(void **state)
{
	struct rpmafs_pdata pd;

	(void)state;
	relink(SESSION);
	Peer.confirm = RPMAFS_CONFIRM_TRANSPORT;
	connect_up();
	Peer.confirm = RPMAFS_CONFIRM_AUTO;
	assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
	assert_int_equal(fake_last_connect().param.private_data_len, RPMAFS_PDATA_LEN);
	assert_int_equal(pd.session, 0);
	assert_int_equal(pd.flags, 0);
}

/*
 * An older receiver refuses a version 2 header with rdma_reject: a
 * consumer reject (IB_CM_REJ_CONSUMER_DEFINED, 28). The link offers
 * version 1 on the next attempt, says so once, and connects. The fallback
 * lasts one attempt: a current receiver refusing for another reason (its
 * allow list, its connection limit) answers 28 too, and must not cost the
 * session for good.
 */
static void consumer_reject_of_a_session_falls_back_to_version_1(void **state)
{
	struct rpmafs_pdata pd;

	(void)state;
	relink(SESSION);
	fake_cm_auto_answer(true, RDMA_CM_EVENT_REJECTED, NULL, 0);
	fake_cm_auto_answer_status(28);
	attempt();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
	assert_int_equal(pd.session, SESSION); /* that one still offered it */
	assert_int_equal(link_session(Link), 0);
	assert_int_equal(Fallback_logs, 1);
	assert_non_null(strstr(Fallback_log, "alpha: "));
	assert_non_null(strstr(Fallback_log, UNIT_ADDR ":7204"));
	/* rejected again (for another reason): version 1 was tried */
	next_attempt();
	assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
	assert_int_equal(fake_last_connect().param.private_data_len, RPMAFS_PDATA_LEN);
	assert_int_equal(pd.session, 0);
	assert_int_equal(pd.flags, RPMAFS_PDATA_F_ACK); /* confirmation is still offered */
	/* ... and the attempt after it offers the session again */
	assert_int_equal(link_session(Link), SESSION);
	next_attempt();
	assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
	assert_int_equal(pd.session, SESSION);
	assert_int_equal(link_session(Link), 0);
	/* the older receiver takes version 1; the line was said once */
	fake_cm_auto_answer_status(0);
	uint8_t hdr[RPMAFS_PDATA_MAX_LEN];
	struct rpmafs_pdata acc = {.max_message = 2048, .credits = 8, .flags = RPMAFS_PDATA_F_ACK};
	size_t len = rpmafs_pdata_encode(&acc, hdr);

	fake_cm_auto_answer(true, RDMA_CM_EVENT_ESTABLISHED, hdr, len);
	next_attempt();
	assert_int_equal(link_state(Link), LINK_UP);
	assert_true(link_acks(Link));
	assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
	assert_int_equal(pd.session, 0);
	assert_int_equal(Fallback_logs, 1);
	/* the connection is lost: the next request offers the session first */
	assert_int_equal(link_session(Link), SESSION);
}

/*
 * Nobody listens (a receiver restarting): under Soft-RoCE a REJECTED with
 * IB_CM_REJ_INVALID_SERVICE_ID (8), on iWARP -ECONNREFUSED, or no answer
 * at all. None of them is a verdict on the header: the session stays, or
 * the re-sends after the restart would come without it and be written twice.
 */
static void reject_by_nobody_listening_keeps_the_session(void **state)
{
	static const int statuses[] = {8, -ECONNREFUSED, 0, 27};
	struct rpmafs_pdata pd;

	(void)state;
	relink(SESSION);
	fake_cm_auto_answer(true, RDMA_CM_EVENT_REJECTED, NULL, 0);
	for (unsigned i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		fake_cm_auto_answer_status(statuses[i]);
		if (i == 0)
			attempt();
		else
			next_attempt();
		assert_int_equal(link_state(Link), LINK_BACKOFF);
		assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
		assert_int_equal(pd.session, SESSION);
		assert_int_equal(link_session(Link), SESSION);
	}
	/* unreachable, with the consumer reject's number: not a reject either */
	fake_cm_auto_answer(true, RDMA_CM_EVENT_UNREACHABLE, NULL, 0);
	fake_cm_auto_answer_status(28);
	next_attempt();
	assert_int_equal(link_session(Link), SESSION);
	assert_int_equal(Fallback_logs, 0);
	/* the receiver is back: the same session */
	fake_cm_auto_answer_status(0);
	connect_up_acked_next();
	assert_int_equal(offered(&pd), RPMAFS_PDATA_OK);
	assert_int_equal(pd.session, SESSION);
}

/* a link without a session (transport, or no randomness): a reject changes nothing */
static void consumer_reject_without_a_session_is_only_a_reject(void **state)
{
	(void)state;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_REJECTED, NULL, 0);
	fake_cm_auto_answer_status(28);
	attempt();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(link_session(Link), 0);
	assert_int_equal(Fallback_logs, 0);
	assert_int_equal(unsent(false), ECONNREFUSED);
}

/* the default takes what the receiver offers, and a plain one is plain */
static void plain_receiver_is_transport_confirmed(void **state)
{
	(void)state;
	connect_up();
	assert_false(link_acks(Link));
}

static void malformed_pdata_retries_slowly(void **state)
{
	uint8_t bad[RPMAFS_PDATA_LEN] = {'R', 'P', 'M', 'F', 99};
	uint64_t before = now_ms();

	(void)state;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_ESTABLISHED, bad, sizeof(bad));
	attempt();
	assert_int_equal(link_state(Link), LINK_RETRY_SLOW);
	assert_string_equal(link_status(Link), "failed");
	assert_int_equal(U.downs[LINK_ATTEMPT_FAILED], 1);
	assert_non_null(strstr(U.reason, "private data refused"));
	/* retried only after the cap */
	assert_true(L.armed >= before + LINK_BACKOFF_CAP_MS);
	uint64_t next = link_tick(Link, now_ms());

	assert_true(next >= before + LINK_BACKOFF_CAP_MS);
	/* then it is reconnecting */
	answer_established(0, 0);
	assert_int_equal(link_tick(Link, next), 0);
	assert_string_equal(link_status(Link), "reconnecting");
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_UP);
}

static void rejected_attempt_backs_off(void **state)
{
	uint64_t t0 = now_ms();

	(void)state;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_REJECTED, NULL, 0);
	attempt();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_string_equal(link_status(Link), "reconnecting");
	assert_non_null(strstr(U.reason, "connection"));
	assert_true(L.armed >= t0 + LINK_BACKOFF_FIRST_MS);
	assert_true(L.armed <= now_ms() + LINK_BACKOFF_FIRST_MS);
}

/* the delay before attempt n+1 after n failures: 100, 200, 400, ..., 5000, 5000 */
static void backoff_doubles_to_the_cap(void **state)
{
	uint64_t expect[] = {100, 200, 400, 800, 1600, 3200, 5000, 5000};

	(void)state;
	Dev_ret = -EHOSTUNREACH;
	for (unsigned i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		uint64_t now = now_ms(), due;

		L.armed = 0;
		if (i == 0) {
			assert_int_equal(link_tick(Link, now), 0);
		} else {
			/* not yet due a tick before, due at the time */
			due = link_tick(Link, 0);
			assert_true(due > 0);
			assert_int_equal(link_tick(Link, due - 1), due);
			assert_int_equal(link_tick(Link, due), 0);
		}
		run_attempt_result();
		uint64_t after = now_ms();

		assert_int_equal(link_state(Link), LINK_BACKOFF);
		assert_true(L.armed >= now + expect[i]);
		assert_true(L.armed <= after + expect[i]);
	}
	assert_int_equal(U.downs[LINK_ATTEMPT_FAILED], 8);
}

static void backoff_resets_once_connected(void **state)
{
	(void)state;
	Dev_ret = -EHOSTUNREACH;
	attempt();
	uint64_t due = link_tick(Link, 0);

	assert_int_equal(link_tick(Link, due), 0);
	run_attempt_result(); /* second failure: next delay 400 */
	Dev_ret = 0;
	answer_established(0, 0);
	due = link_tick(Link, 0);
	assert_int_equal(link_tick(Link, due), 0);
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_UP);
	/* lost: back to the first delay */
	link_drop(Link, "test", 0);
	L.armed = 0;
	uint64_t t0 = now_ms();

	link_tick(Link, now_ms());
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_true(L.armed >= t0 + LINK_BACKOFF_FIRST_MS);
	assert_true(L.armed <= now_ms() + LINK_BACKOFF_FIRST_MS);
}

static void device_permission_error_is_permanent(void **state)
{
	(void)state;
	Dev_ret = -EPERM;
	attempt();
	assert_int_equal(link_state(Link), LINK_RETRY_SLOW);
	assert_string_equal(U.reason, "no device reaches it");
}

/* an attempt that cannot even start must be retried (it once never was) */
static void attempt_without_memory_is_retried(void **state)
{
	uint64_t t0 = now_ms();

	(void)state;
	alloc_fail_nth(1);
	assert_true(link_tick(Link, t0) >= t0 + LINK_BACKOFF_FIRST_MS);
	assert_true(alloc_fail_fired());
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(U.downs[LINK_ATTEMPT_FAILED], 1);
	assert_non_null(strstr(U.reason, "out of memory"));
	assert_true(L.armed >= t0 + LINK_BACKOFF_FIRST_MS);
	assert_int_equal(L.holds, 0);
	/* the retry is a real attempt */
	answer_established(0, 0);
	uint64_t due = link_tick(Link, 0);

	assert_int_equal(link_tick(Link, due), 0);
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_UP);
}

static void attempt_without_memory_doubles_backoff(void **state)
{
	(void)state;
	alloc_fail_nth(1);
	link_tick(Link, now_ms());
	uint64_t due = link_tick(Link, 0), t1 = now_ms();

	alloc_fail_nth(1);
	L.armed = 0;
	link_tick(Link, due);
	assert_true(L.armed >= t1 + 2 * LINK_BACKOFF_FIRST_MS);
}

static void send_posts_from_the_pool(void **state)
{
	(void)state;
	connect_up();
	assert_int_equal(link_post(Link, LINK_SEND, 100, 64, 7, true), 0);
	struct fake_send_wr wr = fake_send_get(the_qp(), 0);

	assert_int_equal(wr.opcode, IBV_WR_SEND);
	assert_int_equal(wr.wr_id, 7);
	assert_int_equal(wr.num_sge, 1);
	assert_int_equal(wr.sge.length, 64);
	assert_int_equal(wr.sge.addr, (uintptr_t)Pool + 100);
	assert_true(wr.send_flags & IBV_SEND_SIGNALED);
}

static void unsignaled_send(void **state)
{
	(void)state;
	connect_up();
	assert_int_equal(link_post(Link, LINK_SEND, 0, 8, 1, false), 0);
	assert_false(fake_send_get(the_qp(), 0).send_flags & IBV_SEND_SIGNALED);
}

static void empty_send_has_no_sge(void **state)
{
	(void)state;
	connect_up();
	assert_int_equal(link_post(Link, LINK_SEND_EMPTY, 0, 0, 3, true), 0);
	struct fake_send_wr wr = fake_send_get(the_qp(), 0);

	assert_int_equal(wr.opcode, IBV_WR_SEND);
	assert_int_equal(wr.num_sge, 0);
	assert_int_equal(wr.wr_id, 3);
}

static void fence_is_signaled_zero_byte_write(void **state)
{
	(void)state;
	connect_up();
	assert_int_equal(link_post(Link, LINK_FENCE, 0, 0, 9, false), 0);
	struct fake_send_wr wr = fake_send_get(the_qp(), 0);

	assert_int_equal(wr.opcode, IBV_WR_RDMA_WRITE);
	assert_true(wr.send_flags & IBV_SEND_SIGNALED);
	assert_int_equal(wr.num_sge, 0);
}

/* a batch: one ibv_post_send carrying the whole chain, in order */
static void batch_is_one_chain(void **state)
{
	struct link_send sends[3] = {
		{LINK_SEND, 100, 64, 11, false, 0, NULL},
		{LINK_SEND_EMPTY, 0, 0, 12, false, 0, NULL},
		{LINK_SEND, 4096, 8, 13, true, 0, NULL},
	};
	unsigned posted = 99, calls;

	(void)state;
	connect_up();
	calls = fake_calls(FAKE_IBV_POST_SEND);
	assert_int_equal(link_post_batch(Link, sends, 3, &posted), 0);
	assert_int_equal(posted, 3);
	assert_int_equal(fake_calls(FAKE_IBV_POST_SEND), calls + 1);
	assert_int_equal(fake_send_count(the_qp()), 3);
	struct fake_send_wr a = fake_send_get(the_qp(), 0), b = fake_send_get(the_qp(), 1),
			    c = fake_send_get(the_qp(), 2);

	assert_int_equal(a.wr_id, 11);
	assert_int_equal(a.opcode, IBV_WR_SEND);
	assert_int_equal(a.sge.addr, (uintptr_t)Pool + 100);
	assert_int_equal(a.sge.length, 64);
	assert_false(a.send_flags & IBV_SEND_SIGNALED);
	assert_int_equal(b.wr_id, 12);
	assert_int_equal(b.num_sge, 0);
	assert_int_equal(c.wr_id, 13);
	assert_int_equal(c.sge.addr, (uintptr_t)Pool + 4096);
	assert_true(c.send_flags & IBV_SEND_SIGNALED);
}

static void batch_failure_posts_nothing_more(void **state)
{
	struct link_send sends[2] = {
		{LINK_SEND, 0, 8, 1, true, 0, NULL}, {LINK_SEND, 8, 8, 2, true, 0, NULL}};
	unsigned posted = 99;

	(void)state;
	connect_up();
	fake_fail(FAKE_IBV_POST_SEND, 1, ENOMEM);
	assert_int_equal(link_post_batch(Link, sends, 2, &posted), RPMA_E_PROVIDER);
	assert_int_equal(posted, 0);
	assert_int_equal(fake_send_count(the_qp()), 0);
	/* out of the pool: refused before anything is posted */
	sends[1].offset = (size_t)1 << 40;
	assert_int_equal(link_post_batch(Link, sends, 2, &posted), RPMA_E_INVAL);
	assert_int_equal(fake_send_count(the_qp()), 0);
}

static void batch_refused_when_not_up(void **state)
{
	struct link_send one = {LINK_SEND, 0, 8, 1, true, 0, NULL};
	unsigned posted = 99;

	(void)state;
	assert_int_not_equal(link_post_batch(Link, &one, 1, &posted), 0);
	assert_int_equal(posted, 0);
}

/* receiver-confirmed: every send of the chain carries its number, as link_post_imm's */
static void batch_on_an_acked_connection_carries_each_imm(void **state)
{
	struct link_send sends[3] = {
		{LINK_SEND, 0, 8, 21, false, 1, NULL},
		{LINK_SEND_EMPTY, 0, 0, 22, false, 2, NULL},
		{LINK_SEND, 8, 8, 23, true, 3 | RPMAFS_IMM_PROMPT, NULL},
	};
	uint8_t ack[RPMAFS_ACK_LEN];
	unsigned posted = 99, calls;

	(void)state;
	connect_up_acked();
	calls = fake_calls(FAKE_IBV_POST_SEND);
	assert_int_equal(link_post_batch(Link, sends, 3, &posted), 0);
	assert_int_equal(posted, 3);
	assert_int_equal(fake_calls(FAKE_IBV_POST_SEND), calls + 1);
	for (unsigned i = 0; i < 3; i++) {
		struct fake_send_wr w = fake_send_get(the_qp(), i);

		assert_int_equal(w.opcode, IBV_WR_SEND_WITH_IMM);
		assert_int_equal(ntohl(w.imm_data), sends[i].imm);
		assert_int_equal(w.wr_id, sends[i].wr_id);
	}
	/* recorded as sent: an acknowledgement of the last is true */
	rpmafs_ack_encode(&(struct rpmafs_ack){3, 5, 0}, ack);
	deliver_ack(0, ack, sizeof(ack));
	assert_int_equal(U.acks, 1);
	assert_int_equal(U.acked, 3);
	assert_int_equal(link_state(Link), LINK_UP);
}

/* a chain the queue took only part of: only that part counts as sent */
static void batch_cut_short_records_only_what_went(void **state)
{
	struct link_send sends[3] = {
		{LINK_SEND, 0, 8, 31, false, 1, NULL},
		{LINK_SEND, 8, 8, 32, false, 2, NULL},
		{LINK_SEND, 16, 8, 33, true, 3, NULL},
	};
	uint8_t ack[RPMAFS_ACK_LEN];
	unsigned posted = 99;

	(void)state;
	connect_up_acked();
	fake_fail_send_chain(2, ENOMEM);
	assert_int_equal(link_post_batch(Link, sends, 3, &posted), RPMA_E_PROVIDER);
	assert_int_equal(posted, 2);
	assert_int_equal(fake_send_count(the_qp()), 2);
	/* number 3 never went out: an acknowledgement of it cannot be true */
	rpmafs_ack_encode(&(struct rpmafs_ack){3, 5, 0}, ack);
	deliver_ack(0, ack, sizeof(ack));
	assert_int_equal(U.acks, 0);
	assert_int_equal(U.refused_acks, 1);
	assert_non_null(strstr(U.lost, "future"));
}

/* ... and 2 did: acknowledged, fine */
static void batch_cut_short_keeps_what_went(void **state)
{
	struct link_send sends[2] = {
		{LINK_SEND, 0, 8, 41, false, 1, NULL}, {LINK_SEND, 8, 8, 42, true, 2, NULL}};
	uint8_t ack[RPMAFS_ACK_LEN];
	unsigned posted = 99;

	(void)state;
	connect_up_acked();
	fake_fail_send_chain(1, ENOMEM);
	assert_int_equal(link_post_batch(Link, sends, 2, &posted), RPMA_E_PROVIDER);
	assert_int_equal(posted, 1);
	rpmafs_ack_encode(&(struct rpmafs_ack){1, 5, 0}, ack);
	deliver_ack(0, ack, sizeof(ack));
	assert_int_equal(U.acks, 1);
	assert_int_equal(link_state(Link), LINK_UP);
}

static void batch_refuses_a_fence(void **state)
{
	struct link_send f = {LINK_FENCE, 0, 0, 1, true, 0, NULL};
	unsigned posted = 99;

	(void)state;
	connect_up();
	assert_int_equal(link_post_batch(Link, &f, 1, &posted), RPMA_E_INVAL);
	assert_int_equal(posted, 0);
	assert_int_equal(fake_send_count(the_qp()), 0);
}

static void post_refused_when_not_up(void **state)
{
	(void)state;
	assert_int_not_equal(link_post(Link, LINK_SEND, 0, 8, 1, true), 0);
}

static void completions_reach_the_user_in_order(void **state)
{
	(void)state;
	connect_up();
	for (uint64_t id = 1; id <= 5; id++)
		push_wc(id, IBV_WC_SUCCESS);
	run_watches();
	assert_int_equal(U.completions, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(U.wr_ids[i], i + 1);
}

static void completions_are_reaped_in_batches(void **state)
{
	(void)state;
	connect_up();
	for (uint64_t id = 1; id <= 40; id++)
		push_wc(id, IBV_WC_SUCCESS);
	run_watches();
	assert_int_equal(U.completions, 40);
	assert_int_equal(U.completion_calls, 2); /* 32 + 8 */
}

static void spurious_wakeup_is_harmless(void **state)
{
	(void)state;
	connect_up();
	run_watches();
	assert_int_equal(U.completions, 0);
	assert_int_equal(link_state(Link), LINK_UP);
}

/*
 * link_reap (a FUSE worker awaiting its sync write): the completions
 * already in the CQ go to the user as the loop would give them, one batch
 * a call, in order; the loop's later wake-up finds nothing left.
 */
static void worker_reap_gives_completions_in_order(void **state)
{
	(void)state;
	assert_int_equal(link_reap(Link), -1); /* not up: nothing to reap from */
	connect_up();
	assert_int_equal(link_reap(Link), 0);
	for (uint64_t id = 1; id <= 40; id++)
		push_wc(id, IBV_WC_SUCCESS);
	assert_int_equal(link_reap(Link), 32);
	assert_int_equal(U.completions, 32);
	push_wc(41, IBV_WC_SUCCESS);
	run_watches(); /* the loop: the rest, after what the worker took */
	assert_int_equal(U.completions, 41);
	for (unsigned i = 0; i < 41; i++)
		assert_int_equal(U.wr_ids[i], i + 1);
	assert_int_equal(link_reap(Link), 0);
	assert_int_equal(link_state(Link), LINK_UP);
}

/*
 * A refused acknowledgement reaped by a worker drops the connection; with
 * nothing outstanding the drain is over, but the descriptors are the
 * loop's: it ends at the loop's next tick (kicked), not on the worker.
 */
static void worker_reap_leaves_the_end_of_a_drain_to_the_loop(void **state)
{
	uint8_t junk[RPMAFS_ACK_LEN];
	struct fake_recv_wr r;
	struct ibv_wc wc;
	unsigned kicks;

	(void)state;
	connect_up_acked();
	send_numbered(1, 100);
	memset(junk, 0x5a, sizeof(junk));
	r = fake_recv_get(the_qp(), 0);
	wc = fx_wc(r.wr_id, IBV_WC_RECV, IBV_WC_SUCCESS);
	memcpy((void *)(uintptr_t)r.sge.addr, junk, sizeof(junk));
	wc.byte_len = sizeof(junk);
	fake_cq_push_wc(the_cq(), &wc);
	kicks = L.kicks;
	assert_int_equal(link_reap(Link), -1);
	assert_int_equal(U.refused_acks, 1);
	assert_int_equal(U.downs[LINK_LOST], 1);
	assert_int_equal(link_state(Link), LINK_DRAINING);
	assert_int_equal(U.downs[LINK_DRAINED], 0);
	assert_int_equal(watches(), 2); /* still watched: not unwatched off the loop */
	assert_true(L.kicks > kicks);
	assert_int_equal(link_reap(Link), -1); /* not up any more */
	link_tick(Link, now_ms());
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(U.downs[LINK_DRAINED], 1);
	assert_int_equal(watches(), 0);
	run_after_batch();
	assert_int_equal(fake_live(FAKE_QP), 0);
}

/*
 * The CQ armed on demand (link_settle, docs/design.md §8.4): a completion
 * the poster finds at once is reaped by it, and with nothing awaited the
 * CQ is left unarmed, so that it wakes nobody; a send still to complete
 * arms it, and its event wakes the loop, which reaps it and disarms.
 */
static void settle_arms_only_while_a_completion_is_awaited(void **state)
{
	unsigned polls, arms, events;

	(void)state;
	U.lazy = true;
	connect_up();
	assert_true(fake_cq_armed(the_cq())); /* as made */
	/* nothing posted: settling is an atomic load, no poll */
	polls = fake_calls(FAKE_IBV_POLL_CQ);
	link_settle(Link);
	assert_int_equal(fake_calls(FAKE_IBV_POLL_CQ), polls);

	/* armed as made: the first completion raises an event; the poster reaps it */
	assert_int_equal(link_post(Link, LINK_SEND, 0, 8, 1, true), 0);
	U.outstanding = 1;
	push_wc(1, IBV_WC_SUCCESS);
	link_settle(Link);
	assert_int_equal(U.completions, 1);
	run_watches(); /* the event: nothing left, nothing awaited, not re-armed */
	assert_false(fake_cq_armed(the_cq()));

	/* completed inside the post: reaped by the poster, no event, no arm */
	arms = fake_calls(FAKE_IBV_REQ_NOTIFY_CQ);
	events = fake_cq_events_got(the_cq());
	assert_int_equal(link_post(Link, LINK_SEND, 0, 8, 2, true), 0);
	U.outstanding = 1;
	push_wc(2, IBV_WC_SUCCESS);
	link_settle(Link);
	assert_int_equal(U.completions, 2);
	assert_int_equal(U.wr_ids[1], 2);
	assert_int_equal(fake_calls(FAKE_IBV_REQ_NOTIFY_CQ), arms);
	assert_int_equal(fake_cq_events_got(the_cq()), events);
	assert_false(fake_cq_armed(the_cq()));

	/* still to complete: armed, and its completion wakes the loop */
	assert_int_equal(link_post(Link, LINK_SEND, 0, 8, 3, true), 0);
	U.outstanding = 1;
	link_settle(Link);
	assert_true(fake_cq_armed(the_cq()));
	push_wc(3, IBV_WC_SUCCESS);
	run_watches();
	assert_int_equal(U.completions, 3);
	assert_int_equal(fake_cq_events_got(the_cq()), events + 1);
	assert_false(fake_cq_armed(the_cq()));
	assert_int_equal(link_state(Link), LINK_UP);
}

/* a completion that comes between the poll and the arm raises no event: reaped after the arm */
static void completion_before_the_arm_is_reaped_after_it(void **state)
{
	(void)state;
	U.lazy = true;
	connect_up();
	push_wc(1, IBV_WC_SUCCESS); /* armed as made: takes the event ... */
	run_watches();		    /* ... and the loop leaves the CQ unarmed */
	assert_false(fake_cq_armed(the_cq()));
	assert_int_equal(link_post(Link, LINK_SEND, 0, 8, 2, true), 0);
	U.outstanding = 1;
	U.push_in_awaits = 2;
	link_settle(Link);
	assert_int_equal(U.completions, 2);
	assert_int_equal(U.wr_ids[1], 2);
	assert_true(fake_cq_armed(the_cq())); /* awaited when asked: armed */
}

/* the loop's event with a send still outstanding re-arms, as every wait did before */
static void event_with_sends_outstanding_rearms(void **state)
{
	(void)state;
	U.lazy = true;
	connect_up();
	assert_int_equal(link_post(Link, LINK_SEND, 0, 8, 1, false), 0);
	assert_int_equal(link_post(Link, LINK_SEND, 0, 8, 2, true), 0);
	U.outstanding = 3;
	push_wc(2, IBV_WC_SUCCESS);
	run_watches();
	assert_int_equal(U.completions, 1);
	assert_true(fake_cq_armed(the_cq()));
}

static void arm_failure_drops_the_connection(void **state)
{
	(void)state;
	U.lazy = true;
	connect_up();
	push_wc(1, IBV_WC_SUCCESS);
	run_watches();
	assert_int_equal(link_post(Link, LINK_SEND, 0, 8, 2, true), 0);
	U.outstanding = 1;
	fake_fail(FAKE_IBV_REQ_NOTIFY_CQ, 1, EIO);
	link_settle(Link);
	assert_int_equal(link_state(Link), LINK_DRAINING);
	assert_string_equal(U.lost, "cannot arm the completion queue");
}

/*
 * A completion in an unarmed CQ when the peer disconnects (rpma-recv
 * --count acknowledges its last message, then closes): the user gets it
 * before the loss, not never (with nothing outstanding the drain ends at
 * once, and the CQ with it; a lab run lost the last acknowledgement so).
 */
static void completion_before_a_disconnect_is_reaped_first(void **state)
{
	(void)state;
	U.lazy = true;
	connect_up();
	push_wc(1, IBV_WC_SUCCESS); /* armed as made: the event ... */
	run_watches();		    /* ... and the CQ left unarmed */
	assert_false(fake_cq_armed(the_cq()));
	push_wc(2, IBV_WC_SUCCESS); /* no event */
	struct rdma_cm_id *id = the_id();

	fake_cm_push_event(id->channel->fd, id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
	run_watches();
	assert_int_equal(U.completions, 2);
	assert_int_equal(U.wr_ids[1], 2);
	assert_int_equal(U.after_loss, 0);
	assert_int_equal(U.downs[LINK_LOST], 1);
	assert_int_equal(link_state(Link), LINK_BACKOFF); /* nothing outstanding: drained */
}

static void disconnect_event_drains(void **state)
{
	(void)state;
	connect_up();
	U.outstanding = 2;
	struct rdma_cm_id *id = the_id();

	fake_cm_push_event(id->channel->fd, id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
	run_watches();
	assert_int_equal(link_state(Link), LINK_DRAINING);
	assert_string_equal(link_status(Link), "reconnecting");
	assert_int_equal(U.downs[LINK_LOST], 1);
	/* the flushes come in: once nothing is outstanding the drain ends */
	push_wc(1, IBV_WC_WR_FLUSH_ERR);
	run_watches();
	assert_int_equal(link_state(Link), LINK_DRAINING);
	push_wc(2, IBV_WC_WR_FLUSH_ERR);
	run_watches();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(U.downs[LINK_DRAINED], 1);
	assert_int_equal(watches(), 0);
	assert_int_equal(fake_live(FAKE_QP), 0); /* freed after the batch */
}

static void drop_with_nothing_outstanding_ends_at_next_tick(void **state)
{
	(void)state;
	connect_up();
	unsigned kicks = L.kicks;

	link_drop(Link, "send failed", 0);
	assert_int_equal(link_state(Link), LINK_DRAINING);
	assert_int_equal(U.downs[LINK_LOST], 0); /* the user said so: no callback */
	assert_true(L.kicks > kicks);
	uint64_t next = link_tick(Link, now_ms());

	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(U.downs[LINK_DRAINED], 1);
	assert_true(next >= now_ms());
	run_after_batch();
}

static void drain_ends_after_the_grace(void **state)
{
	(void)state;
	connect_up();
	uint64_t t0 = now_ms();

	link_drop(Link, "silent", 3);
	uint64_t grace = link_tick(Link, now_ms());

	assert_true(grace >= t0 + LINK_TEARDOWN_GRACE_MS);
	assert_int_equal(link_state(Link), LINK_DRAINING);
	link_tick(Link, grace);
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(U.downs[LINK_DRAINED], 1);
	run_after_batch();
}

static void drop_twice_is_one_drain(void **state)
{
	(void)state;
	connect_up();
	link_drop(Link, "a", 1);
	link_drop(Link, "b", 0);
	assert_int_equal(link_state(Link), LINK_DRAINING);
	push_wc(1, IBV_WC_WR_FLUSH_ERR);
	U.outstanding = 1;
	run_watches();
	assert_int_equal(U.downs[LINK_DRAINED], 1);
}

static void reconnects_after_drain(void **state)
{
	(void)state;
	connect_up();
	link_drop(Link, "x", 0);
	uint64_t due = link_tick(Link, now_ms());

	run_after_batch();
	answer_established(0, 0);
	assert_int_equal(link_tick(Link, due), 0);
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_UP);
	assert_int_equal(U.ups, 2);
}

static void stopped_link_makes_no_attempt(void **state)
{
	(void)state;
	link_stop(Link);
	assert_int_equal(link_tick(Link, now_ms()), 0);
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(fake_calls(FAKE_RDMA_CONNECT), 0);
}

static void attempt_ending_after_stop_is_discarded(void **state)
{
	(void)state;
	answer_established(0, 0);
	link_tick(Link, now_ms());
	link_stop(Link);
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(U.ups, 0);
	assert_int_equal(fake_live(FAKE_QP), 0);
}

static void stop_during_drain_schedules_nothing(void **state)
{
	(void)state;
	connect_up();
	link_drop(Link, "x", 0);
	link_stop(Link);
	assert_int_equal(link_tick(Link, now_ms()), 0);
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	run_after_batch();
}

static void close_frees_the_connection(void **state)
{
	(void)state;
	connect_up();
	link_close(Link);
	assert_int_equal(fake_live(FAKE_QP), 0);
	assert_int_equal(watches(), 0);
	assert_int_equal(link_state(Link), LINK_CLOSED);
}

/* the unmount transition: nothing leaves CLOSED, whatever is asked of the link */
static void closed_link_stays_closed(void **state)
{
	unsigned connects;

	(void)state;
	connect_up();
	link_close(Link);
	connects = fake_calls(FAKE_RDMA_CONNECT);
	assert_int_equal(link_tick(Link, now_ms() + 60000), 0);
	link_drop(Link, "x", 0);
	link_close(Link); /* twice: nothing more */
	assert_int_equal(link_state(Link), LINK_CLOSED);
	assert_int_equal(fake_calls(FAKE_RDMA_CONNECT), connects);
	assert_int_equal(U.downs[LINK_LOST] + U.downs[LINK_DRAINED], 0);
	assert_int_not_equal(link_post(Link, LINK_SEND_EMPTY, 0, 0, 1, true), 0);
}

/* every state but CLOSED goes to CLOSED at unmount */
static void close_from_backoff_draining_and_retry_slow(void **state)
{
	uint8_t bad[RPMAFS_PDATA_LEN] = {'R', 'P', 'M', 'F', 99};
	struct link_cfg cfg = {.peer = &Peer, .loop = &Loop, .window = 18, .ops = &Ops};
	struct link *other;

	(void)state;
	/* BACKOFF: never tried */
	assert_int_equal(link_new(&cfg, &other), 0);
	assert_int_equal(link_state(other), LINK_BACKOFF);
	link_close(other);
	assert_int_equal(link_state(other), LINK_CLOSED);
	link_delete(&other);
	/* DRAINING: dropped with a send outstanding */
	connect_up();
	assert_int_equal(link_post(Link, LINK_SEND_EMPTY, 0, 0, 1, true), 0);
	link_drop(Link, "x", 1);
	assert_int_equal(link_state(Link), LINK_DRAINING);
	link_close(Link);
	assert_int_equal(link_state(Link), LINK_CLOSED);
	assert_int_equal(watches(), 0);
	run_after_batch();
	link_delete(&Link);
	/* RETRY_SLOW: an attempt retrying alone will not mend */
	assert_int_equal(link_new(&cfg, &Link), 0);
	fake_cm_auto_answer(true, RDMA_CM_EVENT_ESTABLISHED, bad, sizeof(bad));
	attempt();
	assert_int_equal(link_state(Link), LINK_RETRY_SLOW);
	link_close(Link);
	assert_int_equal(link_state(Link), LINK_CLOSED);
	assert_int_equal(link_tick(Link, now_ms() + 60000), 0);
}

/* closed while an attempt runs: its connection is discarded, CLOSED -> UP is not taken */
static void close_during_an_attempt_discards_it(void **state)
{
	(void)state;
	answer_established(0, 0);
	assert_int_equal(link_tick(Link, now_ms()), 0);
	assert_int_equal(link_state(Link), LINK_CONNECTING);
	link_close(Link);
	assert_int_equal(link_state(Link), LINK_CLOSED);
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_CLOSED);
	assert_int_equal(U.ups, 0);
	assert_int_equal(U.downs[LINK_ATTEMPT_FAILED], 0);
	assert_int_equal(fake_live(FAKE_QP), 0);
	assert_int_equal(watches(), 0);
}

/* the table: what it lists is allowed, anything else refused */
static void table_refuses_what_it_does_not_list(void **state)
{
	(void)state;
	/* the unmount transition, from every state but CLOSED */
	for (int s = 0; s < LINK_STATES; s++)
		assert_int_equal(link_may_move(s, LINK_CLOSED), s != LINK_CLOSED);
	/* nothing leaves CLOSED */
	for (int s = 0; s < LINK_STATES; s++)
		assert_false(link_may_move(LINK_CLOSED, s));
	/* the cycle */
	assert_true(link_may_move(LINK_BACKOFF, LINK_CONNECTING));
	assert_true(link_may_move(LINK_CONNECTING, LINK_UP));
	assert_true(link_may_move(LINK_UP, LINK_DRAINING));
	assert_true(link_may_move(LINK_DRAINING, LINK_BACKOFF));
	assert_true(link_may_move(LINK_CONNECTING, LINK_RETRY_SLOW));
	assert_true(link_may_move(LINK_RETRY_SLOW, LINK_CONNECTING));
	/* a few that are not transitions */
	assert_false(link_may_move(LINK_UP, LINK_CONNECTING));
	assert_false(link_may_move(LINK_BACKOFF, LINK_UP));
	assert_false(link_may_move(LINK_DRAINING, LINK_UP));
	assert_false(link_may_move(LINK_RETRY_SLOW, LINK_UP));
	assert_false(link_may_move(LINK_UP, LINK_BACKOFF));
	assert_false(link_may_move(LINK_UP, LINK_UP));
	assert_string_equal(link_state_name(LINK_RETRY_SLOW), "RETRY_SLOW");
}

/* what a write that cannot be sent reports: the errno says what happened */
static char Why[256];

static int unsent(bool waited)
{
	return link_unsent(Link, waited, "not connected", Why, sizeof(Why));
}

static void unsent_errno_before_any_attempt(void **state)
{
	(void)state;
	assert_int_equal(unsent(false), ENOTCONN);
	assert_int_equal(unsent(true), ETIMEDOUT);
	assert_string_equal(Why, "not connected");
}

static void unsent_errno_after_a_rejection(void **state)
{
	(void)state;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_REJECTED, NULL, 0);
	attempt();
	assert_int_equal(unsent(false), ECONNREFUSED);
	assert_int_equal(unsent(true), ECONNREFUSED);
	assert_non_null(strstr(Why, "not connected (last attempt: connection "));
	assert_non_null(strstr(Why, "Connection rejected"));
	/* no key = here: the hint names a receiver that wants one among the causes */
	assert_non_null(strstr(Why, "or it wants a key and no key = is set"));
}

static void unsent_errno_when_unreachable(void **state)
{
	(void)state;
	Dev_ret = -EHOSTUNREACH;
	attempt();
	assert_int_equal(unsent(true), EHOSTUNREACH);
	assert_int_equal(unsent(false), EHOSTUNREACH);
}

static void unsent_errno_cm_unreachable(void **state)
{
	(void)state;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_UNREACHABLE, NULL, 0);
	attempt();
	assert_int_equal(unsent(false), EHOSTUNREACH);
}

static void unsent_errno_forgets_causes_once_up(void **state)
{
	(void)state;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_REJECTED, NULL, 0);
	attempt();
	answer_established(0, 0);
	uint64_t due = link_tick(Link, 0);

	assert_int_equal(link_tick(Link, due), 0);
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_UP);
	link_drop(Link, "test", 0);
	assert_int_equal(unsent(false), ENOTCONN);
	assert_int_equal(unsent(true), ETIMEDOUT);
}

/*
 * At most LINK_MAX_ATTEMPTS attempts at once in the process: one more due
 * link stays LINK_BACKOFF ("connecting") until an attempt ends, which arms
 * the tick at once; then it starts.
 */
static void attempts_bounded_across_links(void **state)
{
	struct link *others[LINK_MAX_ATTEMPTS];
	struct link_cfg cfg = {.peer = &Peer, .loop = &Loop, .window = 18, .ops = &Ops};

	(void)state;
	Dev_ret = -EHOSTUNREACH; /* each attempt fails at once, in its thread */
	for (unsigned i = 0; i < LINK_MAX_ATTEMPTS; i++) {
		assert_int_equal(link_new(&cfg, &others[i]), 0);
		assert_int_equal(link_tick(others[i], now_ms()), 0);
		assert_int_equal(link_state(others[i]), LINK_CONNECTING);
	}
	L.armed = 0;
	assert_int_equal(link_tick(Link, now_ms()), 0);
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_string_equal(link_status(Link), "connecting");
	assert_int_equal(L.holds, LINK_MAX_ATTEMPTS);
	assert_int_equal(L.armed, 0);
	/* one attempt's result: a slot is free and the tick is due now */
	run_attempt_result();
	assert_int_equal(L.armed, 1);
	assert_int_equal(link_tick(Link, now_ms()), 0);
	assert_int_equal(link_state(Link), LINK_CONNECTING);
	for (unsigned i = 0; i < LINK_MAX_ATTEMPTS; i++)
		run_attempt_result();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_int_equal(U.downs[LINK_ATTEMPT_FAILED], LINK_MAX_ATTEMPTS + 1);
	for (unsigned i = 0; i < LINK_MAX_ATTEMPTS; i++) {
		link_close(others[i]);
		run_after_batch();
		link_delete(&others[i]);
	}
}

/* ---- key = (issue 25, §11.2): the sender's side of authenticated peers ---- */

/* loaded once, in main, before any test's allocation count starts (key.c's strdup) */
static struct rpmafs_key *Alpha, *Other;

static struct {
	struct rpmafs_key *recv_key; /* the receiver's (Alpha, or Other) */
	struct rpmafs_auth *recv;    /* the receiver's state of the connection */
	bool plain;		     /* answer with a version 2 header, no key */
	bool encrypt;		     /* the receiver's --protect encrypt */
} R;

static struct rpmafs_key *make_key(const char *name, uint8_t fill)
{
	char path[128];
	uint8_t k[RPMAFS_AUTH_KEY_BYTES];
	struct rpmafs_key *key = NULL;
	char err[256];
	FILE *f;

	memset(k, fill, sizeof(k));
	snprintf(path, sizeof(path), "/tmp/rpmafs-test-link-%d-%s.key", (int)getpid(), name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(k, 1, sizeof(k), f), sizeof(k));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0600), 0);
	if (rpmafs_key_load(path, NULL, &key, err, sizeof(err)))
		fail_msg("%s", err);
	unlink(path);
	return key;
}

/* the receiver with keys (rpma-recv --keys) answering the request it got */
static uint8_t answer_auth(const void *req, uint8_t len, uint8_t *out)
{
	struct rpmafs_pdata ours = {.max_message = 2048, .credits = 8, .flags = RPMAFS_PDATA_F_ACK};

	if (R.plain || len != RPMAFS_AUTH_REQUEST_LEN)
		return (uint8_t)rpmafs_pdata_encode(&ours, out);
	rpmafs_auth_delete(&R.recv);
	assert_int_equal(
		rpmafs_auth_accept_encode(R.recv_key, req, &ours, R.encrypt, out, &R.recv), 0);
	return RPMAFS_AUTH_ACCEPT_LEN;
}

static void auth_attempt(uint8_t recv_fill)
{
	Peer.key = Alpha;
	R.recv_key = recv_fill == 0xa5 ? Alpha : Other;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	fake_cm_auto_answer_fn(answer_auth);
	attempt();
}

static void auth_done(void)
{
	fake_cm_auto_answer_fn(NULL);
	rpmafs_auth_delete(&R.recv);
	R.recv_key = NULL;
	Peer.key = NULL;
	Peer.protect = RPMAFS_PROTECT_MAC;
	R.plain = R.encrypt = false;
}

/* send i as the receiver gets it: its bytes (payload and tag) opened with R.recv */
static int open_send(unsigned i, uint32_t *payload_len)
{
	struct fake_send_wr w = fake_send_get(the_qp(), i);
	uint8_t *p = (uint8_t *)(uintptr_t)w.sge.addr;
	uint32_t imm = w.opcode == IBV_WR_SEND_WITH_IMM ? ntohl(w.imm_data) : 0;

	assert_int_equal(w.num_sge, 1);
	assert_true(w.sge.length >= RPMAFS_AUTH_TAG_BYTES);
	*payload_len = w.sge.length - RPMAFS_AUTH_TAG_BYTES;
	return rpmafs_auth_open(R.recv, imm, p, *payload_len, p + *payload_len);
}

/* the request is version 3; the proof is the first SEND; every message opens, in order */
static void key_request_proof_and_sealed_sends(void **state)
{
	uint8_t ack[RPMAFS_ACK_LEN + RPMAFS_AUTH_TAG_BYTES];
	uint32_t len;

	(void)state;
	auth_attempt(0xa5);
	assert_int_equal(link_state(Link), LINK_UP);
	assert_true(link_acks(Link));
	struct fake_conn_param c = fake_last_connect();

	assert_int_equal(c.param.private_data_len, RPMAFS_AUTH_REQUEST_LEN);
	assert_int_equal(c.pdata[4], 3);
	assert_int_equal(c.pdata[6], RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_AUTH);

	/* seq 0: the proof, 16 bytes without immediate data, before anything else */
	assert_int_equal(fake_send_count(the_qp()), 1);
	struct fake_send_wr p = fake_send_get(the_qp(), 0);

	assert_int_equal(p.opcode, IBV_WR_SEND);
	assert_int_equal(p.sge.length, RPMAFS_AUTH_TAG_BYTES);
	assert_false(p.send_flags & IBV_SEND_SIGNALED); /* a completion only on an error */
	assert_int_equal(rpmafs_auth_open_proof(R.recv, (uint8_t *)(uintptr_t)p.sge.addr), 0);

	/* a message: its payload and the tag after it, from the pool, payload unchanged (mac) */
	memcpy(Pool + 100, "hello", 5);
	assert_int_equal(link_post_imm(Link, LINK_SEND, 100, 5, 1, true, 7), 0);
	assert_int_equal(fake_send_get(the_qp(), 1).sge.addr, (uintptr_t)(Pool + 100));
	assert_int_equal(open_send(1, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(Pool + 100, "hello", 5);
	/* a 0-byte message: its tag alone */
	send_numbered(2, 8);
	assert_int_equal(open_send(2, &len), 0);
	assert_int_equal(len, 0);
	/* a chain of two, sealed in posting order */
	struct link_send b[2] = {
		{LINK_SEND, 200, 3, 3, false, 9, NULL}, {LINK_SEND_EMPTY, 0, 0, 4, true, 10, NULL}};
	unsigned posted;

	memcpy(Pool + 200, "abc", 3);
	assert_int_equal(link_post_batch(Link, b, 2, &posted), 0);
	assert_int_equal(posted, 2);
	assert_int_equal(open_send(3, &len), 0);
	assert_int_equal(len, 3);
	assert_int_equal(open_send(4, &len), 0);
	assert_int_equal(len, 0);

	/* a sealed acknowledgement is taken */
	rpmafs_ack_encode(&(struct rpmafs_ack){8, 5, 0}, ack);
	rpmafs_auth_seal_ack(R.recv, ack, RPMAFS_ACK_LEN, ack + RPMAFS_ACK_LEN);
	deliver_ack(0, ack, sizeof(ack));
	assert_int_equal(U.acks, 1);
	assert_int_equal(U.acked, 8);
	assert_int_equal(link_state(Link), LINK_UP);

	/* one whose tag does not open drops the connection */
	rpmafs_ack_encode(&(struct rpmafs_ack){10, 5, 0}, ack);
	rpmafs_auth_seal_ack(R.recv, ack, RPMAFS_ACK_LEN, ack + RPMAFS_ACK_LEN);
	ack[3] ^= 1;
	deliver_ack(1, ack, sizeof(ack));
	assert_int_equal(U.acks, 1);
	assert_int_equal(U.refused_acks, 1);
	assert_int_not_equal(link_state(Link), LINK_UP);
	assert_string_equal(U.lost, "acknowledgement refused: MAC");
	auth_done();
}

/* an unsealed (16-byte) acknowledgement on an authenticated connection is refused too */
static void key_unsealed_ack_refused(void **state)
{
	uint8_t ack[RPMAFS_ACK_LEN];

	(void)state;
	auth_attempt(0xa5);
	send_numbered(1, 1);
	rpmafs_ack_encode(&(struct rpmafs_ack){1, 5, 0}, ack);
	deliver_ack(0, ack, sizeof(ack));
	assert_int_equal(U.acks, 0);
	assert_string_equal(U.lost, "acknowledgement refused: MAC");
	auth_done();
}

/* confirm = transport: SENDs without immediate data are sealed with imm 0 */
static void key_transport_sends_sealed(void **state)
{
	uint32_t len;

	(void)state;
	Peer.confirm = RPMAFS_CONFIRM_TRANSPORT;
	auth_attempt(0xa5);
	Peer.confirm = RPMAFS_CONFIRM_AUTO;
	assert_int_equal(link_state(Link), LINK_UP);
	assert_false(link_acks(Link));
	assert_int_equal(fake_last_connect().pdata[6], RPMAFS_PDATA_F_AUTH);
	assert_int_equal(rpmafs_auth_open_proof(
				 R.recv, (uint8_t *)(uintptr_t)fake_send_get(the_qp(), 0).sge.addr),
		0);
	memcpy(Pool, "xyz", 3);
	assert_int_equal(link_post(Link, LINK_SEND, 0, 3, 1, true), 0);
	assert_int_equal(link_post(Link, LINK_SEND_EMPTY, 0, 0, 2, false), 0);
	assert_int_equal(fake_send_get(the_qp(), 1).opcode, IBV_WR_SEND);
	assert_int_equal(open_send(1, &len), 0);
	assert_int_equal(len, 3);
	assert_int_equal(open_send(2, &len), 0);
	assert_int_equal(len, 0);
	/* the fence is an RDMA WRITE: not a SEND, not sealed, no seq */
	assert_int_equal(link_post(Link, LINK_FENCE, 0, 0, 3, true), 0);
	memcpy(Pool, "q", 1);
	assert_int_equal(link_post(Link, LINK_SEND, 0, 1, 4, true), 0);
	assert_int_equal(open_send(4, &len), 0);
	auth_done();
}

/* the proof's SEND failed (its only completion): the connection is dropped, no message's */
static void key_proof_failure_drops(void **state)
{
	(void)state;
	auth_attempt(0xa5);
	assert_int_equal(link_state(Link), LINK_UP);
	push_wc(LINKAUTH_PROOF_WRID, IBV_WC_RETRY_EXC_ERR);
	run_watches();
	assert_int_equal(U.completions, 0);
	assert_int_not_equal(link_state(Link), LINK_UP);
	assert_string_equal(U.lost, "the proof of key was not sent");
	auth_done();
}

/* rejected at connect with a key: said with the likely reasons */
static void key_rejected_says_why(void **state)
{
	(void)state;
	Peer.key = Alpha;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_REJECTED, NULL, 0);
	fake_cm_auto_answer_status(28);
	attempt();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_non_null(strstr(U.reason,
		"the receiver refused; key = is set: a receiver with keys rejects a key"));
	assert_null(strstr(U.reason, "nothing listens"));
	/* not taken for an older receiver: the session is offered again */
	assert_int_equal(Fallback_logs, 0);
	auth_done();
}

/*
 * No listener on the port (the receiver restarting) is not blamed on the
 * key: the lab's receiver-kill runs met it between the kill and the new
 * rpma-recv's listen, and the spool said the key was refused
 */
static void no_listener_is_not_blamed_on_the_key(void **state)
{
	(void)state;
	Peer.key = Alpha;
	fake_cm_auto_answer(true, RDMA_CM_EVENT_REJECTED, NULL, 0);
	fake_cm_auto_answer_status(8);
	attempt();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_non_null(strstr(U.reason, "Connection rejected (nothing listens on that port"));
	assert_null(strstr(U.reason, "key"));
	auth_done();
}

static void key_attempt_refused(uint8_t recv_fill, const char *why)
{
	auth_attempt(recv_fill);
	assert_int_equal(link_state(Link), LINK_RETRY_SLOW);
	if (!strstr(U.reason, why))
		fail_msg("\"%s\" not in \"%s\"", why, U.reason);
	auth_done();
}

static void key_receiver_without_key_refused(void **state)
{
	(void)state;
	R.plain = true;
	key_attempt_refused(0xa5, "receiver proves no key");
}

static void key_receiver_with_other_key_refused(void **state)
{
	(void)state;
	key_attempt_refused(0x5a, "receiver's proof of key failed");
}

/* ---- protect = encrypt ---- */

#define SENT_MAX 256

/* send i's bytes as they left (payload and tag), copied: the receiver opens its own copy */
static uint32_t sent_copy(unsigned i, uint8_t *out, uint32_t *imm)
{
	struct fake_send_wr w = fake_send_get(the_qp(), i);

	assert_int_equal(w.num_sge, 1);
	assert_true(w.sge.length >= RPMAFS_AUTH_TAG_BYTES && w.sge.length <= SENT_MAX);
	memcpy(out, (const void *)(uintptr_t)w.sge.addr, w.sge.length);
	*imm = w.opcode == IBV_WR_SEND_WITH_IMM ? ntohl(w.imm_data) : 0;
	return w.sge.length - RPMAFS_AUTH_TAG_BYTES;
}

/* the receiver opens the copy of send i (decrypting it in place there): 0 or -1 */
static int open_copy(unsigned i, uint8_t *out, uint32_t *len)
{
	uint32_t imm;

	*len = sent_copy(i, out, &imm);
	return rpmafs_auth_open(R.recv, imm, out, *len, out + *len);
}

/* connected with the receiver in encrypt mode, its proof opened */
static void encrypt_up(void)
{
	auth_attempt(0xa5);
	assert_int_equal(link_state(Link), LINK_UP);
	assert_true(rpmafs_auth_encrypts(R.recv));
	assert_int_equal(rpmafs_auth_open_proof(
				 R.recv, (uint8_t *)(uintptr_t)fake_send_get(the_qp(), 0).sge.addr),
		0);
}

static const char Secret[] = "the marker RPMAFS-SECRET-7f3a, not on the wire";
#define SECRET_LEN ((uint32_t)sizeof(Secret) - 1)

/*
 * protect = encrypt: the request asks for it, and every message is
 * encrypted in place in its pool buffer: the bytes posted are not the
 * plaintext and open with the receiver's key to it; the record says what
 * sealed it
 */
static void key_encrypt_sends_ciphertext(void **state)
{
	struct link_sealed rec = {0};
	uint8_t got[SENT_MAX];
	uint32_t len;
	unsigned posted;

	(void)state;
	Peer.protect = RPMAFS_PROTECT_ENCRYPT;
	encrypt_up();
	assert_int_equal(fake_last_connect().pdata[6],
		RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_AUTH | RPMAFS_PDATA_F_ENCRYPT);
	memcpy(Pool + 100, Secret, SECRET_LEN);
	struct link_send b = {LINK_SEND, 100, SECRET_LEN, 1, true, 7, &rec};

	assert_int_equal(link_post_batch(Link, &b, 1, &posted), 0);
	/* from the pool in place, as ever: no copy */
	assert_int_equal(fake_send_get(the_qp(), 1).sge.addr, (uintptr_t)(Pool + 100));
	assert_int_equal(fake_send_get(the_qp(), 1).sge.length, SECRET_LEN + RPMAFS_AUTH_TAG_BYTES);
	assert_memory_not_equal(Pool + 100, Secret, SECRET_LEN);
	assert_null(memmem(Pool + 100, SECRET_LEN + RPMAFS_AUTH_TAG_BYTES, "RPMAFS-SECRET", 13));
	assert_non_null(rec.by);
	assert_int_equal(rec.seq, 1); /* after the proof, seq 0 */
	assert_int_equal(rec.imm, 7);
	assert_int_equal(open_copy(1, got, &len), 0);
	assert_int_equal(len, SECRET_LEN);
	assert_memory_equal(got, Secret, SECRET_LEN);
	/* a send without a record (link_post_imm) is encrypted just the same */
	memcpy(Pool + 400, Secret, SECRET_LEN);
	assert_int_equal(link_post_imm(Link, LINK_SEND, 400, SECRET_LEN, 2, true, 8), 0);
	assert_memory_not_equal(Pool + 400, Secret, SECRET_LEN);
	assert_int_equal(open_copy(2, got, &len), 0);
	assert_memory_equal(got, Secret, SECRET_LEN);
	link_sealed_forget(&rec);
	assert_null(rec.by);
	auth_done();
}

/*
 * The re-send (the test that fails without the unseal): a message sealed
 * on one connection, lost before it was acknowledged, is posted again on
 * the next with its record. What goes is ciphertext that opens under the
 * NEW connection's keys to the ORIGINAL plaintext -- not to the old
 * connection's ciphertext -- with the new imm (a re-send may ask for a
 * prompt acknowledgement). The old connection's keys outlived it for that.
 */
static void key_encrypt_resend_opens_to_the_plaintext(void **state)
{
	struct link_sealed rec = {0};
	uint8_t got[SENT_MAX], first[SENT_MAX];
	uint32_t len, imm;
	unsigned posted;

	(void)state;
	Peer.protect = RPMAFS_PROTECT_ENCRYPT;
	encrypt_up();
	memcpy(Pool + 300, Secret, SECRET_LEN);
	struct link_send b = {LINK_SEND, 300, SECRET_LEN, 1, false, 1, &rec};

	assert_int_equal(link_post_batch(Link, &b, 1, &posted), 0);
	sent_copy(1, first, &imm);
	assert_non_null(rec.by);

	/* lost: drained, the connection freed, its keys kept by the record */
	link_drop(Link, "test: lost before its acknowledgement", 1);
	uint64_t due = link_tick(Link, now_ms() + LINK_TEARDOWN_GRACE_MS + 1);

	run_after_batch();
	assert_int_equal(link_state(Link), LINK_BACKOFF);
	assert_memory_not_equal(Pool + 300, Secret, SECRET_LEN); /* still the old ciphertext */

	/* the next connection: new nonces, new keys (answer_auth makes R.recv anew) */
	assert_int_equal(link_tick(Link, due), 0);
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_UP);
	assert_int_equal(rpmafs_auth_open_proof(
				 R.recv, (uint8_t *)(uintptr_t)fake_send_get(the_qp(), 0).sge.addr),
		0);
	b.imm = 1 | RPMAFS_IMM_PROMPT;
	b.signaled = true;
	assert_int_equal(link_post_batch(Link, &b, 1, &posted), 0);
	assert_int_equal(posted, 1);
	assert_int_equal(fake_send_get(the_qp(), 1).sge.addr, (uintptr_t)(Pool + 300));
	assert_memory_not_equal(Pool + 300, Secret, SECRET_LEN);
	assert_memory_not_equal(Pool + 300, first, SECRET_LEN); /* not the old ciphertext */
	assert_int_equal(open_copy(1, got, &len), 0);
	assert_int_equal(len, SECRET_LEN);
	assert_memory_equal(got, Secret, SECRET_LEN);
	/* recorded anew, by the new connection */
	assert_non_null(rec.by);
	assert_int_equal(rec.seq, 1);
	assert_int_equal(rec.imm, 1 | RPMAFS_IMM_PROMPT);
	link_sealed_forget(&rec);
	auth_done();
}

/*
 * The sends after a failed one in a chain were sealed too and stay
 * pending: their next post, on the next connection, unseals them first
 */
static void key_encrypt_chain_cut_short_is_unsealed_at_its_next_post(void **state)
{
	struct link_sealed rec[2] = {{0}};
	uint8_t got[SENT_MAX];
	uint32_t len;
	unsigned posted;

	(void)state;
	Peer.protect = RPMAFS_PROTECT_ENCRYPT;
	encrypt_up();
	memcpy(Pool + 1000, Secret, SECRET_LEN);
	memcpy(Pool + 2000, "second", 6);
	struct link_send b[2] = {{LINK_SEND, 1000, SECRET_LEN, 1, false, 1, &rec[0]},
		{LINK_SEND, 2000, 6, 2, true, 2, &rec[1]}};

	fake_fail(FAKE_IBV_POST_SEND, 1, ENOMEM);
	assert_int_not_equal(link_post_batch(Link, b, 2, &posted), 0);
	assert_int_equal(posted, 0);
	/* both were sealed: both recorded */
	assert_non_null(rec[0].by);
	assert_non_null(rec[1].by);
	assert_memory_not_equal(Pool + 2000, "second", 6);
	link_drop(Link, "post failed", 0);
	uint64_t due = link_tick(Link, now_ms());

	run_after_batch();
	assert_int_equal(link_tick(Link, due), 0);
	run_attempt_result();
	assert_int_equal(link_state(Link), LINK_UP);
	assert_int_equal(rpmafs_auth_open_proof(
				 R.recv, (uint8_t *)(uintptr_t)fake_send_get(the_qp(), 0).sge.addr),
		0);
	assert_int_equal(link_post_batch(Link, b, 2, &posted), 0);
	assert_int_equal(open_copy(1, got, &len), 0);
	assert_memory_equal(got, Secret, SECRET_LEN);
	assert_int_equal(open_copy(2, got, &len), 0);
	assert_int_equal(len, 6);
	assert_memory_equal(got, "second", 6);
	link_sealed_forget(&rec[0]);
	link_sealed_forget(&rec[1]);
	auth_done();
}

/* 0-byte messages under encrypt: a 16-byte SEND of the tag, 0 bytes to the reader, no record */
static void key_encrypt_zero_byte_messages(void **state)
{
	struct link_sealed rec = {0};
	uint8_t got[SENT_MAX];
	uint32_t len;
	unsigned posted;

	(void)state;
	Peer.protect = RPMAFS_PROTECT_ENCRYPT;
	encrypt_up();
	send_numbered(1, 1);
	struct link_send b[2] = {{LINK_SEND_EMPTY, 0, 0, 2, false, 2, &rec},
		{LINK_SEND_EMPTY, 0, 0, 3, true, 3 | RPMAFS_IMM_PROMPT, NULL}};

	assert_int_equal(link_post_batch(Link, b, 2, &posted), 0);
	assert_null(rec.by); /* nothing was encrypted: nothing to give back */
	for (unsigned i = 1; i <= 3; i++) {
		assert_int_equal(fake_send_get(the_qp(), i).sge.length, RPMAFS_AUTH_TAG_BYTES);
		assert_int_equal(open_copy(i, got, &len), 0);
		assert_int_equal(len, 0);
	}
	/* then a message with bytes still opens: the seqs ran in order */
	memcpy(Pool, Secret, SECRET_LEN);
	assert_int_equal(link_post_imm(Link, LINK_SEND, 0, SECRET_LEN, 4, true, 4), 0);
	assert_int_equal(open_copy(4, got, &len), 0);
	assert_memory_equal(got, Secret, SECRET_LEN);
	auth_done();
}

/* protect = mac: the payload is never changed and nothing is recorded (no unseal ever) */
static void key_mac_records_nothing(void **state)
{
	struct link_sealed rec = {0};
	uint8_t got[SENT_MAX];
	uint32_t len;
	unsigned posted;

	(void)state;
	auth_attempt(0xa5);
	assert_false(rpmafs_auth_encrypts(R.recv));
	assert_int_equal(rpmafs_auth_open_proof(
				 R.recv, (uint8_t *)(uintptr_t)fake_send_get(the_qp(), 0).sge.addr),
		0);
	memcpy(Pool + 100, Secret, SECRET_LEN);
	struct link_send b = {LINK_SEND, 100, SECRET_LEN, 1, true, 1, &rec};

	assert_int_equal(link_post_batch(Link, &b, 1, &posted), 0);
	assert_null(rec.by);
	assert_memory_equal(Pool + 100, Secret, SECRET_LEN);
	assert_int_equal(open_copy(1, got, &len), 0);
	auth_done();
}

/*
 * protect = mac against a receiver in encrypt mode (rpma-recv --protect
 * encrypt): taken, and the connection encrypts (docs/design.md §11.2)
 */
static void key_receiver_in_encrypt_is_taken(void **state)
{
	uint8_t got[SENT_MAX];
	uint32_t len;

	(void)state;
	R.encrypt = true;
	encrypt_up();
	assert_int_equal(fake_last_connect().pdata[6], RPMAFS_PDATA_F_ACK | RPMAFS_PDATA_F_AUTH);
	memcpy(Pool + 100, Secret, SECRET_LEN);
	assert_int_equal(link_post_imm(Link, LINK_SEND, 100, SECRET_LEN, 1, true, 1), 0);
	assert_memory_not_equal(Pool + 100, Secret, SECRET_LEN);
	assert_int_equal(open_copy(1, got, &len), 0);
	assert_memory_equal(got, Secret, SECRET_LEN);
	auth_done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(new_link_waits_to_connect),
		T(key_request_proof_and_sealed_sends),
		T(key_unsealed_ack_refused),
		T(key_transport_sends_sealed),
		T(key_receiver_without_key_refused),
		T(key_receiver_with_other_key_refused),
		T(key_receiver_in_encrypt_is_taken),
		T(key_encrypt_sends_ciphertext),
		T(key_encrypt_resend_opens_to_the_plaintext),
		T(key_encrypt_chain_cut_short_is_unsealed_at_its_next_post),
		T(key_encrypt_zero_byte_messages),
		T(key_mac_records_nothing),
		T(key_proof_failure_drops),
		T(key_rejected_says_why),
		T(no_listener_is_not_blamed_on_the_key),
		T(up_reports_receiver_limits),
		T(plain_receiver_reports_no_limit),
		T(sq_depth_is_window_plus_fence_and_spare),
		T(malformed_pdata_retries_slowly),
		T(receiver_confirmation_refused_retries_slowly),
		T(plain_receiver_is_transport_confirmed),
		T(acks_are_received_and_checked),
		T(ack_from_the_future_drops_the_connection),
		T(wrapped_ack_drops_the_connection),
		T(garbage_ack_drops_the_connection),
		T(malformed_ack_drops_the_connection),
		T(transport_offers_nothing),
		T(session_is_offered_in_every_request),
		T(transport_offers_no_session),
		T(consumer_reject_of_a_session_falls_back_to_version_1),
		T(reject_by_nobody_listening_keeps_the_session),
		T(consumer_reject_without_a_session_is_only_a_reject),
		T(rejected_attempt_backs_off),
		T(backoff_doubles_to_the_cap),
		T(backoff_resets_once_connected),
		T(device_permission_error_is_permanent),
		T(attempts_bounded_across_links),
		T(attempt_without_memory_is_retried),
		T(attempt_without_memory_doubles_backoff),
		T(send_posts_from_the_pool),
		T(unsignaled_send),
		T(empty_send_has_no_sge),
		T(fence_is_signaled_zero_byte_write),
		T(post_refused_when_not_up),
		T(batch_is_one_chain),
		T(batch_failure_posts_nothing_more),
		T(batch_refused_when_not_up),
		T(batch_on_an_acked_connection_carries_each_imm),
		T(batch_cut_short_records_only_what_went),
		T(batch_cut_short_keeps_what_went),
		T(batch_refuses_a_fence),
		T(completions_reach_the_user_in_order),
		T(completions_are_reaped_in_batches),
		T(spurious_wakeup_is_harmless),
		T(worker_reap_gives_completions_in_order),
		T(worker_reap_leaves_the_end_of_a_drain_to_the_loop),
		T(disconnect_event_drains),
		T(drop_with_nothing_outstanding_ends_at_next_tick),
		T(drain_ends_after_the_grace),
		T(drop_twice_is_one_drain),
		T(reconnects_after_drain),
		T(stopped_link_makes_no_attempt),
		T(attempt_ending_after_stop_is_discarded),
		T(stop_during_drain_schedules_nothing),
		T(close_frees_the_connection),
		T(closed_link_stays_closed),
		T(close_from_backoff_draining_and_retry_slow),
		T(close_during_an_attempt_discards_it),
		T(table_refuses_what_it_does_not_list),
		T(unsent_errno_before_any_attempt),
		T(unsent_errno_after_a_rejection),
		T(unsent_errno_when_unreachable),
		T(unsent_errno_cm_unreachable),
		T(unsent_errno_forgets_causes_once_up),
		T(settle_arms_only_while_a_completion_is_awaited),
		T(completion_before_the_arm_is_reaped_after_it),
		T(event_with_sends_outstanding_rearms),
		T(arm_failure_drops_the_connection),
		T(completion_before_a_disconnect_is_reaped_first),
#undef T
	};

	int failed;

	Alpha = make_key("alpha", 0xa5);
	Other = make_key("other", 0x5a);
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	rpmafs_key_delete(&Alpha);
	rpmafs_key_delete(&Other);
	return failed;
}
