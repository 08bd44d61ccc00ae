// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_inbox_ack.c -- the inbox acknowledges what was read (fs/inbox_ack.c):
 * truthful shares, the longest prefix read, duplicates and requests, a lost
 * connection's messages withdrawn, and the 16 bytes that go on the wire
 */

#include <arpa/inet.h>
#include <string.h>

#include "unit.h"

#include "ack.h"
#include "inbox/inbox_ack.h"
#include "link/linkack.h"

#define SLOTS 8

static struct {
	struct rpma_peer *peer;
	struct inbox_ack *a;
	uint32_t posted[64];
	unsigned nposted;
	bool queued[SLOTS]; /* what withdraw finds still queued */
} F;

static void post(void *arg, uint32_t slot)
{
	(void)arg;
	assert_true(F.nposted < 64);
	F.posted[F.nposted++] = slot;
}

static bool withdraw(void *arg, uint32_t slot)
{
	(void)arg;
	return F.queued[slot];
}

static struct ibv_wc wc_num(uint32_t imm, uint32_t len)
{
	struct ibv_wc wc = fx_wc(0, IBV_WC_RECV, IBV_WC_SUCCESS);

	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(imm);
	wc.byte_len = len;
	return wc;
}

static enum inbox_take take_in(
	struct inbox_ack *a, struct inbox_ack_conn *ac, uint32_t slot, uint32_t imm)
{
	struct ibv_wc wc = wc_num(imm, imm & RPMAFS_IMM_REQUEST ? 0 : 3);
	const char *why = NULL;

	return inbox_ack_take(a, ac, slot, &wc, &why);
}

static enum inbox_take take(struct inbox_ack_conn *ac, uint32_t slot, uint32_t imm)
{
	return take_in(F.a, ac, slot, imm);
}

static int setup(void **state)
{
	unit_setup(state);
	memset(&F, 0, sizeof(F));
	F.peer = fx_peer();
	assert_int_equal(inbox_ack_new(F.peer, SLOTS, 4, &F.a), 0);
	return 0;
}

static int teardown(void **state)
{
	inbox_ack_delete(&F.a);
	assert_null(F.a);
	assert_int_equal(rpma_peer_delete(&F.peer), 0);
	return unit_teardown(state);
}

/* a quarter of the queue each while it lasts, then nothing promised; shares come back */
static void test_shares(void **state)
{
	struct inbox_ack_conn c[5];

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(inbox_ack_offer(F.a, &c[i]), 1); /* share 2, one kept */
	assert_int_equal(inbox_ack_offer(F.a, &c[4]), -1);	  /* 4 buffers: no fifth */
	inbox_ack_drop(F.a, &c[3], withdraw, post, NULL);
	assert_false(c[3].on);
	assert_int_equal(inbox_ack_offer(F.a, &c[3]), 1);
	for (int i = 0; i < 4; i++)
		inbox_ack_drop(F.a, &c[i], withdraw, post, NULL);
	assert_int_equal(F.nposted, 0);
}

/* shares used up: credits 0, the flag still given */
static void test_no_share_left(void **state)
{
	struct inbox_ack *big;
	struct inbox_ack_conn c[6];

	(void)state;
	assert_int_equal(inbox_ack_new(F.peer, SLOTS, 8, &big), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(inbox_ack_offer(big, &c[i]), 1);
	assert_int_equal(inbox_ack_offer(big, &c[4]), 0);
	assert_true(c[4].on);
	assert_int_equal(c[4].share, 0);
	for (int i = 0; i <= 4; i++)
		inbox_ack_drop(big, &c[i], withdraw, post, NULL);
	inbox_ack_delete(&big);
}

/*
 * The largest share (any queue size) promises credits an rpmafs sender can take
 * acknowledgements for without an RNR NAK: credits + 1 (the REQUEST's answer)
 * receives posted (linkack.h)
 */
static void test_largest_credits_fit_the_senders_receives(void **state)
{
	static const uint32_t slots[] = {256, 1024, 65535};

	(void)state;
	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		struct inbox_ack *big;
		struct inbox_ack_conn c;
		int credits;

		assert_int_equal(inbox_ack_new(F.peer, slots[i], 1, &big), 0);
		credits = inbox_ack_offer(big, &c);
		assert_int_equal(credits, 63);
		assert_true((unsigned)credits + 1 <= LINKACK_RECVS);
		inbox_ack_drop(big, &c, withdraw, post, NULL);
		inbox_ack_delete(&big);
	}
}

/* competing readers finish 6 before 5: the acknowledgement waits for 5, slots go back in order */
static void test_prefix_read(void **state)
{
	struct inbox_ack_conn c;

	(void)state;
	assert_int_equal(inbox_ack_offer(F.a, &c), 1);
	assert_int_equal(take(&c, 0, 5), INBOX_TAKE_RECORD);
	assert_int_equal(take(&c, 1, 6), INBOX_TAKE_RECORD);
	assert_int_equal(take(&c, 2, 7 | RPMAFS_IMM_PROMPT), INBOX_TAKE_RECORD);
	assert_null(inbox_ack_released(F.a, 1, post, NULL));
	assert_int_equal(F.nposted, 0);
	assert_ptr_equal(inbox_ack_released(F.a, 0, post, NULL), &c);
	assert_int_equal(F.nposted, 2);
	assert_int_equal(F.posted[0], 0);
	assert_int_equal(F.posted[1], 1);
	assert_int_equal(c.read_upto, 6);
	assert_ptr_equal(inbox_ack_released(F.a, 2, post, NULL), &c);
	assert_int_equal(c.read_upto, 7);
	assert_int_equal(F.nposted, 3);
	inbox_ack_drop(F.a, &c, withdraw, post, NULL);
	assert_int_equal(F.nposted, 3);
}

/* a plain sender's slot is posted at read, nothing acknowledged */
static void test_plain(void **state)
{
	(void)state;
	inbox_ack_plain(F.a, 3);
	assert_null(inbox_ack_released(F.a, 3, post, NULL));
	assert_int_equal(F.nposted, 1);
	assert_int_equal(F.posted[0], 3);
}

static void test_duplicates_requests_bad(void **state)
{
	struct inbox_ack_conn c;
	struct ibv_wc wc = wc_num(1, 3);
	const char *why = NULL;

	(void)state;
	assert_int_equal(inbox_ack_offer(F.a, &c), 1);
	assert_int_equal(take(&c, 0, RPMAFS_IMM_REQUEST), INBOX_TAKE_BAD); /* before any */
	assert_int_equal(take(&c, 0, 10), INBOX_TAKE_RECORD);
	assert_int_equal(take(&c, 1, 10), INBOX_TAKE_DUPLICATE);
	assert_int_equal(take(&c, 1, 9), INBOX_TAKE_DUPLICATE);
	assert_int_equal(c.duplicates, 2);
	assert_int_equal(take(&c, 1, RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT), INBOX_TAKE_REQUEST);
	assert_int_equal(c.req.requests, 1);
	assert_int_equal(take(&c, 1, RPMAFS_IMM_REQUEST | 4), INBOX_TAKE_BAD);
	wc.wc_flags = 0;
	assert_int_equal(inbox_ack_take(F.a, &c, 1, &wc, &why), INBOX_TAKE_BAD);
	assert_non_null(strstr(why, "without its number"));
	/* nothing read yet: acked is the number before the first */
	assert_int_equal(c.read_upto, 9);
	inbox_ack_drop(F.a, &c, withdraw, post, NULL);
}

/* lost: the queued one is withdrawn and posted, the one being read waits for its read */
static void test_drop_withdraws(void **state)
{
	struct inbox_ack_conn c;

	(void)state;
	assert_int_equal(inbox_ack_offer(F.a, &c), 1);
	assert_int_equal(take(&c, 0, 1), INBOX_TAKE_RECORD); /* a reader is on it */
	assert_int_equal(take(&c, 1, 2), INBOX_TAKE_RECORD); /* read out of order */
	assert_int_equal(take(&c, 2, 3), INBOX_TAKE_RECORD); /* queued */
	assert_null(inbox_ack_released(F.a, 1, post, NULL));
	F.queued[2] = true;
	inbox_ack_drop(F.a, &c, withdraw, post, NULL);
	assert_int_equal(F.nposted, 2);
	assert_int_equal(F.posted[0], 1);
	assert_int_equal(F.posted[1], 2);
	/* its read ends later: posted, acknowledged to nobody */
	assert_null(inbox_ack_released(F.a, 0, post, NULL));
	assert_int_equal(F.nposted, 3);
	assert_int_equal(F.posted[2], 0);
}

static bool keep(void *arg, uint32_t slot)
{
	(void)arg;
	(void)slot;
	return false;
}

#define SESSION 0x5e5510000000c0deull

/*
 * re-sends of a session's message still unread wait for it: the first
 * connection's 1 and 2 stay queued when it is lost; the second's re-send
 * of 2 is held, and another session's 2 is not it; the original's read
 * gives the re-send back, and only then does the second's prefix pass it
 */
static void test_resend_waits_for_its_original(void **state)
{
	struct inbox_ack_conn c1, c2;

	(void)state;
	assert_int_equal(inbox_ack_offer(F.a, &c1), 1);
	assert_int_equal(take(&c1, 0, 1), INBOX_TAKE_RECORD);
	inbox_ack_session(F.a, 0, SESSION);
	assert_int_equal(take(&c1, 1, 2), INBOX_TAKE_RECORD);
	inbox_ack_session(F.a, 1, SESSION);
	inbox_ack_drop(F.a, &c1, keep, post, NULL);
	assert_int_equal(F.nposted, 0);

	assert_int_equal(inbox_ack_offer(F.a, &c2), 1);
	assert_int_equal(take(&c2, 2, 2), INBOX_TAKE_RECORD);
	assert_false(inbox_ack_hold_resend(F.a, 2, SESSION + 1));
	assert_true(inbox_ack_hold_resend(F.a, 2, SESSION));
	assert_int_equal(inbox_ack_next_resend(F.a, 0), INBOX_ACK_NONE);
	/* 1 is read: nothing waited for it; it was its lost connection's */
	assert_null(inbox_ack_released(F.a, 0, post, NULL));
	assert_int_equal(inbox_ack_next_resend(F.a, 0), INBOX_ACK_NONE);
	/* 2 is read: its re-send comes back, once */
	assert_null(inbox_ack_released(F.a, 1, post, NULL));
	assert_int_equal(inbox_ack_next_resend(F.a, 1), 2);
	assert_int_equal(inbox_ack_next_resend(F.a, 1), INBOX_ACK_NONE);
	assert_ptr_equal(inbox_ack_released(F.a, 2, post, NULL), &c2);
	assert_int_equal(c2.read_upto, 2);
	assert_int_equal(F.nposted, 3);
	inbox_ack_drop(F.a, &c2, withdraw, post, NULL);
	/* 2 was read: a third connection's re-send of it has nothing to wait for */
	assert_int_equal(inbox_ack_offer(F.a, &c1), 1);
	assert_int_equal(take(&c1, 1, 2), INBOX_TAKE_RECORD);
	assert_false(inbox_ack_hold_resend(F.a, 1, SESSION));
	inbox_ack_drop(F.a, &c1, withdraw, post, NULL);
}

/* the acknowledgement on the wire: what was read, the credits, the requests; 4 in flight */
static void test_send(void **state)
{
	struct rpma_conn *conn = fx_conn_active(F.peer, NULL);
	struct inbox_ack_conn c;
	struct rpmafs_ack ack;
	const char *why = NULL;
	struct fake_send_wr wr;
	struct ibv_wc done;

	(void)state;
	assert_int_equal(inbox_ack_offer(F.a, &c), 1);
	assert_int_equal(inbox_ack_send(F.a, &c, conn, NULL, &why), 0); /* nothing due */
	assert_int_equal(fake_send_count(fx_qp(conn)), 0);
	assert_int_equal(take(&c, 0, 1), INBOX_TAKE_RECORD);
	assert_int_equal(inbox_ack_send(F.a, &c, conn, NULL, &why), 0); /* nothing read */
	assert_int_equal(fake_send_count(fx_qp(conn)), 0);
	for (uint32_t n = 2; n <= 5; n++) {
		assert_ptr_equal(inbox_ack_released(F.a, 0, post, NULL), &c);
		assert_int_equal(inbox_ack_send(F.a, &c, conn, NULL, &why), 0);
		assert_int_equal(take(&c, 0, n), INBOX_TAKE_RECORD);
	}
	assert_int_equal(fake_send_count(fx_qp(conn)), 4);
	wr = fake_send_get(fx_qp(conn), 3);
	assert_int_equal(wr.opcode, IBV_WR_SEND);
	assert_int_equal(wr.sge.length, RPMAFS_ACK_LEN);
	assert_int_equal(
		rpmafs_ack_parse((void *)(uintptr_t)wr.sge.addr, wr.sge.length, &ack, &why), 0);
	assert_int_equal(ack.acked, 4);
	assert_int_equal(ack.credits, 1);
	assert_int_equal(ack.requests, 0);
	/* four in flight: the fifth is owed until a completion frees a buffer */
	assert_ptr_equal(inbox_ack_released(F.a, 0, post, NULL), &c);
	assert_int_equal(inbox_ack_send(F.a, &c, conn, NULL, &why), 1);
	assert_true(c.owed);
	done = fx_wc(wr.wr_id, IBV_WC_SEND, IBV_WC_SUCCESS);
	assert_int_equal(inbox_ack_sent(F.a, &c, &done, &why), 0);
	assert_int_equal(inbox_ack_send(F.a, &c, conn, NULL, &why), 0);
	assert_false(c.owed);
	assert_int_equal(fake_send_count(fx_qp(conn)), 5);
	wr = fake_send_get(fx_qp(conn), 4);
	assert_int_equal(
		rpmafs_ack_parse((void *)(uintptr_t)wr.sge.addr, wr.sge.length, &ack, &why), 0);
	assert_int_equal(ack.acked, 5);
	done.status = IBV_WC_WR_FLUSH_ERR;
	assert_int_equal(inbox_ack_sent(F.a, &c, &done, &why), -1);
	inbox_ack_drop(F.a, &c, withdraw, post, NULL);
	assert_int_equal(rpma_conn_delete(&conn), 0);
}

/*
 * Coalesced: a share of 16 gets one acknowledgement per 8 messages read;
 * what the sender waits for (sent before a REQUEST, or with PROMPT) is
 * acknowledged as soon as it is read, a REQUEST at once
 */
static void test_due(void **state)
{
	struct rpma_conn *conn = fx_conn_active(F.peer, NULL);
	struct inbox_ack *big;
	struct inbox_ack_conn c;
	const char *why = NULL;
	struct rpmafs_ack ack;
	struct fake_send_wr wr;

	(void)state;
	assert_int_equal(inbox_ack_new(F.peer, 64, 1, &big), 0);
	assert_int_equal(inbox_ack_offer(big, &c), 15);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOTHING);
	for (uint32_t n = 1; n <= 12; n++)
		assert_int_equal(take_in(big, &c, n - 1, n), INBOX_TAKE_RECORD);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOTHING); /* nothing read */
	for (uint32_t s = 0; s < 7; s++) {
		assert_ptr_equal(inbox_ack_released(big, s, post, NULL), &c);
		assert_int_equal(inbox_ack_due(&c), INBOX_ACK_HOLD);
	}
	assert_ptr_equal(inbox_ack_released(big, 7, post, NULL), &c);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOW);
	assert_int_equal(inbox_ack_send(big, &c, conn, NULL, &why), 0);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOTHING);
	assert_int_equal(fake_send_count(fx_qp(conn)), 1);

	/* a REQUEST with 9..12 unread: answered at once, then 12 once it is read */
	assert_int_equal(
		take_in(big, &c, 8, RPMAFS_IMM_REQUEST | RPMAFS_IMM_PROMPT), INBOX_TAKE_REQUEST);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOW);
	assert_int_equal(inbox_ack_send(big, &c, conn, NULL, &why), 0);
	for (uint32_t s = 8; s < 11; s++) {
		assert_ptr_equal(inbox_ack_released(big, s, post, NULL), &c);
		assert_int_equal(inbox_ack_due(&c), INBOX_ACK_HOLD);
	}
	assert_ptr_equal(inbox_ack_released(big, 11, post, NULL), &c);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOW);
	assert_int_equal(inbox_ack_send(big, &c, conn, NULL, &why), 0);
	wr = fake_send_get(fx_qp(conn), 2);
	assert_int_equal(
		rpmafs_ack_parse((void *)(uintptr_t)wr.sge.addr, wr.sge.length, &ack, &why), 0);
	assert_int_equal(ack.acked, 12);
	assert_int_equal(ack.requests, 1);

	/* PROMPT: at once once everything the sender sent is read */
	assert_int_equal(take_in(big, &c, 0, 13 | RPMAFS_IMM_PROMPT), INBOX_TAKE_RECORD);
	assert_int_equal(take_in(big, &c, 1, 14), INBOX_TAKE_RECORD);
	assert_null(inbox_ack_released(big, 1, post, NULL));
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOTHING);
	assert_ptr_equal(inbox_ack_released(big, 0, post, NULL), &c);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOW);
	assert_int_equal(inbox_ack_send(big, &c, conn, NULL, &why), 0);
	/* ... not while more of it waits (a sender held back by its credits marks every one) */
	assert_int_equal(take_in(big, &c, 0, 15 | RPMAFS_IMM_PROMPT), INBOX_TAKE_RECORD);
	assert_int_equal(take_in(big, &c, 1, 16 | RPMAFS_IMM_PROMPT), INBOX_TAKE_RECORD);
	assert_ptr_equal(inbox_ack_released(big, 0, post, NULL), &c);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_HOLD);
	assert_ptr_equal(inbox_ack_released(big, 1, post, NULL), &c);
	assert_int_equal(inbox_ack_due(&c), INBOX_ACK_NOW);

	inbox_ack_drop(big, &c, withdraw, post, NULL);
	inbox_ack_delete(&big);
	assert_int_equal(rpma_conn_delete(&conn), 0);
}

/* no share (the queue's shares used up): the sender's own window, 16 reads per acknowledgement */
static void test_due_without_share(void **state)
{
	struct inbox_ack_conn c[5];

	(void)state;
	inbox_ack_delete(&F.a); /* one with buffers for a fifth connection */
	assert_int_equal(inbox_ack_new(F.peer, SLOTS, 8, &F.a), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(inbox_ack_offer(F.a, &c[i]), 1);
	assert_int_equal(inbox_ack_offer(F.a, &c[4]), 0);
	for (uint32_t n = 1; n <= SLOTS; n++) {
		assert_int_equal(take(&c[4], n - 1, n), INBOX_TAKE_RECORD);
		assert_ptr_equal(inbox_ack_released(F.a, n - 1, post, NULL), &c[4]);
		assert_int_equal(inbox_ack_due(&c[4]), INBOX_ACK_HOLD);
	}
	for (int i = 0; i < 5; i++)
		inbox_ack_drop(F.a, &c[i], withdraw, post, NULL);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_shares),
		T(test_no_share_left),
		T(test_largest_credits_fit_the_senders_receives),
		T(test_prefix_read),
		T(test_plain),
		T(test_duplicates_requests_bad),
		T(test_drop_withdraws),
		T(test_resend_waits_for_its_original),
		T(test_send),
		T(test_due),
		T(test_due_without_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
