// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_spool.c -- fs/spool/ with a fake link, a fake loop and fake replies
 *
 * The link is a fake that records posts and drops and hands the test the
 * spool's link_ops, so the test plays the loop thread: it reports the link
 * up, completions and losses, and calls spool_tick with any "now" it likes
 * (deadlines are checked against the time passed in, so nothing sleeps).
 * fuse_reply_* are wrapped at link time (--wrap): every reply is recorded,
 * and each one checks that sp->lock is not held. The pool is the real one.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <librpma.h>

#include "ack.h"
#include "link/link.h"
#include "runtime/clock.h"
#include "runtime/loop.h"
#include "runtime/pool.h"
#include "spool/frame.h"
#include "spool/handle.h"
#include "spool/spool.h"
#include "spool/spool_impl.h" /* white-box: the test reads the spool's state */

/* ---- fakes: the link, the loop, the log ---- */

struct link {
	int unused;
};
struct loop {
	int unused;
};

static struct link Link;
static struct loop Loop;
static const struct link_ops *Ops;
static void *Ctx;

#define MAX_POSTS 256
static struct post {
	enum link_op op;
	size_t offset;
	uint32_t len;
	uint64_t wr_id;
	bool signaled;
	bool has_imm; /* link_post_imm on a receiver-confirmed connection */
	uint32_t imm;
} Posts[MAX_POSTS];
static bool Acks; /* the connection the test brings up is receiver-confirmed */
static unsigned Nposts, Drops, Drop_outstanding, Closes, Stops;
static int Post_ret;
/* link_post_batch: calls, the size of each, and where a failing chain fails */
static unsigned Batch_calls, Batch_sizes[MAX_POSTS], Batch_fail_at;
static uint64_t Link_next, Armed;
static const char *Status = "connecting";
static int Unsent_cause; /* what link_unsent_errno answers, 0: its default */
static bool Unsent_asked_waited;

static uint64_t Session; /* what the spool gave its link; link_session answers it */

int link_new(const struct link_cfg *cfg, struct link **link_ptr)
{
	Ops = cfg->ops;
	Ctx = cfg->ctx;
	Session = cfg->session;
	*link_ptr = &Link;
	return 0;
}

void link_delete(struct link **link_ptr)
{
	*link_ptr = NULL;
}

uint64_t link_tick(struct link *link, uint64_t now)
{
	(void)link;
	(void)now;
	return Link_next;
}

int link_post(struct link *link, enum link_op op, size_t offset, uint32_t len, uint64_t wr_id,
	bool signaled)
{
	(void)link;
	if (Post_ret)
		return Post_ret;
	assert_true(Nposts < MAX_POSTS);
	Posts[Nposts++] = (struct post){op, offset, len, wr_id, signaled, false, 0};
	return 0;
}

int link_post_imm(struct link *link, enum link_op op, size_t offset, uint32_t len, uint64_t wr_id,
	bool signaled, uint32_t imm)
{
	if (!Acks || op == LINK_FENCE)
		return link_post(link, op, offset, len, wr_id, signaled);
	if (Post_ret)
		return Post_ret;
	assert_true(Nposts < MAX_POSTS);
	Posts[Nposts++] = (struct post){op, offset, len, wr_id, signaled, true, imm};
	return 0;
}

uint64_t link_session(struct link *link)
{
	(void)link;
	return Session;
}

bool link_acks(struct link *link)
{
	(void)link;
	return Acks;
}

/*
 * protect = encrypt as the fake link plays it (the real one: tests/unit/fs/link):
 * every LINK_SEND of a chain, all n, is sealed and recorded in its
 * message's record; a record that holds a seal is unsealed first. The
 * records alive must all be forgotten by the time the messages end.
 */
static bool Encrypts;
static int Sealed_live;	    /* records holding a seal now */
static unsigned Unsealed;   /* payloads given their plaintext back before a re-seal */
static uint64_t Sealed_seq; /* the fake's seq, so that a record is told from the next */

static void fake_seal(const struct link_send *s)
{
	if (s->op != LINK_SEND)
		return;
	assert_non_null(s->sealed); /* a message's payload always names its record */
	if (s->sealed->by) {
		Unsealed++;
		link_sealed_forget(s->sealed);
	}
	if (Encrypts) {
		*s->sealed = (struct link_sealed){
			.by = (struct linkauth *)&Link, .seq = ++Sealed_seq, .imm = s->imm};
		Sealed_live++;
	}
}

void link_sealed_forget(struct link_sealed *rec)
{
	if (!rec->by)
		return;
	assert_true(Sealed_live > 0);
	Sealed_live--;
	*rec = (struct link_sealed){0};
}

int link_post_batch(struct link *link, const struct link_send *sends, unsigned n, unsigned *posted)
{
	unsigned i;

	(void)link;
	*posted = 0;
	assert_true(n >= 1 && n <= LINK_BATCH_MAX);
	assert_true(Batch_calls < MAX_POSTS);
	Batch_sizes[Batch_calls++] = n;
	for (i = 0; i < n; i++)
		fake_seal(&sends[i]);
	for (i = 0; i < n; i++) {
		if (Post_ret && i == Batch_fail_at)
			return Post_ret;
		assert_true(Nposts < MAX_POSTS);
		/* a receiver-confirmed connection carries every imm, as link.c posts it */
		Posts[Nposts++] = (struct post){sends[i].op, sends[i].offset, sends[i].len,
			sends[i].wr_id, sends[i].signaled, Acks, Acks ? sends[i].imm : 0};
		*posted = i + 1;
	}
	return 0;
}

/*
 * link_reap: what a worker's reap finds in the CQ. Reap_mode: REAP_EMPTY
 * (nothing completed yet, the default), REAP_LAST (the completion of the
 * last post is there: given to on_completions once, as link.c gives it),
 * REAP_DOWN (the link is not up: -1).
 */
static enum { REAP_EMPTY, REAP_LAST, REAP_DOWN } Reap_mode;
static unsigned Reap_calls, Reaped_wr_ids;
static uint64_t Reaped_last;

int link_reap(struct link *link)
{
	struct ibv_wc wc;

	(void)link;
	Reap_calls++;
	if (Reap_mode == REAP_DOWN)
		return -1;
	if (Reap_mode == REAP_EMPTY || !Nposts || Reaped_last == Posts[Nposts - 1].wr_id)
		return 0;
	wc = (struct ibv_wc){.wr_id = Posts[Nposts - 1].wr_id, .status = IBV_WC_SUCCESS};
	Reaped_last = wc.wr_id;
	Reaped_wr_ids++;
	(void)Ops->on_completions(Ctx, &wc, 1);
	return 1;
}

/* link_settle: after every post, with what the spool's awaits says then */
static unsigned Settles;
static bool Settle_awaited;

void link_settle(struct link *link)
{
	(void)link;
	Settles++;
	Settle_awaited = Ops->awaits(Ctx);
}

/* link_look: the tick's reap of acknowledgements it let wait */
static unsigned Looks;

void link_look(struct link *link)
{
	(void)link;
	Looks++;
	Settle_awaited = Ops->awaits(Ctx);
}

void link_drop(struct link *link, const char *reason, unsigned outstanding)
{
	(void)link;
	(void)reason;
	Drops++;
	Drop_outstanding = outstanding;
}

void link_stop(struct link *link)
{
	(void)link;
	Stops++;
}

void link_close(struct link *link)
{
	(void)link;
	Closes++;
}

enum link_state link_state(struct link *link)
{
	(void)link;
	return LINK_BACKOFF;
}

const char *link_status(struct link *link)
{
	(void)link;
	return Status;
}

/* the link's answer is the link's (tests/unit/fs/link): here, what spool asks */
int link_unsent(struct link *link, bool waited, const char *what, char *why, size_t len)
{
	(void)link;
	Unsent_asked_waited = waited;
	snprintf(why, len, "%s%s", what, Unsent_cause ? " (last attempt: rejected)" : "");
	if (Unsent_cause)
		return Unsent_cause;
	return waited ? ETIMEDOUT : ENOTCONN;
}

void loop_arm(struct loop *loop, uint64_t at)
{
	(void)loop;
	if (at && (!Armed || at < Armed))
		Armed = at;
}

void loop_kick(struct loop *loop)
{
	(void)loop;
}

void log_msg(int prio, const char *fmt, ...)
{
	(void)prio;
	(void)fmt;
}

/* ---- fake replies (link-time --wrap) ---- */

static struct spool *Sp;

#define MAX_REPLIES 256
static struct rec {
	uintptr_t req;
	bool write;
	size_t size;
	int err;
} Replies[MAX_REPLIES];
static unsigned Nreplies, Invalidations;

static void assert_unlocked(void)
{
	/* never a FUSE reply under sp->lock */
	assert_int_equal(pthread_mutex_trylock(&Sp->lock), 0);
	pthread_mutex_unlock(&Sp->lock);
}

int __wrap_fuse_reply_write(fuse_req_t req, size_t count)
{
	assert_unlocked();
	assert_true(Nreplies < MAX_REPLIES);
	Replies[Nreplies++] = (struct rec){(uintptr_t)req, true, count, 0};
	return 0;
}

int __wrap_fuse_reply_err(fuse_req_t req, int err)
{
	assert_unlocked();
	assert_true(Nreplies < MAX_REPLIES);
	Replies[Nreplies++] = (struct rec){(uintptr_t)req, false, 0, err};
	return 0;
}

int __wrap_fuse_lowlevel_notify_inval_inode(
	struct fuse_session *se, fuse_ino_t ino, off_t off, off_t len)
{
	(void)se;
	(void)ino;
	(void)off;
	(void)len;
	assert_unlocked();
	Invalidations++;
	return 0;
}

/* freed pointers, to see a handle's end */
void __real_free(void *p);
static void *Watched;
static bool Watched_freed;

/* the next calloc fails (a message's allocation) when set */
static bool Fail_calloc;
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
	if (Fail_calloc) {
		Fail_calloc = false;
		return NULL;
	}
	return __real_calloc(n, size);
}

void __wrap_free(void *p)
{
	if (p && p == Watched)
		Watched_freed = true;
	__real_free(p);
}

/* ---- fixtures ---- */

#define NSLOTS 8
#define WINDOW LINK_WINDOW(NSLOTS)
#define NSMALL 16 /* small slots, in the pools of the *_small tests */

static unsigned Next_nsmall; /* the small slots of the pool the next reset makes */

static struct pool *Pool;
static struct spool_env Env;
static struct rpmafs_peer_cfg Cfg;
static uintptr_t Next_req;
static unsigned Attempted; /* writes handed to the spool or refused before it */

static void reset(
	enum rpmafs_peer_type type, enum rpmafs_completion completion, uint32_t send_timeout_ms)
{
	Cfg = (struct rpmafs_peer_cfg){.name = "alpha",
		.address = "192.168.77.2",
		.port = 7204,
		.type = type,
		.completion = completion,
		.max_message = 4096,
		.send_timeout_ms = send_timeout_ms,
		.connect_timeout_ms = 1000};
	Nposts = Drops = Drop_outstanding = Closes = Stops = Nreplies = Invalidations = 0;
	Post_ret = 0;
	Acks = false;
	Encrypts = false;
	Sealed_live = 0;
	Unsealed = 0;
	Batch_calls = Batch_fail_at = 0;
	Reap_mode = REAP_EMPTY;
	Reap_calls = Reaped_wr_ids = 0;
	Reaped_last = 0;
	Settles = Looks = 0;
	Settle_awaited = false;
	Link_next = Armed = 0;
	Status = "connecting";
	Unsent_cause = 0;
	Unsent_asked_waited = false;
	Next_req = 1;
	Attempted = 0;
	Watched = NULL;
	Watched_freed = false;
	assert_int_equal(pool_new_small(NSLOTS, 4096, Next_nsmall, POOL_SMALL_SIZE, &Pool), 0);
	Next_nsmall = 0;
	Env = (struct spool_env){.pool = Pool, .loop = &Loop, .se = (struct fuse_session *)&Env};
	assert_int_equal(spool_new(&Env, 2, &Cfg, &Sp), 0);
}

static int setup(void **state)
{
	(void)state;
	reset(RPMAFS_PEER_RDMA, RPMAFS_COMPLETION_ALWAYS, 5000);
	return 0;
}

static int setup_on_error(void **state)
{
	(void)state;
	reset(RPMAFS_PEER_RDMA, RPMAFS_COMPLETION_ON_ERROR, 5000);
	return 0;
}

static int setup_no_wait(void **state)
{
	(void)state;
	reset(RPMAFS_PEER_RDMA, RPMAFS_COMPLETION_ALWAYS, 0);
	return 0;
}

static int setup_null(void **state)
{
	(void)state;
	reset(RPMAFS_PEER_NULL, RPMAFS_COMPLETION_ALWAYS, 5000);
	return 0;
}

static int setup_small(void **state)
{
	(void)state;
	Next_nsmall = NSMALL;
	reset(RPMAFS_PEER_RDMA, RPMAFS_COMPLETION_ALWAYS, 5000);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	spool_stop(Sp);
	spool_close(Sp);
	/* every message's record of an encrypted payload was forgotten at its end */
	assert_int_equal(Sealed_live, 0);
	/* every buffer is back, and every small slot */
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	assert_int_equal(pool_small_free_count(Pool), pool_nsmall(Pool));
	spool_delete(&Sp);
	pool_delete(&Pool);
	return 0;
}

/* a spool file opened for writing, as op_open opens it (O_SYNC: sync) */
static struct handle *open_handle(bool sync)
{
	struct handle *fh = NULL;

	assert_int_equal(handle_new(Sp, O_WRONLY | (sync ? O_SYNC : 0), Pool, NULL, &fh), 0);
	assert_int_equal(fh->sync, sync);
	return fh;
}

/* a pool slot for a message's payload */
static unsigned slot_get(void)
{
	unsigned slot;

	assert_int_equal(pool_get(Pool, false, &slot), 0);
	return slot;
}

/* a write of len bytes through fh, as op_write makes it; returns its request */
static uintptr_t write_msg(struct handle *fh, uint32_t len)
{
	fuse_req_t req = (fuse_req_t)Next_req++;
	unsigned slot = slot_get();
	struct msg *msg;

	Attempted++;
	assert_int_equal(spool_write_check(Sp, fh, len, false), 0);
	assert_int_equal(
		msg_new_write(fh, req, Pool, slot, pool_slot_ptr(Pool, slot), len, fh->sync, &msg),
		0);
	spool_submit(Sp, msg);
	return (uintptr_t)req;
}

/*
 * a small write through fh, as spoolfile_write makes it: its len bytes
 * copied into a small slot (the request buffer stays the worker's)
 */
static uintptr_t write_small(struct handle *fh, uint32_t len)
{
	fuse_req_t req = (fuse_req_t)Next_req++;
	char payload[POOL_SMALL_SIZE];
	struct msg *msg;
	unsigned slot;

	memset(payload, (int)(Next_req & 0x7f), len);
	Attempted++;
	assert_int_equal(spool_write_check(Sp, fh, len, false), 0);
	assert_int_equal(pool_copy_small(Pool, payload, len, &slot), 0);
	assert_true(pool_is_small(Pool, slot));
	assert_int_equal(
		msg_new_write(fh, req, Pool, slot, pool_slot_ptr(Pool, slot), len, fh->sync, &msg),
		0);
	assert_true(msg->small);
	spool_submit(Sp, msg);
	return (uintptr_t)req;
}

/* the 0-byte message of a handle released without a write */
static void empty_msg(struct handle *fh)
{
	struct msg *msg;

	Attempted++;
	assert_int_equal(msg_new_empty(fh, &msg), 0);
	spool_submit(Sp, msg);
}

static void up(unsigned credits)
{
	Status = "connected";
	Ops->on_up(Ctx, 0, credits);
}

static unsigned complete(uint64_t wr_id, enum ibv_wc_status status)
{
	struct ibv_wc wc = {.wr_id = wr_id, .status = status};

	return Ops->on_completions(Ctx, &wc, 1);
}

static struct spool_stats stats(void)
{
	struct spool_stats st;

	spool_stats_get(Sp, &st);
	return st;
}

static const struct rec *reply_of(uintptr_t req)
{
	for (unsigned i = 0; i < Nreplies; i++)
		if (Replies[i].req == req)
			return &Replies[i];
	return NULL;
}

static unsigned replies_to(uintptr_t req)
{
	unsigned n = 0;

	for (unsigned i = 0; i < Nreplies; i++)
		n += Replies[i].req == req;
	return n;
}

/* attempted = posted + refused; posted = completed + failed + in_flight */
static void assert_accounts(void)
{
	struct spool_stats st = stats();

	assert_int_equal(Attempted, st.posted + st.refused + st.pending);
	assert_int_equal(st.posted, st.completed + st.failed + st.in_flight);
}

/* a 0-byte message that cannot be allocated at release is counted refused, not lost */
static void empty_message_without_memory_is_refused(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	Attempted++;
	Fail_calloc = true;
	spool_submit_empty(Sp, fh);
	assert_false(Fail_calloc);
	assert_int_equal(stats().refused, 1);
	assert_int_equal(Nposts, 0);
	assert_accounts();
	/* and with memory, it is sent */
	Attempted++;
	spool_submit_empty(Sp, fh);
	assert_int_equal(Nposts, 1);
	assert_int_equal(Posts[0].op, LINK_SEND_EMPTY);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_accounts();
	handle_delete(&fh);
}

/* ---- replies ---- */

static void async_write_replies_at_post(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);
	uintptr_t r = write_msg(fh, 64);

	assert_int_equal(Nposts, 1);
	assert_non_null(reply_of(r));
	assert_true(reply_of(r)->write);
	assert_int_equal(reply_of(r)->size, 64);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(replies_to(r), 1);
	handle_delete(&fh);
	assert_accounts();
}

static void sync_write_replies_at_completion(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(true);
	uintptr_t r = write_msg(fh, 100);

	assert_null(reply_of(r));
	assert_true(Posts[0].signaled);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_true(reply_of(r)->write);
	assert_int_equal(reply_of(r)->size, 100);
	assert_int_equal(stats().bytes_confirmed, 100);
	handle_delete(&fh);
}

/*
 * A sync write awaited by its worker (await.h): its completion is in the
 * CQ while the worker polls, so the reply is sent before spool_submit
 * returns, by the writer's thread, and counted in sync_reaped.
 */
static void sync_write_reaped_by_its_worker(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(true);
	uintptr_t r;

	Reap_mode = REAP_LAST;
	r = write_msg(fh, 100);
	assert_int_equal(Reaped_wr_ids, 1);
	assert_int_equal(replies_to(r), 1);
	assert_true(reply_of(r)->write);
	assert_int_equal(reply_of(r)->size, 100);
	assert_int_equal(stats().sync_reaped, 1);
	assert_int_equal(stats().in_flight, 0);
	/* an async write is not awaited: answered at post, nothing reaped */
	handle_delete(&fh);
	fh = open_handle(false);
	r = write_msg(fh, 10);
	assert_int_equal(replies_to(r), 1);
	assert_int_equal(Reaped_wr_ids, 1);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	handle_delete(&fh);
	assert_accounts();
}

/*
 * The completion does not come within the spin: the worker lets go, the
 * message stays in flight unanswered, and the loop's completion answers it
 * later (and is not counted as reaped). The message's waiter is gone by
 * then: its end touches no stack of a returned worker (ASan would see it).
 */
static void sync_write_not_reaped_in_time_is_the_loops(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(true);
	uintptr_t r = write_msg(fh, 100);

	assert_true(Reap_calls >= 1); /* it polled, for at least AWAIT_SPIN_MIN_NS */
	assert_int_equal(replies_to(r), 0);
	assert_int_equal(stats().in_flight, 1);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(replies_to(r), 1);
	assert_true(reply_of(r)->write);
	assert_int_equal(stats().sync_reaped, 0);
	handle_delete(&fh);
	assert_accounts();
}

/* the link is not up for a reap: the worker returns at once, the loop answers */
static void sync_write_on_a_link_going_down_is_not_polled(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(true);
	uintptr_t r;

	Reap_mode = REAP_DOWN;
	r = write_msg(fh, 64);
	assert_int_equal(Reap_calls, 1);
	assert_int_equal(replies_to(r), 0);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(replies_to(r), 1);
	assert_int_equal(stats().sync_reaped, 0);
	handle_delete(&fh);
}

/* not connected: a sync write waits in the queue; nothing is polled for it */
static void sync_write_while_not_connected_is_not_polled(void **state)
{
	(void)state;
	struct handle *fh = open_handle(true);
	uintptr_t r;

	Reap_mode = REAP_LAST;
	r = write_msg(fh, 64);
	assert_int_equal(Reap_calls, 0);
	assert_int_equal(replies_to(r), 0);
	up(0);
	/* posted by on_up, on the loop thread: its completion is the loop's */
	assert_int_equal(Nposts, 1);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(replies_to(r), 1);
	handle_delete(&fh);
}

/*
 * A file message (framing = file) as framed_flush submits it: the FLUSH of
 * close(2) is its request; with close = wait it is answered at the message's
 * end, 0 or EIO (docs/design.md §4.6), never as a write.
 */
static uintptr_t file_msg(struct handle *fh, uint32_t len)
{
	fuse_req_t req = (fuse_req_t)Next_req++;
	struct msg *msg;

	Attempted++;
	/* close = wait */
	assert_int_equal(msg_new_file(fh, req, Pool, slot_get(), len, true, &msg), 0);
	spool_submit(Sp, msg);
	return (uintptr_t)req;
}

static void file_message_close_waits_and_answers_its_outcome(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);
	uintptr_t ok = file_msg(fh, 300);
	uintptr_t bad;

	assert_null(reply_of(ok)); /* the close waits for its completion */
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_non_null(reply_of(ok));
	assert_false(reply_of(ok)->write);
	assert_int_equal(reply_of(ok)->err, 0);
	assert_int_equal(stats().bytes_confirmed, 300);

	bad = file_msg(fh, 200);
	assert_null(reply_of(bad));
	complete(Posts[1].wr_id, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(replies_to(bad), 1);
	assert_false(reply_of(bad)->write);
	assert_int_equal(reply_of(bad)->err, EIO);
	/* reported by that close: nothing left for the next call */
	assert_int_equal(spool_take_error(Sp, fh, NULL), 0);
	assert_int_equal(stats().failed, 1);
	handle_delete(&fh);
	assert_accounts();
}

static void sync_write_failure_replies_eio(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(true);
	uintptr_t r = write_msg(fh, 10);

	complete(Posts[0].wr_id, IBV_WC_REM_ACCESS_ERR);
	assert_false(reply_of(r)->write);
	assert_int_equal(reply_of(r)->err, EIO);
	/* reported in write(): nothing left for the next one */
	assert_int_equal(spool_take_error(Sp, fh, NULL), 0);
	handle_delete(&fh);
	assert_accounts();
}

/* ---- the window ---- */

static void window_limits_posts(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	/* 8 slots: the window is 10, two of them 0-byte messages */
	for (int i = 0; i < NSLOTS; i++)
		write_msg(fh, 8);
	empty_msg(fh);
	empty_msg(fh);
	empty_msg(fh);
	assert_int_equal(Nposts, WINDOW);
	assert_int_equal(stats().pending, 1);
	assert_int_equal(stats().in_flight, WINDOW);
	assert_accounts();
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(Nposts, WINDOW + 1);
	assert_int_equal(Posts[WINDOW].op, LINK_SEND_EMPTY);
	assert_int_equal(stats().pending, 0);
	complete(Posts[WINDOW].wr_id, IBV_WC_SUCCESS);
	handle_delete(&fh);
	assert_accounts();
}

static void credits_cap_the_window(void **state)
{
	(void)state;
	up(3);
	struct handle *fh = open_handle(false);

	for (int i = 0; i < 5; i++)
		write_msg(fh, 8);
	assert_int_equal(Nposts, 3);
	assert_int_equal(stats().pending, 2);
	/* an async write waiting for the window is answered: it is queued (§4.2) */
	assert_int_equal(Nreplies, 5);
	complete(Posts[2].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(Nposts, 5);
	assert_int_equal(Nreplies, 5);
	complete(Posts[4].wr_id, IBV_WC_SUCCESS);
	handle_delete(&fh);
}

static void wr_ids_count_from_one(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	for (int i = 0; i < 3; i++)
		write_msg(fh, 8);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(Posts[i].wr_id, i + 1);
	complete(3, IBV_WC_SUCCESS);
	assert_int_equal(stats().last_wr_id, 3);
	handle_delete(&fh);
}

/* RC completes in order: a completion confirms every message posted before it */
static void completion_confirms_earlier_messages(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	for (int i = 0; i < 4; i++)
		write_msg(fh, 10);
	assert_int_equal(complete(3, IBV_WC_SUCCESS), 1);
	assert_int_equal(stats().completed, 3);
	assert_int_equal(stats().bytes_confirmed, 30);
	assert_int_equal(stats().in_flight, 1);
	/* a stale completion (already settled) changes nothing */
	complete(2, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, 3);
	assert_int_equal(complete(4, IBV_WC_SUCCESS), 0);
	handle_delete(&fh);
	assert_accounts();
}

static void buffers_go_back_to_the_pool(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 10);
	write_msg(fh, 10);
	assert_int_equal(pool_free_count(Pool), NSLOTS - 2);
	complete(2, IBV_WC_SUCCESS);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	handle_delete(&fh);
}

/* ---- selective signalling and fences (completion = on_error) ---- */

static void on_error_signals_one_in_a_quarter_window(void **state)
{
	unsigned every = WINDOW / 4, signaled = 0;

	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	for (int i = 0; i < NSLOTS; i++)
		write_msg(fh, 8);
	for (unsigned i = 0; i < Nposts; i++) {
		assert_int_equal(Posts[i].signaled, (i + 1) % every == 0);
		signaled += Posts[i].signaled;
	}
	assert_int_equal(signaled, NSLOTS / every);
	/* the last ones are unsignaled: a fence is armed */
	assert_true(Sp->fence_at_ms != 0);
	complete(Posts[NSLOTS - 1].wr_id, IBV_WC_SUCCESS);
	handle_delete(&fh);
}

static void sync_write_is_always_signaled(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(true);

	write_msg(fh, 8);
	assert_true(Posts[0].signaled);
	complete(1, IBV_WC_SUCCESS);
	handle_delete(&fh);
}

static void quiet_spool_fences_unsignaled_sends(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	assert_false(Posts[0].signaled);
	uint64_t at = spool_tick(Sp, now_ms());

	Sp->last_post_ms = now_ms_coarse() - 2; /* then 2 ms of quiet, by the coarse clock */

	assert_true(at > 0 && at <= now_ms() + 2);
	spool_tick(Sp, at);
	assert_int_equal(Nposts, 2);
	assert_int_equal(Posts[1].op, LINK_FENCE);
	assert_true(Posts[1].signaled);
	/* the fence is not a message: no counter sees it */
	assert_int_equal(stats().posted, 1);
	assert_int_equal(stats().in_flight, 1);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, 1);
	assert_int_equal(stats().in_flight, 0);
	handle_delete(&fh);
	assert_accounts();
}

/* while sends keep coming, the fence waits for 2 ms of quiet, 20 ms at most */
static void busy_spool_fences_once_quiet(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	assert_false(Posts[0].signaled);
	uint64_t t0 = Sp->fence_armed_ms;

	assert_int_equal(Sp->fence_at_ms, t0 + 2);
	/* a send posted in this tick of the coarse clock: not quiet */
	Sp->last_post_ms = now_ms_coarse();
	spool_tick(Sp, t0 + 2);
	assert_int_equal(Nposts, 1);
	/* it looks again after twice the time waited: 4, 8, 16, then 20 ms */
	assert_int_equal(Sp->fence_at_ms, t0 + 4);
	/* never quiet: the fence goes 20 ms after the first unsignaled send */
	Sp->last_post_ms = now_ms_coarse() + 100;
	spool_tick(Sp, t0 + 4);
	assert_int_equal(Sp->fence_at_ms, t0 + 8);
	spool_tick(Sp, t0 + 8);
	assert_int_equal(Sp->fence_at_ms, t0 + 16);
	spool_tick(Sp, t0 + 16);
	assert_int_equal(Sp->fence_at_ms, t0 + 20);
	assert_int_equal(Nposts, 1);
	spool_tick(Sp, t0 + 20);
	assert_int_equal(Nposts, 2);
	assert_int_equal(Posts[1].op, LINK_FENCE);
	assert_int_equal(Sp->fence_at_ms, 0);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, 1);

	/* quiet 2 ms by the coarse clock: fenced at the first tick due */
	write_msg(fh, 8);
	assert_false(Posts[2].signaled);
	Sp->last_post_ms = now_ms_coarse() - 2;
	spool_tick(Sp, Sp->fence_at_ms);
	assert_int_equal(Nposts, 4);
	assert_int_equal(Posts[3].op, LINK_FENCE);
	complete(Posts[3].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, 2);
	handle_delete(&fh);
	assert_accounts();
}

static void sends_behind_a_fence_get_their_own(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	Sp->last_post_ms = now_ms_coarse() - 2; /* quiet since */
	spool_tick(Sp, now_ms() + 10);		/* fence 2 */
	write_msg(fh, 8);			/* 3: unsignaled, its fence skipped */
	assert_int_equal(Posts[1].op, LINK_FENCE);
	Sp->fence_at_ms = 0;
	complete(2, IBV_WC_SUCCESS);
	assert_true(Sp->fence_at_ms != 0);
	Sp->last_post_ms = now_ms_coarse() - 2;
	spool_tick(Sp, Sp->fence_at_ms);
	assert_int_equal(Posts[3].op, LINK_FENCE);
	complete(4, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, 2);
	handle_delete(&fh);
}

/* ---- deadlines: ENOTCONN, the in-flight timeout, failing fast ---- */

static void write_waits_for_the_connection(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uintptr_t r = write_msg(fh, 8);

	assert_null(reply_of(r));
	assert_int_equal(stats().pending, 1);
	assert_true(Armed >= now_ms() + 4000);
	up(0);
	assert_true(reply_of(r)->write);
	complete(1, IBV_WC_SUCCESS);
	handle_delete(&fh);
}

static void enotconn_after_send_timeout(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uint64_t t0 = now_ms();
	uintptr_t r = write_msg(fh, 8);
	uint64_t due = spool_tick(Sp, t0);

	assert_true(due >= t0 + 5000);
	spool_tick(Sp, due - 1);
	assert_null(reply_of(r));
	spool_tick(Sp, due);
	assert_int_equal(reply_of(r)->err, ETIMEDOUT);
	assert_true(Unsent_asked_waited);
	assert_int_equal(stats().refused, 1);
	assert_string_equal(stats().last_error, "not connected: send_timeout_ms passed");
	handle_delete(&fh);
	assert_accounts();
}

static void later_writes_fail_fast_after_a_timeout(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	spool_tick(Sp, now_ms() + 6000);
	uintptr_t r = write_msg(fh, 8);

	/* failing fast, it still says a write timed out */
	assert_int_equal(reply_of(r)->err, ETIMEDOUT);
	assert_true(Unsent_asked_waited);
	assert_int_equal(stats().refused, 2);
	/* until the spool reconnects */
	up(0);
	r = write_msg(fh, 8);
	assert_true(reply_of(r)->write);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	handle_delete(&fh);
	assert_accounts();
}

static void no_send_timeout_refuses_at_once(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uintptr_t r = write_msg(fh, 8);

	assert_int_equal(reply_of(r)->err, ENOTCONN);
	assert_false(Unsent_asked_waited);
	assert_int_equal(stats().refused, 1);
	assert_int_equal(stats().pending, 0);
	handle_delete(&fh);
}

static void nonblocking_write_eagain_while_down(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	assert_int_equal(spool_write_check(Sp, fh, 8, true), EAGAIN);
	assert_int_equal(spool_write_check(Sp, fh, 8, false), 0);
	up(0);
	assert_int_equal(spool_write_check(Sp, fh, 8, true), 0);
	assert_int_equal(spool_write_check(Sp, fh, 4097, false), EMSGSIZE);
	handle_delete(&fh);
}

static void in_flight_timeout_drops_the_link(void **state)
{
	(void)state;
	up(2);
	struct handle *fh = open_handle(false);
	uint64_t t0 = now_ms_coarse();

	write_msg(fh, 8);
	write_msg(fh, 8);
	uintptr_t waiting = write_msg(fh, 8); /* behind the window */
	uint64_t due = spool_tick(Sp, now_ms());

	assert_true(due >= t0 + 5000 && due <= now_ms() + 5000);
	spool_tick(Sp, due);
	assert_int_equal(Drops, 1);
	assert_int_equal(Drop_outstanding, 2);
	/* answered when queued; refused now, so the next call says EIO, once */
	assert_true(reply_of(waiting)->write);
	assert_int_equal(stats().refused, 1);
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	assert_non_null(strstr(stats().last_error, "no completion within 5000 ms"));
	/* what comes next fails at once */
	uintptr_t r = write_msg(fh, 8);

	assert_int_equal(reply_of(r)->err, ETIMEDOUT);
	/* the link drains: the flush fails the two in flight */
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	assert_int_equal(stats().failed, 2);
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	handle_delete(&fh);
	assert_accounts();
}

static void in_flight_timeout_is_at_least_a_second(void **state)
{
	(void)state;
	Cfg.send_timeout_ms = 200;
	up(0);
	struct handle *fh = open_handle(false);
	uint64_t t0 = now_ms_coarse();

	write_msg(fh, 8);
	uint64_t due = spool_tick(Sp, now_ms());

	assert_true(due >= t0 + 1000);
	complete(1, IBV_WC_SUCCESS);
	handle_delete(&fh);
}

static void lost_link_gives_pending_a_deadline(void **state)
{
	(void)state;
	up(1);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	uintptr_t r = write_msg(fh, 8); /* pending, posted at once when up: no deadline */
	assert_int_equal(Sp->pending.head->deadline_ms, 0);
	assert_int_equal(Ops->on_down(Ctx, LINK_LOST, "RDMA_CM_EVENT_DISCONNECTED"), 1);
	assert_true(Sp->pending.head->deadline_ms >= now_ms() + 4000);
	assert_string_equal(stats().last_error, "RDMA_CM_EVENT_DISCONNECTED");
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	spool_tick(Sp, now_ms() + 6000);
	/* answered when queued on the up link; refused now: EIO on the next call */
	assert_true(reply_of(r)->write);
	assert_int_equal(stats().refused, 1);
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	handle_delete(&fh);
	assert_accounts();
}

/* a write that waited for a receiver that rejects us says so */
static void timed_out_write_reports_the_cause(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uintptr_t r = write_msg(fh, 8);

	Unsent_cause = ECONNREFUSED;
	spool_tick(Sp, now_ms() + 6000);
	assert_int_equal(reply_of(r)->err, ECONNREFUSED);
	assert_string_equal(stats().last_error,
		"not connected: send_timeout_ms passed (last attempt: rejected)");
	r = write_msg(fh, 8);
	assert_int_equal(reply_of(r)->err, ECONNREFUSED);
	handle_delete(&fh);
	assert_accounts();
}

/* ---- failures ---- */

static void failed_completion_drops_and_reports_eio_once(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	write_msg(fh, 8);
	assert_int_equal(complete(1, IBV_WC_RETRY_EXC_ERR), 1);
	assert_int_equal(Drops, 1);
	assert_int_equal(stats().failed, 1);
	assert_string_equal(stats().last_error, ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
	assert_int_equal(stats().last_wc_status, IBV_WC_RETRY_EXC_ERR);
	/* the flush that follows does not hide the cause */
	complete(2, IBV_WC_WR_FLUSH_ERR);
	assert_string_equal(stats().last_error, ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
	assert_int_equal(Drops, 1);
	/* the next write says EIO, once */
	assert_int_equal(spool_write_check(Sp, fh, 8, false), EIO);
	assert_int_equal(spool_write_check(Sp, fh, 8, false), 0);
	handle_delete(&fh);
	assert_accounts();
}

static void drained_link_fails_what_is_left(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	for (int i = 0; i < 3; i++)
		write_msg(fh, 8);
	Ops->on_down(Ctx, LINK_LOST, "lost");
	assert_int_equal(Ops->on_down(Ctx, LINK_DRAINED, "drained"), 0);
	assert_int_equal(stats().failed, 3);
	assert_int_equal(stats().in_flight, 0);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	handle_delete(&fh);
	assert_accounts();
}

static void post_failure_counts_posted_and_failed(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	Post_ret = RPMA_E_PROVIDER;
	uintptr_t r = write_msg(fh, 8);

	/* answered when queued (§4.2): the failure is the next write's, once */
	assert_true(reply_of(r)->write);
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	assert_int_equal(spool_take_error(Sp, fh, NULL), 0);
	assert_int_equal(stats().posted, 1);
	assert_int_equal(stats().failed, 1);
	assert_int_equal(Drops, 1);
	assert_non_null(strstr(stats().last_error, "post failed"));
	Post_ret = 0;
	handle_delete(&fh);
	assert_accounts();
}

static void attempt_failure_is_the_last_error(void **state)
{
	(void)state;
	assert_false(stats().error_recorded);
	assert_string_equal(stats().last_error, "none");
	Ops->on_down(Ctx, LINK_ATTEMPT_FAILED, "cannot reach 192.168.77.2");
	assert_true(stats().error_recorded);
	assert_string_equal(stats().last_error, "cannot reach 192.168.77.2");
}

static void smaller_receiver_limit_refuses_pending(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uintptr_t r = write_msg(fh, 200);

	Ops->on_up(Ctx, 100, 0);
	assert_int_equal(reply_of(r)->err, EMSGSIZE);
	assert_int_equal(stats().max_message, 100);
	assert_int_equal(spool_write_check(Sp, fh, 101, false), EMSGSIZE);
	handle_delete(&fh);
	assert_accounts();
}

/* ---- fsync waiters and handles ---- */

static void fsync_waits_for_the_handles_messages(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	write_msg(fh, 8);
	spool_fsync(Sp, fh, (fuse_req_t)1000);
	assert_null(reply_of(1000));
	complete(1, IBV_WC_SUCCESS);
	assert_null(reply_of(1000));
	complete(2, IBV_WC_SUCCESS);
	assert_int_equal(reply_of(1000)->err, 0);
	handle_delete(&fh);
}

static void fsync_reports_a_failure_once(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	spool_fsync(Sp, fh, (fuse_req_t)1000);
	complete(1, IBV_WC_REM_OP_ERR);
	assert_int_equal(reply_of(1000)->err, EIO);
	spool_fsync(Sp, fh, (fuse_req_t)1001);
	assert_int_equal(reply_of(1001)->err, 0);
	handle_delete(&fh);
}

static void fsync_with_nothing_in_flight_answers_at_once(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	spool_fsync(Sp, fh, (fuse_req_t)1000);
	assert_int_equal(reply_of(1000)->err, 0);
	handle_delete(&fh);
}

static void fsync_fences_unsignaled_sends_at_once(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	assert_false(Posts[0].signaled);
	spool_fsync(Sp, fh, (fuse_req_t)1000);
	assert_int_equal(Nposts, 2);
	assert_int_equal(Posts[1].op, LINK_FENCE);
	complete(2, IBV_WC_SUCCESS);
	assert_int_equal(reply_of(1000)->err, 0);
	handle_delete(&fh);
}

static void handle_lives_until_its_messages_end(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	assert_int_equal(fh->refs, 2);
	Watched = fh;
	handle_delete(&fh);
	assert_false(Watched_freed);
	complete(1, IBV_WC_SUCCESS);
	assert_true(Watched_freed);
}

/* handle_new reads what the open asks for: sync, the 0-byte intent, and counts it open */
static void handle_new_reads_the_open_flags(void **state)
{
	struct handle *fh, *st;

	(void)state;
	assert_int_equal(handle_new(Sp, O_WRONLY, Pool, NULL, &fh), 0);
	assert_false(fh->sync);
	assert_false(fh->empty_intent);
	assert_null(fh->frame); /* framing = write */
	assert_int_equal(fh->refs, 1);
	assert_int_equal(stats().open_handles, 1);
	handle_delete(&fh);
	assert_null(fh);
	assert_int_equal(stats().open_handles, 0);

	assert_int_equal(handle_new(Sp, O_WRONLY | O_DSYNC | O_TRUNC, Pool, NULL, &fh), 0);
	assert_true(fh->sync);
	assert_true(fh->empty_intent);
	handle_delete(&fh);

	/* mode = sync: every handle is */
	Cfg.mode = RPMAFS_MODE_SYNC;
	assert_int_equal(handle_new(Sp, O_WRONLY, Pool, NULL, &fh), 0);
	assert_true(fh->sync);
	handle_delete(&fh);

	/* a status snapshot: listed, not counted among the spool file's open files */
	assert_int_equal(handle_new_status(Sp, strdup("state: x\n"), 9, &st), 0);
	assert_int_equal(st->text_len, 9);
	assert_int_equal(stats().open_handles, 0);
	Watched = st;
	handle_delete(&st);
	assert_true(Watched_freed);
	/* a snapshot that could not be rendered: ENOMEM, nothing listed */
	assert_int_equal(handle_new_status(Sp, NULL, 0, &st), -ENOMEM);
}

/* framing = file: the handle has its frame; deleting it drops the bytes no close sent */
static void file_framed_handle_has_a_frame(void **state)
{
	struct frame_budget budget;
	struct handle *fh;

	(void)state;
	Cfg.framing = RPMAFS_FRAMING_FILE;
	frame_budget_init(&budget, NSLOTS);
	assert_int_equal(handle_new(Sp, O_WRONLY, Pool, &budget, &fh), 0);
	assert_non_null(fh->frame);
	assert_int_equal(frame_write(fh->frame, 0, false, "abc", 3, 4096), 0);
	assert_int_equal(pool_free_count(Pool), NSLOTS - 1); /* the frame's slot */
	handle_delete(&fh);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	assert_int_equal(atomic_load(&budget.held), 0);
}

/* the 0-byte message: O_TRUNC or truncated to 0, nothing written, nothing failed */
static void release_sends_empty_only_for_an_intent(void **state)
{
	struct handle *fh;

	(void)state;
	fh = open_handle(false);
	assert_false(handle_sends_empty(fh)); /* `>>` or a look-only open */
	handle_mark(fh, true, false);	      /* ftruncate(fd, 0) */
	assert_true(handle_sends_empty(fh));
	handle_delete(&fh);

	assert_int_equal(handle_new(Sp, O_WRONLY | O_TRUNC, Pool, NULL, &fh), 0);
	assert_true(handle_sends_empty(fh)); /* `: > f` */
	handle_mark(fh, false, true);	     /* a failed command */
	assert_false(handle_sends_empty(fh));
	handle_delete(&fh);

	assert_int_equal(handle_new(Sp, O_WRONLY | O_TRUNC, Pool, NULL, &fh), 0);
	assert_int_equal(spool_write_check(Sp, fh, 8, false), 0); /* it wrote */
	assert_false(handle_sends_empty(fh));
	handle_delete(&fh);
}

/* a handle whose RELEASE never came (lazy unmount) is freed by spool_delete */
static void unreleased_handle_freed_at_delete(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	complete(1, IBV_WC_SUCCESS);
	assert_int_equal(fh->refs, 1);
	Watched = fh;
	spool_stop(Sp);
	spool_close(Sp);
	assert_false(Watched_freed);
	spool_delete(&Sp);
	assert_null(Sp);
	assert_true(Watched_freed);
	/* teardown's spool again */
	assert_int_equal(spool_new(&Env, 2, &Cfg, &Sp), 0);
}

/* each constructor's message goes through the spool as its kind says */
static void each_kind_of_message_is_answered_as_its_kind(void **state)
{
	struct handle *fh;
	struct msg *msg;
	fuse_req_t req;
	unsigned slot;

	(void)state;
	up(0);
	fh = open_handle(true);
	/* a sync write: its size, at completion */
	uintptr_t w = write_msg(fh, 10);

	assert_null(reply_of(w));
	complete(1, IBV_WC_SUCCESS);
	assert_true(reply_of(w)->write);
	assert_int_equal(reply_of(w)->size, 10);
	/* a file message with close = return: 0 once queued, not a size */
	req = (fuse_req_t)Next_req++;
	Attempted++;
	assert_int_equal(msg_new_file(fh, req, Pool, slot_get(), 20, false, &msg), 0);
	spool_submit(Sp, msg);
	assert_false(reply_of((uintptr_t)req)->write);
	assert_int_equal(reply_of((uintptr_t)req)->err, 0);
	complete(2, IBV_WC_SUCCESS);
	/* a 0-byte draft: an empty send, its slot back at once, answered 0 at its end */
	req = (fuse_req_t)Next_req++;
	Attempted++;
	slot = slot_get();
	assert_int_equal(msg_new_draft(req, Pool, slot, 0, true, NULL, NULL, &msg), 0);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	spool_submit(Sp, msg);
	assert_int_equal(Posts[Nposts - 1].op, LINK_SEND_EMPTY);
	assert_null(reply_of((uintptr_t)req));
	complete(3, IBV_WC_SUCCESS);
	assert_false(reply_of((uintptr_t)req)->write);
	assert_int_equal(reply_of((uintptr_t)req)->err, 0);
	/* the release's 0-byte message: sent, nobody answered */
	unsigned replies = Nreplies;

	empty_msg(fh);
	assert_int_equal(Posts[Nposts - 1].op, LINK_SEND_EMPTY);
	complete(4, IBV_WC_SUCCESS);
	assert_int_equal(Nreplies, replies);
	assert_int_equal(stats().completed, 4);
	assert_accounts();
	handle_delete(&fh);
}

static void handle_without_messages_ends_at_release(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Watched = fh;
	handle_delete(&fh);
	assert_true(Watched_freed);
}

/* ---- 0-byte messages ---- */

static void zero_byte_message_is_an_empty_send(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);
	bool written = true;

	spool_take_error(Sp, fh, &written);
	assert_false(written);
	empty_msg(fh);
	handle_delete(&fh);
	assert_int_equal(Posts[0].op, LINK_SEND_EMPTY);
	assert_int_equal(Posts[0].len, 0);
	assert_int_equal(Nreplies, 0); /* released already: nothing owed */
	complete(1, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, 1);
	assert_int_equal(stats().bytes_confirmed, 0);
	assert_accounts();
}

static void zero_byte_message_refused_is_counted(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	empty_msg(fh);
	handle_delete(&fh);
	assert_int_equal(stats().refused, 1);
	assert_int_equal(Nreplies, 0);
	assert_accounts();
}

/* ---- the rest ---- */

static void accounting_holds_through_a_mix(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);		 /* pending */
	spool_tick(Sp, now_ms() + 6000); /* refused */
	up(0);
	for (int i = 0; i < 4; i++)
		write_msg(fh, 8);
	empty_msg(fh);
	assert_accounts();
	complete(3, IBV_WC_SUCCESS);
	assert_accounts();
	complete(4, IBV_WC_LOC_PROT_ERR);
	assert_accounts();
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	assert_accounts();
	struct spool_stats st = stats();

	/* wr_id 1 refused; 2, 3 confirmed by 3; 4 failed; 5, 6 flushed */
	assert_int_equal(st.completed, 2);
	assert_int_equal(st.failed, 3);
	assert_int_equal(st.refused, 1);
	handle_delete(&fh);
}

/* ---- posting in batches (docs/design.md §8.4) ---- */

static void what_waited_for_the_connection_goes_as_one_chain(void **state)
{
	uintptr_t r[5];

	(void)state;
	struct handle *fh = open_handle(false);

	for (int i = 0; i < 5; i++)
		r[i] = write_msg(fh, 8 + i);
	/* not connected: queued, not answered (§8.5), nothing posted */
	for (int i = 0; i < 5; i++)
		assert_null(reply_of(r[i]));
	assert_int_equal(Nposts, 0);
	assert_int_equal(stats().pending, 5);
	assert_accounts();
	up(0);
	assert_int_equal(Batch_calls, 1);
	assert_int_equal(Batch_sizes[0], 5);
	assert_int_equal(stats().post_calls, 1);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(Posts[i].wr_id, i + 1); /* in the order written */
		assert_int_equal(Posts[i].len, 8 + i);
		assert_true(reply_of(r[i])->write); /* answered once posted */
	}
	assert_int_equal(stats().pending, 0);
	assert_int_equal(stats().in_flight, 5);
	assert_accounts();
	complete(Posts[4].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(replies_to(r[i]), 1);
	/* connected: a write is answered when queued and posted by its worker, a chain of 1 */
	uintptr_t w = write_msg(fh, 8);

	assert_true(reply_of(w)->write);
	assert_int_equal(Batch_calls, 2);
	assert_int_equal(Batch_sizes[1], 1);
	complete(Posts[5].wr_id, IBV_WC_SUCCESS);
	handle_delete(&fh);
	assert_accounts();
}

static void a_chain_stops_at_the_window(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	for (int i = 0; i < NSLOTS; i++)
		write_msg(fh, 8);
	empty_msg(fh);
	empty_msg(fh);
	empty_msg(fh);
	up(0);
	assert_int_equal(Batch_calls, 1);
	assert_int_equal(Batch_sizes[0], WINDOW);
	assert_int_equal(stats().pending, 1);
	assert_accounts();
	/* a completion opens the window: the rest goes (from the loop thread) */
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(Batch_calls, 2);
	assert_int_equal(Batch_sizes[1], 1);
	assert_int_equal(Posts[WINDOW].op, LINK_SEND_EMPTY);
	complete(Posts[WINDOW].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, WINDOW + 1);
	handle_delete(&fh);
	assert_accounts();
}

static void a_chain_that_fails_midway(void **state)
{
	uintptr_t r[4];

	(void)state;
	struct handle *fh = open_handle(false);

	for (int i = 0; i < 4; i++)
		r[i] = write_msg(fh, 8);
	Post_ret = RPMA_E_PROVIDER;
	Batch_fail_at = 2;
	up(0);
	/* 2 reached the queue, the 3rd failed (posted and failed), the 4th waits */
	assert_int_equal(Nposts, 2);
	assert_int_equal(stats().posted, 3);
	assert_int_equal(stats().failed, 1);
	assert_int_equal(stats().in_flight, 2);
	assert_int_equal(stats().pending, 1);
	assert_int_equal(Drops, 1);
	assert_true(reply_of(r[0])->write);
	assert_true(reply_of(r[1])->write);
	assert_int_equal(reply_of(r[2])->err, EIO); /* not answered yet: it learns now */
	assert_null(reply_of(r[3]));
	assert_accounts();
	Post_ret = 0;
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	assert_int_equal(stats().failed, 3);
	assert_accounts();
	handle_delete(&fh);
}

static void an_answered_write_whose_post_fails_says_eio_next(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	Post_ret = RPMA_E_PROVIDER;
	uintptr_t r = write_msg(fh, 8);

	/* answered when queued (§4.2); the post after the reply failed */
	assert_true(reply_of(r)->write);
	assert_int_equal(stats().posted, 1);
	assert_int_equal(stats().failed, 1);
	assert_int_equal(Drops, 1);
	/* the next write, fsync or close of the descriptor says EIO, once */
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	assert_int_equal(spool_take_error(Sp, fh, NULL), 0);
	Post_ret = 0;
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	assert_accounts();
	handle_delete(&fh);
}

static void a_chain_is_signaled_as_sends_one_by_one(void **state)
{
	unsigned every = WINDOW / 4, signaled = 0;

	(void)state;
	struct handle *fh = open_handle(false);

	for (int i = 0; i < NSLOTS; i++)
		write_msg(fh, 8);
	up(0);
	assert_int_equal(Batch_calls, 1);
	assert_int_equal(Nposts, NSLOTS);
	for (unsigned i = 0; i < Nposts; i++) {
		assert_int_equal(Posts[i].signaled, (i + 1) % every == 0);
		signaled += Posts[i].signaled;
	}
	assert_int_equal(signaled, NSLOTS / every);
	assert_true(Sp->fence_at_ms != 0);
	complete(Posts[NSLOTS - 1].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, NSLOTS);
	handle_delete(&fh);
	assert_accounts();
}

static void not_connected_async_write_still_waits(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uintptr_t r = write_msg(fh, 8);

	/* queued, not answered: it waits for the connection (§8.5) */
	assert_null(reply_of(r));
	up(0);
	assert_int_equal(Nposts, 1);
	assert_true(reply_of(r)->write);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	handle_delete(&fh);
	assert_accounts();
}

static void null_peer_completes_at_once(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uintptr_t r = write_msg(fh, 10);

	assert_true(reply_of(r)->write);
	assert_int_equal(Nposts, 0);
	assert_int_equal(stats().completed, 1);
	assert_string_equal(stats().state, "connected");
	fh->sync = true;
	r = write_msg(fh, 5);
	assert_int_equal(replies_to(r), 1);
	assert_int_equal(stats().bytes_confirmed, 15);
	handle_delete(&fh);
	assert_accounts();
}

static void close_refuses_pending_and_fails_in_flight(void **state)
{
	(void)state;
	up(1);
	struct handle *fh = open_handle(true);
	uintptr_t a = write_msg(fh, 8);
	uintptr_t b = write_msg(fh, 8);

	spool_stop(Sp);
	assert_int_equal(Stops, 1);
	spool_close(Sp);
	assert_int_equal(Closes, 1);
	assert_int_equal(reply_of(a)->err, EIO);
	assert_int_equal(reply_of(b)->err, ESHUTDOWN);
	handle_delete(&fh);
	assert_accounts();
}

static void state_is_the_links(void **state)
{
	(void)state;
	assert_string_equal(stats().state, "connecting");
	Status = "failed";
	assert_string_equal(stats().state, "failed");
}

static void reconnect_is_counted(void **state)
{
	(void)state;
	up(0);
	Ops->on_down(Ctx, LINK_LOST, "lost");
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	assert_int_equal(stats().reconnects, 0);
	up(0);
	assert_int_equal(stats().reconnects, 1);
}

static void cached_attributes_invalidated_on_completion(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	atomic_store(&Sp->attr_cached, true);
	complete(1, IBV_WC_SUCCESS);
	assert_int_equal(Invalidations, 1);
	assert_false(atomic_load(&Sp->attr_cached));
	complete(1, IBV_WC_SUCCESS);
	assert_int_equal(Invalidations, 1); /* not cached: nothing to invalidate */
	handle_delete(&fh);
}

static void tick_returns_the_soonest_deadline(void **state)
{
	(void)state;
	Link_next = 42;
	assert_int_equal(spool_tick(Sp, now_ms()), 42);
	struct handle *fh = open_handle(false);

	write_msg(fh, 8);
	Link_next = UINT64_MAX;
	uint64_t at = spool_tick(Sp, now_ms());

	assert_true(at >= now_ms() + 4000 && at < UINT64_MAX);
	handle_delete(&fh);
}

/* ---- receiver confirmation (docs/design.md §8.6) ---- */

static void ack(uint32_t acked, uint16_t credits, unsigned unanswered)
{
	struct rpmafs_ack a = {acked, credits, 0};

	Ops->on_ack(Ctx, &a, unanswered);
}

/* with receiver confirmation also completed = acked + unacked */
static void assert_acked_accounts(void)
{
	struct spool_stats st = stats();

	assert_accounts();
	assert_int_equal(st.completed, st.acked + st.unacked);
}

static void transport_confirmation_carries_no_numbers(void **state)
{
	(void)state;
	struct handle *fh = open_handle(true);

	up(0); /* Acks false: a plain receiver */
	uintptr_t r = write_msg(fh, 8);

	assert_int_equal(Nposts, 1);
	assert_false(Posts[0].has_imm);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_non_null(reply_of(r));
	assert_false(stats().confirm_receiver);
	assert_int_equal(stats().acked, 0);
	assert_int_equal(stats().bytes_confirmed, 8);
	handle_delete(&fh);
}

static void sync_write_returns_at_the_ack(void **state)
{
	(void)state;
	struct handle *fh = open_handle(true);

	Acks = true;
	up(8);
	assert_true(stats().confirm_receiver);
	uintptr_t r = write_msg(fh, 8);

	assert_int_equal(Nposts, 1);
	assert_true(Posts[0].has_imm);
	/* number 1, and someone waits: acknowledge at once */
	assert_int_equal(Posts[0].imm, 1 | RPMAFS_IMM_PROMPT);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	/* the receiving NIC has it; the receiving program may not */
	assert_null(reply_of(r));
	assert_int_equal(stats().completed, 1);
	assert_int_equal(stats().unacked, 1);
	assert_int_equal(stats().bytes_confirmed, 0);
	assert_int_equal(pool_free_count(Pool), NSLOTS - 1); /* it keeps its slot */
	assert_acked_accounts();
	ack(1, 8, 0);
	assert_non_null(reply_of(r));
	assert_true(reply_of(r)->write);
	assert_int_equal(stats().acked, 1);
	assert_int_equal(stats().unacked, 0);
	assert_int_equal(stats().bytes_confirmed, 8);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	assert_acked_accounts();
	handle_delete(&fh);
}

/*
 * Every write a worker posts is settled by that worker (link_settle, the
 * CQ armed on demand, docs/design.md §8.4); awaits says whether a
 * completion is still to come: while a send is in flight, not once it
 * completed.
 */
static void posts_are_settled_by_their_worker(void **state)
{
	(void)state;
	up(0);
	struct handle *fh = open_handle(false);

	assert_false(Ops->awaits(Ctx));
	write_msg(fh, 64);
	assert_int_equal(Nposts, 1);
	assert_int_equal(Settles, 1);
	assert_true(Settle_awaited);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_false(Ops->awaits(Ctx));
	/* a sync write reaped in its worker's spin: nothing awaited by the settle after it */
	handle_delete(&fh);
	fh = open_handle(true);
	Reap_mode = REAP_LAST;
	write_msg(fh, 64);
	assert_int_equal(Settles, 2);
	assert_false(Settle_awaited);
	handle_delete(&fh);
	assert_accounts();
}

/*
 * Receiver confirmation: a completed send's acknowledgement that nobody
 * waits for (an async write, no fsync) does not arm the CQ while the spool
 * posts: the tick looks for it once the spool has been quiet
 * SPOOL_ACK_LOOK_MS, and then arms it. One that someone waits for (an
 * fsync) arms it at once.
 */
static void acknowledgement_nobody_waits_for_is_looked_for_later(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uint64_t look;

	Acks = true;
	up(8);
	assert_false(Ops->awaits(Ctx));
	write_msg(fh, 8);
	assert_true(Settle_awaited); /* in flight */
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().unacked, 1);
	/* the spool has just posted: no event for it, the tick looks once quiet */
	Sp->last_post_ms = now_ms_coarse();
	Armed = 0;
	assert_false(Ops->awaits(Ctx));
	look = Sp->ack_look_ms;
	assert_int_equal(look, Sp->last_post_ms + SPOOL_ACK_LOOK_MS);
	assert_int_equal(Armed, look); /* the loop's timer */
	assert_false(Ops->awaits(Ctx));
	assert_int_equal(Sp->ack_look_ms, look); /* armed once */
	/* due while the spool still posts: later, once quiet */
	Sp->last_post_ms = look;
	spool_tick(Sp, look);
	assert_int_equal(Looks, 0);
	assert_int_equal(Sp->ack_look_ms, look + SPOOL_ACK_LOOK_MS);
	/* due and quiet: the tick looks, and what is still to come arms the CQ */
	Sp->last_post_ms = 0;
	spool_tick(Sp, Sp->ack_look_ms);
	assert_int_equal(Looks, 1);
	assert_true(Settle_awaited);
	assert_int_equal(Sp->ack_look_ms, 0);
	/* an fsync waits for it: the CQ is armed for it */
	assert_int_equal(spool_fsync(Sp, fh, (fuse_req_t)(uintptr_t)77), 0);
	assert_true(Ops->awaits(Ctx));
	ack(1, 8, 0);
	assert_false(Ops->awaits(Ctx));
	handle_delete(&fh);
}

/* a sync write's reply is owed at its acknowledgement: the CQ is armed for it */
static void acknowledgement_owed_a_reply_arms(void **state)
{
	(void)state;
	struct handle *fh = open_handle(true);
	uintptr_t r;

	Acks = true;
	up(8);
	r = write_msg(fh, 8);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_null(reply_of(r));
	assert_true(Ops->awaits(Ctx));
	ack(1, 8, 0);
	assert_non_null(reply_of(r));
	assert_false(Ops->awaits(Ctx));
	handle_delete(&fh);
}

/* a receiver-confirmed sync write whose send completed: parked, its reply owed */
static uintptr_t park_sync_write(struct handle **fh, uint64_t *t0)
{
	*fh = open_handle(true);
	Acks = true;
	up(8);
	*t0 = now_ms_coarse();
	uintptr_t r = write_msg(*fh, 8);

	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().unacked, 1);
	return r;
}

/*
 * A message the NIC took but the receiver never acknowledged, on a link
 * gone silent: no completion can tell, so the tick asks (a REQUEST) a
 * quarter of the silence after the post, and drops the link at the
 * silence (fault faults-unmount-dead: a sync writer waited ~14 s for the
 * CM to notice instead of failing within send_timeout_ms).
 */
static void unanswered_request_drops_a_silent_link(void **state)
{
	(void)state;
	struct handle *fh;
	uint64_t t0;
	uintptr_t r = park_sync_write(&fh, &t0);

	/* the tick looks a quarter of the silence (5000 ms) after the post */
	assert_true(Armed >= t0 + 1250 && Armed <= now_ms() + 1250);
	assert_true(spool_tick(Sp, t0 + 1000) >= t0 + 1250);
	assert_int_equal(Nposts, 1);
	uint64_t due = spool_tick(Sp, t0 + 1300);

	assert_int_equal(Nposts, 2);
	assert_true(Posts[1].has_imm);
	assert_int_equal(Posts[1].imm, RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT);
	assert_int_equal(Posts[1].len, 0);
	assert_true(due >= t0 + 5000 && due <= now_ms() + 5000);
	/* one request at a time */
	spool_tick(Sp, t0 + 4000);
	assert_int_equal(Nposts, 2);
	assert_int_equal(Drops, 0);
	spool_tick(Sp, due);
	assert_int_equal(Drops, 1);
	assert_non_null(strstr(stats().last_error, "no acknowledgement within 5000 ms"));
	assert_null(reply_of(r)); /* it goes again after the drain (§8.6) */
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	assert_int_equal(stats().pending, 1);
	assert_int_equal(stats().unacked, 0);
	handle_delete(&fh);
}

/* the inbox acknowledges only what was read, but answers a REQUEST at once */
static void answered_request_keeps_a_slow_receiver(void **state)
{
	(void)state;
	struct handle *fh;
	uint64_t t0;
	uintptr_t r = park_sync_write(&fh, &t0);

	spool_tick(Sp, t0 + 1300);
	assert_int_equal(Nposts, 2);
	ack(0, 8, 0); /* nothing read yet: the answer acknowledges nothing */
	uint64_t heard = now_ms_coarse();
	uint64_t due = spool_tick(Sp, heard + 1000);

	/* quiet again: asked again a quarter of the silence after the answer */
	assert_true(due >= heard + 1250 && due <= now_ms() + 1250);
	assert_int_equal(Nposts, 2);
	/* long after the first request: a new one, and still no drop */
	due = spool_tick(Sp, t0 + 5000);
	assert_int_equal(Nposts, 3);
	assert_int_equal(Drops, 0);
	assert_null(reply_of(r));
	assert_int_equal(due, t0 + 7500);
	ack(1, 8, 0);
	assert_non_null(reply_of(r));
	/* nothing waits for an acknowledgement: nothing is asked, nothing dropped */
	spool_tick(Sp, now_ms() + 60000);
	assert_int_equal(Nposts, 3);
	assert_int_equal(Drops, 0);
	handle_delete(&fh);
}

/*
 * The pool's reserve (docs/design.md §13): held back by a receiver's
 * credits, async writes return once queued only while more buffers are
 * free than there are workers; past that, once posted. Without it one
 * writer to a slow receiver took every buffer and the mount read no
 * other FUSE request (fs-inbox).
 */
static void writes_at_the_reserve_return_once_posted(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uintptr_t r[NSLOTS];

	Env.nworkers = 2;
	Acks = true;
	up(1); /* one number past the last acknowledged: one message in the receiver */
	for (int i = 0; i < NSLOTS; i++)
		r[i] = write_msg(fh, 8); /* each holds a pool buffer */
	assert_int_equal(Nposts, 1);
	/* answered while more than 2 buffers were free afterwards: writes 1..5 */
	for (int i = 0; i < NSLOTS; i++)
		if (i < NSLOTS - 3)
			assert_non_null(reply_of(r[i]));
		else
			assert_null(reply_of(r[i]));
	/* each acknowledgement lets one more go; the held-back writes return as they go */
	for (uint32_t n = 1; n <= NSLOTS - 3; n++) {
		complete(Posts[n - 1].wr_id, IBV_WC_SUCCESS);
		ack(n, 1, 0);
	}
	assert_int_equal(Nposts, NSLOTS - 2);
	assert_non_null(reply_of(r[NSLOTS - 3]));
	assert_null(reply_of(r[NSLOTS - 2]));
	assert_true(reply_of(r[NSLOTS - 3])->write);
	for (uint32_t n = NSLOTS - 2; n <= NSLOTS; n++) {
		complete(Posts[n - 1].wr_id, IBV_WC_SUCCESS);
		ack(n, 1, 0);
	}
	for (int i = 0; i < NSLOTS; i++)
		assert_true(reply_of(r[i])->write);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	handle_delete(&fh);
	assert_acked_accounts();
}

static void ack_covers_every_earlier_message(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(8);
	for (int i = 0; i < 3; i++)
		write_msg(fh, 4);
	assert_int_equal(Nposts, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(Posts[i].imm & RPMAFS_SEQ_MASK, i + 1);
	/* an ack may come before the completions it follows are reaped */
	ack(2, 8, 0);
	complete(Posts[2].wr_id, IBV_WC_SUCCESS); /* completes all three */
	assert_int_equal(stats().acked, 2);
	assert_int_equal(stats().unacked, 1);
	assert_int_equal(fh->in_flight, 1);
	ack(3, 8, 0);
	assert_int_equal(stats().acked, 3);
	assert_int_equal(stats().bytes_confirmed, 12);
	assert_int_equal(fh->in_flight, 0);
	assert_acked_accounts();
	handle_delete(&fh);
}

static void credits_hold_back_posts(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(2);
	for (int i = 0; i < 4; i++)
		write_msg(fh, 4);
	/* room for numbers 1 and 2; the second asks for an ack, the room running out */
	assert_int_equal(Nposts, 2);
	assert_int_equal(stats().pending, 2);
	assert_true(Posts[1].imm & RPMAFS_IMM_PROMPT);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(Nposts, 2); /* a completion is no credit */
	ack(1, 2, 0);		     /* room up to 3 */
	assert_int_equal(Nposts, 3);
	ack(3, 2, 0); /* 3 is not sent yet: the link checks that; here up to 5 */
	assert_int_equal(Nposts, 4);
	handle_delete(&fh);
}

static void a_chain_carries_numbers_up_to_the_credits(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	for (int i = 0; i < 6; i++)
		write_msg(fh, 4);
	up(4);
	/* one chain, every send numbered in order, as far as the credits reach */
	assert_int_equal(Batch_calls, 1);
	assert_int_equal(Batch_sizes[0], 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_true(Posts[i].has_imm);
		assert_int_equal(Posts[i].imm & RPMAFS_SEQ_MASK, i + 1);
	}
	/* the last ones before the limit ask for a prompt acknowledgement */
	assert_false(Posts[0].imm & RPMAFS_IMM_PROMPT);
	assert_true(Posts[3].imm & RPMAFS_IMM_PROMPT);
	assert_int_equal(stats().pending, 2);
	complete(Posts[3].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(Batch_calls, 1); /* a completion is no credit */
	ack(4, 4, 0);
	/* the rest goes as the next chain, numbered on */
	assert_int_equal(Batch_calls, 2);
	assert_int_equal(Batch_sizes[1], 2);
	assert_int_equal(Posts[4].imm & RPMAFS_SEQ_MASK, 5);
	assert_int_equal(Posts[5].imm & RPMAFS_SEQ_MASK, 6);
	complete(Posts[5].wr_id, IBV_WC_SUCCESS);
	ack(6, 4, 0);
	assert_int_equal(stats().acked, 6);
	assert_acked_accounts();
	handle_delete(&fh);
}

static void a_chain_failing_midway_numbers_only_what_went(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	for (int i = 0; i < 3; i++)
		write_msg(fh, 4);
	Post_ret = RPMA_E_PROVIDER;
	Batch_fail_at = 1;
	up(8);
	assert_int_equal(Nposts, 1);
	assert_int_equal(Posts[0].imm & RPMAFS_SEQ_MASK, 1);
	/* the one that failed to post took no number: the next connection gives 2 to the next */
	assert_int_equal(Sp->cf.next, 2);
	Post_ret = 0;
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	/* number 1 was sent, not acknowledged: it goes again, first, with its number */
	up(8);
	assert_int_equal(Posts[1].imm & RPMAFS_SEQ_MASK, 1);
	assert_int_equal(Posts[2].imm & RPMAFS_SEQ_MASK, 2);
	assert_int_equal(Batch_sizes[Batch_calls - 1], 2);
	complete(Posts[2].wr_id, IBV_WC_SUCCESS);
	ack(2, 8, 0);
	assert_int_equal(stats().resent, 1);
	assert_acked_accounts();
	handle_delete(&fh);
}

static void fsync_asks_for_an_ack_and_waits_for_it(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(8);
	write_msg(fh, 8);
	assert_false(Posts[0].imm & RPMAFS_IMM_PROMPT); /* nobody waits yet */
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	spool_fsync(Sp, fh, (fuse_req_t)1000);
	/* a 0-byte request, no number, wr_id 0 (settles nothing) */
	assert_int_equal(Nposts, 2);
	assert_int_equal(Posts[1].op, LINK_SEND_EMPTY);
	assert_int_equal(Posts[1].imm, RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT);
	assert_int_equal(Posts[1].wr_id, 0);
	assert_null(reply_of(1000));
	/* while it waits, new messages ask for a prompt ack */
	struct handle *other = open_handle(false);

	write_msg(other, 4);
	assert_true(Posts[2].imm & RPMAFS_IMM_PROMPT);
	ack(1, 8, 0);
	assert_non_null(reply_of(1000));
	assert_int_equal(reply_of(1000)->err, 0);
	complete(Posts[2].wr_id, IBV_WC_SUCCESS);
	ack(2, 8, 0);
	handle_delete(&fh);
	handle_delete(&other);
}

static void lose_the_link(void)
{
	Status = "reconnecting";
	Ops->on_down(Ctx, LINK_LOST, "Connection lost");
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
}

static void unacked_messages_go_again_first(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(8);
	write_msg(fh, 8);
	write_msg(fh, 4);
	write_msg(fh, 2);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS); /* 1 and 2 completed, not acked */
	ack(1, 8, 0);				  /* 1 is written out */
	lose_the_link();			  /* 3 is flushed, 2 is parked */
	write_msg(fh, 1);			  /* newer: behind the re-sends */
	struct spool_stats st = stats();

	assert_int_equal(st.pending, 3);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.acked, 1);
	assert_acked_accounts();
	up(8);
	assert_int_equal(Nposts, 6);
	/* in their order, with their numbers, before anything newer */
	assert_int_equal(Posts[3].imm & RPMAFS_SEQ_MASK, 2);
	assert_int_equal(Posts[3].len, 4);
	assert_int_equal(Posts[4].imm & RPMAFS_SEQ_MASK, 3);
	assert_int_equal(Posts[5].imm & RPMAFS_SEQ_MASK, 4);
	assert_int_equal(Posts[5].len, 1);
	assert_int_equal(stats().resent, 2);
	complete(Posts[5].wr_id, IBV_WC_SUCCESS);
	ack(4, 8, 0);
	st = stats();
	assert_int_equal(st.acked, 4);
	assert_int_equal(st.bytes_confirmed, 15);
	assert_int_equal(fh->in_flight, 0);
	assert_int_equal(spool_take_error(Sp, fh, NULL), 0); /* nothing failed */
	assert_acked_accounts();
	handle_delete(&fh);
}

/*
 * The receiver's ack of a message can come before its send's completion,
 * and the connection can fail between them: the message was written out,
 * so it is confirmed, not failed, and not sent again.
 */
static void acked_before_its_failed_completion_is_confirmed(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(8);
	write_msg(fh, 8);
	write_msg(fh, 4);
	ack(1, 8, 0); /* 1 is written out; its send has not completed yet */
	assert_int_equal(stats().acked, 0);
	complete(Posts[0].wr_id, IBV_WC_WR_FLUSH_ERR);
	complete(Posts[1].wr_id, IBV_WC_WR_FLUSH_ERR);
	struct spool_stats st = stats();

	assert_int_equal(st.acked, 1);
	assert_int_equal(st.bytes_confirmed, 8);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.unacked, 1); /* 2: not acknowledged, parked to go again */
	assert_acked_accounts();
	lose_the_link();
	up(8);
	assert_int_equal(Nposts, 3); /* only 2 goes again */
	assert_int_equal(Posts[2].imm & RPMAFS_SEQ_MASK, 2);
	assert_int_equal(stats().resent, 1);
	complete(Posts[2].wr_id, IBV_WC_SUCCESS);
	ack(2, 8, 0);
	assert_int_equal(stats().acked, 2);
	assert_int_equal(stats().failed, 0);
	assert_int_equal(spool_take_error(Sp, fh, NULL), 0);
	assert_acked_accounts();
	handle_delete(&fh);
}

/*
 * A responder's fault is not the message's: REM_OP_ERR (the lab: rpma-recv
 * killed while a 1 MiB send was landing, its receive buffers deregistered
 * under it) parks the message to go again on the next connection, where
 * REM_INV_REQ_ERR (the receive was too small for it) fails it.
 */
static void a_responder_fault_goes_again(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(8);
	write_msg(fh, 8);
	write_msg(fh, 4);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	complete(Posts[1].wr_id, IBV_WC_REM_OP_ERR);
	struct spool_stats st = stats();

	assert_int_equal(st.failed, 0);
	assert_int_equal(st.unacked, 2);
	assert_string_equal(st.last_error, ibv_wc_status_str(IBV_WC_REM_OP_ERR));
	lose_the_link();
	up(8);
	assert_int_equal(Nposts, 4);
	assert_int_equal(Posts[2].imm & RPMAFS_SEQ_MASK, 1);
	assert_int_equal(Posts[3].imm & RPMAFS_SEQ_MASK, 2);
	assert_int_equal(Posts[3].len, 4);
	complete(Posts[3].wr_id, IBV_WC_SUCCESS);
	ack(2, 8, 0);
	assert_int_equal(stats().acked, 2);
	assert_int_equal(stats().failed, 0);
	assert_int_equal(spool_take_error(Sp, fh, NULL), 0);
	assert_acked_accounts();
	/* the message's own fault: failed, not sent again */
	write_msg(fh, 2);
	complete(Posts[4].wr_id, IBV_WC_REM_INV_REQ_ERR);
	assert_int_equal(stats().failed, 1);
	assert_int_equal(stats().unacked, 0);
	lose_the_link();
	up(8);
	assert_int_equal(Nposts, 5);
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	handle_delete(&fh);
}

static void resend_fails_after_send_timeout(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	struct handle *sync = open_handle(true);

	Acks = true;
	up(8);
	write_msg(fh, 8);
	uintptr_t r = write_msg(sync, 4);

	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	lose_the_link();
	assert_int_equal(stats().pending, 2);
	assert_null(reply_of(r)); /* the sync write still waits */
	spool_tick(Sp, now_ms() + Cfg.send_timeout_ms + 1);
	struct spool_stats st = stats();

	assert_int_equal(st.failed, 2); /* failed, not refused: they were sent */
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.resent, 0);
	assert_int_equal(st.bytes_confirmed, 0);
	assert_acked_accounts();
	assert_int_equal(reply_of(r)->err, EIO);
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	handle_delete(&fh);
	handle_delete(&sync);
}

/*
 * protect = encrypt: a re-sent message is posted with the record of its
 * first post, so the link gives it its plaintext back before sealing it
 * again; every record is forgotten when its message ends
 */
static void encrypted_resend_is_unsealed_before_it_goes_again(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = Encrypts = true;
	up(8);
	write_msg(fh, 8);
	write_msg(fh, 4);
	write_msg(fh, 2);
	empty_msg(fh); /* no payload: no record */
	assert_int_equal(Sealed_live, 3);
	complete(Posts[3].wr_id, IBV_WC_SUCCESS);
	ack(1, 8, 0); /* 1 is written out: its record goes */
	assert_int_equal(Sealed_live, 2);
	lose_the_link(); /* 2 and 3 wait to go again, still sealed by the old connection */
	assert_int_equal(Sealed_live, 2);
	assert_int_equal(Unsealed, 0);
	up(8);
	assert_int_equal(Nposts, 7);
	assert_int_equal(Unsealed, 2); /* plaintext back first, then sealed anew */
	assert_int_equal(Sealed_live, 2);
	complete(Posts[6].wr_id, IBV_WC_SUCCESS);
	ack(4, 8, 0);
	assert_int_equal(Sealed_live, 0);
	assert_int_equal(stats().acked, 4);
	assert_acked_accounts();
	handle_delete(&fh);
}

/* a sealed re-send that fails for good (send_timeout_ms) forgets its record too */
static void encrypted_resend_that_fails_forgets_its_seal(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = Encrypts = true;
	up(8);
	write_msg(fh, 8);
	write_msg(fh, 4);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	lose_the_link();
	assert_int_equal(Sealed_live, 2);
	spool_tick(Sp, now_ms() + Cfg.send_timeout_ms + 1);
	assert_int_equal(stats().failed, 2);
	assert_int_equal(Sealed_live, 0);
	assert_int_equal(Unsealed, 0);
	handle_delete(&fh);
}

/*
 * A chain that fails midway was sealed whole: the sends past the failure
 * wait with their payload encrypted, and their next post unseals them
 */
static void encrypted_chain_failing_midway_unseals_what_waits(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = Encrypts = true;
	for (int i = 0; i < 4; i++)
		write_msg(fh, 8);
	Post_ret = RPMA_E_PROVIDER;
	Batch_fail_at = 2;
	up(8);
	assert_int_equal(stats().pending, 1);
	assert_int_equal(Sealed_live, 3); /* the failed one ended: its record went */
	Post_ret = 0;
	lose_the_link(); /* the two posted go again, numbered; so does the 4th */
	up(8);
	assert_int_equal(Unsealed, 3);
	assert_int_equal(Sealed_live, 3);
	complete(Posts[Nposts - 1].wr_id, IBV_WC_SUCCESS);
	ack(4, 8, 0);
	assert_int_equal(Sealed_live, 0);
	assert_acked_accounts();
	handle_delete(&fh);
}

/*
 * Messages that failed while the link was down (re-sends past
 * send_timeout_ms) took their numbers with them: the next connection's
 * credits count from its own first number, or a full window of failed
 * numbers would leave it no room, and every new write would wait for good
 * (seen in the lab: fs-reconnect, 252 pending on a connected spool).
 */
static void credits_count_from_the_next_connections_first_number(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(2);
	write_msg(fh, 8);
	write_msg(fh, 8); /* numbers 1 and 2: the whole window */
	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	lose_the_link();
	spool_tick(Sp, now_ms() + Cfg.send_timeout_ms + 1);
	assert_int_equal(stats().failed, 2);
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	up(2);
	write_msg(fh, 4);
	write_msg(fh, 4);
	assert_int_equal(Nposts, 4);
	assert_int_equal(Posts[2].imm & RPMAFS_SEQ_MASK, 3);
	assert_int_equal(Posts[3].imm & RPMAFS_SEQ_MASK, 4);
	assert_int_equal(stats().pending, 0);
	complete(Posts[3].wr_id, IBV_WC_SUCCESS);
	ack(4, 2, 0);
	assert_int_equal(stats().acked, 2);
	assert_acked_accounts();
	handle_delete(&fh);
}

/*
 * The next connection goes to a receiver that does not acknowledge (auto:
 * transport confirmation). The messages numbered on the first one and sent
 * again on it are confirmed by their completions, as every message on it
 * is: parked, they would wait for an acknowledgement that never comes, and
 * the sync write, the fsync and the close behind them would hang.
 */
static void resend_on_a_plain_connection_finishes_by_completion(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	struct handle *sync = open_handle(true);

	Acks = true;
	up(8);
	write_msg(fh, 8);
	uintptr_t r = write_msg(sync, 4);

	complete(Posts[1].wr_id, IBV_WC_SUCCESS); /* parked, not acknowledged */
	assert_int_equal(stats().unacked, 2);
	lose_the_link();
	assert_int_equal(spool_fsync(Sp, fh, (fuse_req_t)1000), 0);
	assert_null(reply_of(1000));
	Acks = false;
	up(0);
	/* again, in order, without immediate data: this receiver takes no numbers */
	assert_int_equal(Nposts, 4);
	assert_false(Posts[2].has_imm);
	assert_false(Posts[3].has_imm);
	assert_int_equal(Posts[2].len, 8);
	assert_int_equal(Posts[3].len, 4);
	assert_int_equal(stats().resent, 2);
	assert_null(reply_of(r));
	complete(Posts[3].wr_id, IBV_WC_SUCCESS);
	struct spool_stats st = stats();

	assert_int_equal(st.unacked, 0);
	assert_int_equal(st.in_flight, 0);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.completed, 2);
	assert_int_equal(st.bytes_confirmed, 12);
	assert_int_equal(Sp->cf.parked.count, 0);
	assert_non_null(reply_of(r));
	assert_int_equal(reply_of(r)->err, 0);
	assert_non_null(reply_of(1000));
	assert_int_equal(reply_of(1000)->err, 0);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	handle_delete(&fh);
	handle_delete(&sync);
}

/*
 * A message that waited for one outage and, once connected, still waits
 * (for the receiver's credits) gets send_timeout_ms afresh at the next
 * loss: the deadline of the first outage would fail it as soon as the
 * second began.
 */
static void a_new_outage_gives_waiting_messages_a_new_deadline(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	write_msg(fh, 4);
	write_msg(fh, 4);
	assert_true(Sp->pending.head->deadline_ms > 0); /* waits for the connection */
	/* room for one */
	up(1);
	assert_int_equal(Nposts, 1);
	assert_int_equal(stats().pending, 1);
	assert_int_equal(Sp->pending.head->deadline_ms, 0); /* connected: no deadline */
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	ack(1, 0, 0); /* the first is written out; no room for the second yet */
	assert_int_equal(stats().pending, 1);
	/* the first outage's deadline passes, while connected (nothing in flight or parked) */
	spool_tick(Sp, now_ms() + Cfg.send_timeout_ms + 1);
	assert_int_equal(stats().failed + stats().refused, 0);
	uint64_t t0 = now_ms();

	Status = "reconnecting";
	Ops->on_down(Ctx, LINK_LOST, "Connection lost");
	uint64_t d = Sp->pending.head->deadline_ms;

	assert_true(d >= t0 + Cfg.send_timeout_ms && d <= now_ms() + Cfg.send_timeout_ms);
	spool_tick(Sp, t0 + Cfg.send_timeout_ms / 2);
	assert_int_equal(stats().failed + stats().refused, 0);
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	up(8);
	assert_int_equal(Nposts, 2);
	assert_int_equal(Posts[1].imm & RPMAFS_SEQ_MASK, 2);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	ack(2, 8, 0);
	assert_int_equal(stats().acked, 2);
	assert_int_equal(stats().failed + stats().refused, 0);
	assert_int_equal(spool_take_error(Sp, fh, NULL), 0);
	handle_delete(&fh);
}

/* a spool that offers receiver confirmation has a session of its own; transport has none */
static void a_confirming_spool_has_a_session(void **state)
{
	(void)state;
	uint64_t first = Session;

	assert_int_not_equal(first, 0); /* confirm unset: auto offers confirmation */
	assert_int_equal(stats().session, first);
	/* a new spool (a new mount) gets a new one */
	spool_stop(Sp);
	spool_close(Sp);
	spool_delete(&Sp);
	assert_int_equal(spool_new(&Env, 2, &Cfg, &Sp), 0);
	assert_int_not_equal(Session, 0);
	assert_int_not_equal(Session, first);
	/* confirm = transport: no session, a version 1 header */
	spool_stop(Sp);
	spool_close(Sp);
	spool_delete(&Sp);
	Cfg.confirm = RPMAFS_CONFIRM_TRANSPORT;
	assert_int_equal(spool_new(&Env, 2, &Cfg, &Sp), 0);
	assert_int_equal(Session, 0);
	assert_int_equal(stats().session, 0);
	Cfg.confirm = RPMAFS_CONFIRM_RECEIVER;
	spool_stop(Sp);
	spool_close(Sp);
	spool_delete(&Sp);
	assert_int_equal(spool_new(&Env, 2, &Cfg, &Sp), 0);
	assert_int_not_equal(Session, 0);
}

/* a write by owner (the writing process's FUSE lock owner), as op_write makes it */
static uintptr_t write_as(struct handle *fh, uint64_t owner, uint32_t len)
{
	spool_note_writer(Sp, fh, owner);
	return write_msg(fh, len);
}

#define PARENT 0x1111
#define CHILD 0x2222

/*
 * The lab's receiver-kill run (tests/RELIABILITY.md): the writer's process
 * spawns the new receiver while its messages wait to be sent again; the
 * child closes the inherited descriptor at exec. Its close must not wait
 * for them (they wait for the receiver it is about to exec: they failed at
 * send_timeout_ms instead of going again); the writer's own close still does.
 */
static void child_close_does_not_wait_for_the_writers_messages(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(8);
	write_as(fh, PARENT, 8);
	write_as(fh, PARENT, 4);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS); /* parked, not acknowledged */
	lose_the_link();			  /* the receiver was killed */
	assert_int_equal(stats().pending, 2);
	assert_int_equal(spool_flush(Sp, fh, (fuse_req_t)1000, CHILD), 0);
	assert_non_null(reply_of(1000)); /* at once: the child execs the receiver */
	assert_int_equal(reply_of(1000)->err, 0);
	up(8);
	assert_int_equal(stats().resent, 2);
	assert_int_equal(spool_flush(Sp, fh, (fuse_req_t)1001, PARENT), 0);
	assert_null(reply_of(1001)); /* the writer's close waits for the ack */
	complete(Posts[3].wr_id, IBV_WC_SUCCESS);
	ack(2, 8, 0);
	assert_int_equal(reply_of(1001)->err, 0);
	assert_int_equal(stats().failed, 0);
	assert_int_equal(stats().acked, 2);
	handle_delete(&fh);
}

/* close = return: an inherited descriptor's close leaves the error for the writer */
static void child_close_leaves_the_error_to_the_writer(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Cfg.close = RPMAFS_CLOSE_RETURN;
	up(0);
	write_as(fh, PARENT, 8);
	complete(Posts[0].wr_id, IBV_WC_REM_OP_ERR);
	spool_flush(Sp, fh, (fuse_req_t)1000, CHILD);
	assert_int_equal(reply_of(1000)->err, 0);
	spool_flush(Sp, fh, (fuse_req_t)1001, PARENT);
	assert_int_equal(reply_of(1001)->err, EIO);
	handle_delete(&fh);
}

/* a writer's close waits as fsync does (close = wait) */
static void writer_close_waits_as_fsync(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	up(0);
	write_as(fh, PARENT, 8);
	spool_flush(Sp, fh, (fuse_req_t)1000, PARENT);
	assert_null(reply_of(1000));
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(reply_of(1000)->err, 0);
	handle_delete(&fh);
}

static void transport_confirmation_fails_what_was_in_flight(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	up(0);
	write_msg(fh, 8);
	lose_the_link();
	assert_int_equal(stats().failed, 1);
	assert_int_equal(stats().pending, 0);
	assert_int_equal(spool_take_error(Sp, fh, NULL), EIO);
	handle_delete(&fh);
}

static void refused_ack_is_counted(void **state)
{
	(void)state;
	Acks = true;
	up(8);
	Ops->on_ack(Ctx, NULL, 0);
	assert_int_equal(stats().bad_acks, 1);
}

static void numbers_go_on_across_connections(void **state)
{
	(void)state;
	struct handle *fh = open_handle(true);

	Acks = true;
	up(8);
	write_msg(fh, 8);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	ack(1, 8, 0);
	Ops->on_down(Ctx, LINK_LOST, "Connection lost");
	Ops->on_down(Ctx, LINK_DRAINED, "drained");
	up(8);
	write_msg(fh, 8);
	assert_int_equal(Posts[1].imm & RPMAFS_SEQ_MASK, 2);
	complete(Posts[1].wr_id, IBV_WC_SUCCESS);
	ack(2, 8, 0);
	assert_int_equal(stats().acked, 2);
	handle_delete(&fh);
}

/* ---- small slots (pool.h, docs/design.md §4.5) ---- */

/* a small write is sent from its small slot, which comes back at its completion */
static void small_write_goes_from_its_small_slot(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	up(0);
	uintptr_t r = write_small(fh, 64);

	assert_int_equal(Nposts, 1);
	assert_int_equal(Posts[0].len, 64);
	/* the small slots follow the big buffers in the one registered region */
	assert_true(Posts[0].offset >= (size_t)NSLOTS * 4096);
	assert_true(Posts[0].offset + 64 <= pool_bytes(Pool));
	assert_memory_equal((char *)pool_base(Pool) + Posts[0].offset,
		(char[64]){[0 ... 63] = (char)(2 & 0x7f)}, 64);
	/* async: answered once queued; no big buffer taken */
	assert_non_null(reply_of(r));
	assert_true(reply_of(r)->write);
	assert_int_equal(reply_of(r)->size, 64);
	assert_int_equal(pool_small_free_count(Pool), NSMALL - 1);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	complete(Posts[0].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(pool_small_free_count(Pool), NSMALL);
	assert_int_equal(stats().completed, 1);
	assert_int_equal(stats().bytes_confirmed, 64);
	handle_delete(&fh);
	assert_accounts();
}

/* the window counts every slot a message can hold: big buffers and small slots */
static void window_counts_the_small_slots(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	up(0);
	assert_int_equal(Sp->window, LINK_WINDOW(NSLOTS + NSMALL));
	for (int i = 0; i < NSMALL; i++)
		write_small(fh, 64);
	for (int i = 0; i < NSLOTS; i++)
		write_msg(fh, 8);
	/* 24 in flight at once: without the small slots the window was 10 */
	assert_int_equal(Nposts, NSMALL + NSLOTS);
	assert_int_equal(stats().in_flight, NSMALL + NSLOTS);
	assert_int_equal(stats().pending, 0);
	assert_int_equal(pool_small_free_count(Pool), 0);
	assert_int_equal(pool_free_count(Pool), 0);
	/* the two 0-byte messages fit too; a third waits */
	empty_msg(fh);
	empty_msg(fh);
	empty_msg(fh);
	assert_int_equal(Nposts, NSMALL + NSLOTS + 2);
	assert_int_equal(stats().pending, 1);
	/* RC completes in order: the last one's completion covers every one */
	for (unsigned i = 0; i < Nposts; i++)
		complete(Posts[i].wr_id, IBV_WC_SUCCESS);
	complete(Posts[Nposts - 1].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().completed, NSMALL + NSLOTS + 3);
	assert_int_equal(pool_small_free_count(Pool), NSMALL);
	handle_delete(&fh);
	assert_accounts();
}

/* receiver confirmation: a small message holds its slot until acknowledged */
static void acked_small_messages_hold_their_slots(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);

	Acks = true;
	up(64);
	for (int i = 0; i < 4; i++)
		write_small(fh, 100);
	assert_int_equal(Nposts, 4);
	for (unsigned i = 0; i < 4; i++)
		complete(Posts[i].wr_id, IBV_WC_SUCCESS);
	assert_int_equal(stats().unacked, 4);
	assert_int_equal(stats().in_flight, 0);
	assert_int_equal(pool_small_free_count(Pool), NSMALL - 4); /* parked, not freed */
	ack(2, 64, 0);
	assert_int_equal(pool_small_free_count(Pool), NSMALL - 2);
	assert_int_equal(stats().acked, 2);
	ack(4, 64, 0);
	assert_int_equal(pool_small_free_count(Pool), NSMALL);
	assert_int_equal(stats().bytes_confirmed, 400);
	handle_delete(&fh);
	assert_acked_accounts();
}

/*
 * The small slots have their own reserve: held back by a receiver's
 * credits, small writes return once queued while more small slots are
 * free than there are workers, then once posted -- whatever the big
 * buffers (all free here). When every one is taken, pool_copy_small says
 * EAGAIN (spoolfile_write then keeps the write zero-copy).
 */
static void small_slots_run_out_and_come_back(void **state)
{
	(void)state;
	struct handle *fh = open_handle(false);
	uintptr_t r[NSMALL];
	unsigned slot;

	Env.nworkers = 2;
	Acks = true;
	up(1); /* one message in the receiver at a time */
	for (int i = 0; i < NSMALL; i++)
		r[i] = write_small(fh, 64);
	assert_int_equal(Nposts, 1);
	assert_int_equal(pool_small_free_count(Pool), 0);
	assert_int_equal(pool_copy_small(Pool, "x", 1, &slot), -EAGAIN);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	/* answered while more than 2 small slots were free afterwards */
	for (int i = 0; i < NSMALL; i++)
		if (i < NSMALL - 3)
			assert_non_null(reply_of(r[i]));
		else
			assert_null(reply_of(r[i]));
	/* a big write meanwhile is not at the reserve: answered once queued */
	uintptr_t b = write_msg(fh, 8);

	assert_non_null(reply_of(b));
	/* each acknowledgement frees a small slot and lets the next go */
	for (uint32_t n = 1; n <= NSMALL; n++) {
		complete(Posts[n - 1].wr_id, IBV_WC_SUCCESS);
		ack(n, 1, 0);
		assert_int_equal(pool_small_free_count(Pool), n);
	}
	for (int i = 0; i < NSMALL; i++)
		assert_true(reply_of(r[i])->write);
	/* and one copies again */
	assert_int_equal(pool_copy_small(Pool, "x", 1, &slot), 0);
	pool_put(Pool, slot);
	complete(Posts[NSMALL].wr_id, IBV_WC_SUCCESS);
	ack(NSMALL + 1, 1, 0);
	handle_delete(&fh);
	assert_acked_accounts();
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define T_SMALL(f) cmocka_unit_test_setup_teardown(f, setup_small, teardown)
#define T_ON_ERROR(f) cmocka_unit_test_setup_teardown(f, setup_on_error, teardown)
#define T_NO_WAIT(f) cmocka_unit_test_setup_teardown(f, setup_no_wait, teardown)
#define T_NULL(f) cmocka_unit_test_setup_teardown(f, setup_null, teardown)
	const struct CMUnitTest tests[] = {
		T(empty_message_without_memory_is_refused),
		T(async_write_replies_at_post),
		T(sync_write_replies_at_completion),
		T(sync_write_reaped_by_its_worker),
		T(posts_are_settled_by_their_worker),
		T(sync_write_not_reaped_in_time_is_the_loops),
		T(sync_write_on_a_link_going_down_is_not_polled),
		T(sync_write_while_not_connected_is_not_polled),
		T(sync_write_failure_replies_eio),
		T(file_message_close_waits_and_answers_its_outcome),
		T(window_limits_posts),
		T(credits_cap_the_window),
		T(wr_ids_count_from_one),
		T(completion_confirms_earlier_messages),
		T(buffers_go_back_to_the_pool),
		T_ON_ERROR(on_error_signals_one_in_a_quarter_window),
		T_ON_ERROR(sync_write_is_always_signaled),
		T_ON_ERROR(quiet_spool_fences_unsignaled_sends),
		T_ON_ERROR(busy_spool_fences_once_quiet),
		T_ON_ERROR(sends_behind_a_fence_get_their_own),
		T(write_waits_for_the_connection),
		T(enotconn_after_send_timeout),
		T(later_writes_fail_fast_after_a_timeout),
		T_NO_WAIT(no_send_timeout_refuses_at_once),
		T(nonblocking_write_eagain_while_down),
		T(in_flight_timeout_drops_the_link),
		T(in_flight_timeout_is_at_least_a_second),
		T(lost_link_gives_pending_a_deadline),
		T(timed_out_write_reports_the_cause),
		T(failed_completion_drops_and_reports_eio_once),
		T(drained_link_fails_what_is_left),
		T(post_failure_counts_posted_and_failed),
		T(attempt_failure_is_the_last_error),
		T(smaller_receiver_limit_refuses_pending),
		T(fsync_waits_for_the_handles_messages),
		T(fsync_reports_a_failure_once),
		T(fsync_with_nothing_in_flight_answers_at_once),
		T_ON_ERROR(fsync_fences_unsignaled_sends_at_once),
		T(handle_lives_until_its_messages_end),
		T(handle_without_messages_ends_at_release),
		T(handle_new_reads_the_open_flags),
		T(file_framed_handle_has_a_frame),
		T(release_sends_empty_only_for_an_intent),
		T(unreleased_handle_freed_at_delete),
		T(each_kind_of_message_is_answered_as_its_kind),
		T_ON_ERROR(zero_byte_message_is_an_empty_send),
		T_NO_WAIT(zero_byte_message_refused_is_counted),
		T(accounting_holds_through_a_mix),
		T(what_waited_for_the_connection_goes_as_one_chain),
		T(a_chain_stops_at_the_window),
		T(a_chain_that_fails_midway),
		T(an_answered_write_whose_post_fails_says_eio_next),
		T_ON_ERROR(a_chain_is_signaled_as_sends_one_by_one),
		T(not_connected_async_write_still_waits),
		T_NULL(null_peer_completes_at_once),
		T(close_refuses_pending_and_fails_in_flight),
		T(state_is_the_links),
		T(reconnect_is_counted),
		T(cached_attributes_invalidated_on_completion),
		T(tick_returns_the_soonest_deadline),
		T(transport_confirmation_carries_no_numbers),
		T(sync_write_returns_at_the_ack),
		T(acknowledgement_nobody_waits_for_is_looked_for_later),
		T(acknowledgement_owed_a_reply_arms),
		T(writes_at_the_reserve_return_once_posted),
		T(unanswered_request_drops_a_silent_link),
		T(answered_request_keeps_a_slow_receiver),
		T(ack_covers_every_earlier_message),
		T(credits_hold_back_posts),
		T(a_chain_carries_numbers_up_to_the_credits),
		T(a_chain_failing_midway_numbers_only_what_went),
		T(fsync_asks_for_an_ack_and_waits_for_it),
		T(unacked_messages_go_again_first),
		T(acked_before_its_failed_completion_is_confirmed),
		T(a_responder_fault_goes_again),
		T(resend_fails_after_send_timeout),
		T(encrypted_resend_is_unsealed_before_it_goes_again),
		T(encrypted_resend_that_fails_forgets_its_seal),
		T(encrypted_chain_failing_midway_unseals_what_waits),
		T(credits_count_from_the_next_connections_first_number),
		T(resend_on_a_plain_connection_finishes_by_completion),
		T(a_confirming_spool_has_a_session),
		T(a_new_outage_gives_waiting_messages_a_new_deadline),
		T(child_close_does_not_wait_for_the_writers_messages),
		T(child_close_leaves_the_error_to_the_writer),
		T(writer_close_waits_as_fsync),
		T(transport_confirmation_fails_what_was_in_flight),
		T(refused_ack_is_counted),
		T(numbers_go_on_across_connections),
		T_SMALL(small_write_goes_from_its_small_slot),
		T_SMALL(window_counts_the_small_slots),
		T_SMALL(acked_small_messages_hold_their_slots),
		T_SMALL(small_slots_run_out_and_come_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
