// SPDX-License-Identifier: BSD-3-Clause
/* test_inbox_queue.c -- arrival order, one record per read, competing readers, waiters */

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "inbox/inbox_queue.h"

#define NSLOTS 4

struct fx {
	struct inbox_queue *q;
	char buf[NSLOTS][64]; /* the "receive buffers" */
	uint32_t released[64];
	bool unread[64];
	unsigned nreleased;
};

static void on_release(void *arg, uint32_t slot, bool unread)
{
	struct fx *fx = arg;

	assert_true(fx->nreleased < 64);
	fx->unread[fx->nreleased] = unread;
	fx->released[fx->nreleased++] = slot;
}

static struct fx *fx_new(enum rpmafs_record_format f)
{
	static struct fx fx;

	memset(&fx, 0, sizeof(fx));
	assert_int_equal(inbox_queue_new(NSLOTS, f, on_release, &fx, &fx.q), 0);
	return &fx;
}

static void push(struct fx *fx, uint32_t slot, const char *text)
{
	size_t len = strlen(text);

	memcpy(fx->buf[slot], text, len);
	assert_int_equal(inbox_queue_push(fx->q, slot, fx->buf[slot], (uint32_t)len), 0);
}

/* one read into a buffer of cap bytes gives exactly want */
static void read_is(struct fx *fx, struct inbox_reader *rd, size_t cap, const char *want)
{
	char out[64];
	ssize_t n = inbox_queue_read(fx->q, rd, out, cap, NULL);

	assert_int_equal(n, (ssize_t)strlen(want));
	assert_memory_equal(out, want, strlen(want));
}

static void test_lines_in_order_one_record_per_read(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct inbox_reader rd = {0};
	struct inbox_counts c;

	(void)state;
	push(fx, 2, "hello");
	push(fx, 0, "");
	push(fx, 1, "world\n");
	/* a big buffer still gets one record per read */
	read_is(fx, &rd, 64, "hello\n");
	read_is(fx, &rd, 64, "\n");
	read_is(fx, &rd, 64, "world\n");
	assert_int_equal(inbox_queue_read(fx->q, &rd, (char[8]){0}, 8, NULL), -EAGAIN);
	assert_int_equal(fx->nreleased, 3);
	assert_int_equal(fx->released[0], 2);
	assert_int_equal(fx->released[1], 0);
	assert_int_equal(fx->released[2], 1);
	inbox_queue_counts(fx->q, &c);
	assert_int_equal(c.received, 3);
	assert_int_equal(c.read, 3);
	assert_int_equal(c.waiting, 0);
	assert_int_equal(c.bytes, 11);
	inbox_queue_delete(&fx->q);
	assert_null(fx->q);
	assert_int_equal(fx->nreleased, 3); /* nothing held */
}

/* bash's read -r: one byte at a time; the slot is released with the newline */
static void test_byte_at_a_time(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct inbox_reader rd = {0};

	(void)state;
	push(fx, 0, "a\\b");
	push(fx, 1, "next");
	read_is(fx, &rd, 1, "a");
	read_is(fx, &rd, 1, "\\");
	read_is(fx, &rd, 1, "\\");
	read_is(fx, &rd, 1, "b");
	assert_int_equal(fx->nreleased, 0);
	read_is(fx, &rd, 1, "\n");
	assert_int_equal(fx->nreleased, 1);
	assert_int_equal(fx->released[0], 0);
	assert_false(fx->unread[0]);
	/* the rest of a record, not the next one */
	read_is(fx, &rd, 2, "ne");
	read_is(fx, &rd, 64, "xt\n");
	inbox_queue_delete(&fx->q);
}

static void test_competing_readers(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct inbox_reader a = {0}, b = {0};

	(void)state;
	push(fx, 0, "one");
	push(fx, 1, "two");
	push(fx, 2, "three");
	read_is(fx, &a, 2, "on"); /* a owns "one" until its last byte */
	read_is(fx, &b, 64, "two\n");
	read_is(fx, &b, 64, "three\n");
	read_is(fx, &a, 64, "e\n");
	assert_int_equal(inbox_queue_read(fx->q, &b, (char[8]){0}, 8, NULL), -EAGAIN);
	inbox_queue_delete(&fx->q);
}

/* a reader that leaves mid-record gives the message back whole, first in line */
static void test_close_mid_record(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct inbox_reader a = {0}, b = {0};

	(void)state;
	push(fx, 0, "first");
	push(fx, 1, "second");
	read_is(fx, &a, 3, "fir");
	inbox_queue_close_reader(fx->q, &a);
	assert_int_equal(fx->nreleased, 0);
	read_is(fx, &b, 64, "first\n");
	read_is(fx, &b, 64, "second\n");
	inbox_queue_delete(&fx->q);
}

struct test_waiter {
	struct inbox_waiter w;
	int ready, closing;
};

static void on_ready(struct inbox_waiter *w, bool closing)
{
	struct test_waiter *t = (struct test_waiter *)w;

	t->ready++;
	t->closing += closing;
}

static void test_waiter_woken_by_push(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct inbox_reader a = {0}, b = {0};
	struct test_waiter wa = {.w.ready = on_ready}, wb = {.w.ready = on_ready};
	struct inbox_counts c;
	char out[16];

	(void)state;
	assert_false(inbox_queue_readable(fx->q, &a));
	assert_int_equal(inbox_queue_read(fx->q, &a, out, sizeof(out), &wa.w), -EAGAIN);
	assert_int_equal(inbox_queue_read(fx->q, &b, out, sizeof(out), &wb.w), -EAGAIN);
	inbox_queue_counts(fx->q, &c);
	assert_int_equal(c.readers, 2);
	assert_int_equal(wa.ready, 0);
	/* the oldest waiter gets the first message, the next the second */
	push(fx, 3, "x");
	assert_int_equal(wa.ready, 1);
	assert_int_equal(wb.ready, 0);
	assert_true(inbox_queue_readable(fx->q, &a));
	assert_false(inbox_queue_readable(fx->q, &b));
	push(fx, 1, "y");
	assert_int_equal(wb.ready, 1);
	read_is(fx, &b, 16, "y\n");
	read_is(fx, &a, 16, "x\n");
	assert_int_equal(wa.closing + wb.closing, 0);
	inbox_queue_delete(&fx->q);
}

static void test_cancel_and_delete(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct inbox_reader a = {0}, b = {0}, c = {0};
	struct test_waiter wa = {.w.ready = on_ready}, wb = {.w.ready = on_ready};
	char out[16];

	(void)state;
	assert_int_equal(inbox_queue_read(fx->q, &a, out, sizeof(out), &wa.w), -EAGAIN);
	assert_int_equal(inbox_queue_read(fx->q, &b, out, sizeof(out), &wb.w), -EAGAIN);
	assert_true(inbox_queue_cancel(fx->q, &wa.w));
	assert_false(inbox_queue_cancel(fx->q, &wa.w));
	/* with a cancelled, b is first in line */
	push(fx, 0, "m");
	assert_int_equal(wa.ready, 0);
	assert_int_equal(wb.ready, 1);
	assert_false(inbox_queue_cancel(fx->q, &wb.w));
	/* a parked waiter is woken as closing; unread messages are released as unread */
	push(fx, 2, "unread");
	read_is(fx, &c, 2, "un");
	assert_int_equal(inbox_queue_read(fx->q, &a, out, sizeof(out), &wa.w), -EAGAIN);
	inbox_queue_delete(&fx->q);
	assert_int_equal(wa.ready, 1);
	assert_int_equal(wa.closing, 1);
	assert_int_equal(fx->nreleased, 2);
	assert_true(fx->unread[0] && fx->unread[1]);
}

static void test_bad_push(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_RAW);

	(void)state;
	push(fx, 0, "a");
	assert_int_equal(inbox_queue_push(fx->q, 0, "b", 1), -EINVAL);
	assert_int_equal(inbox_queue_push(fx->q, NSLOTS, "b", 1), -EINVAL);
	inbox_queue_delete(&fx->q);
}

/* raw: a 0-byte message has no byte to read; it is consumed, not returned as EOF */
static void test_raw_zero_bytes(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_RAW);
	struct inbox_reader rd = {0};
	char out[8];

	(void)state;
	push(fx, 0, "");
	push(fx, 1, "ab");
	read_is(fx, &rd, 8, "ab");
	assert_int_equal(fx->nreleased, 2);
	push(fx, 2, "");
	assert_int_equal(inbox_queue_read(fx->q, &rd, out, sizeof(out), NULL), -EAGAIN);
	assert_int_equal(fx->nreleased, 3);
	inbox_queue_delete(&fx->q);
}

static void test_len_format(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LEN);
	struct inbox_reader rd = {0};
	char out[16];

	(void)state;
	push(fx, 0, "hi");
	assert_int_equal(inbox_queue_read(fx->q, &rd, out, sizeof(out), NULL), 6);
	assert_memory_equal(out, "\2\0\0\0hi", 6);
	inbox_queue_delete(&fx->q);
}

/* a message nobody started goes off the queue unread; one being read stays */
static void test_withdraw(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct inbox_reader rd = {0};
	struct inbox_counts c;

	(void)state;
	push(fx, 0, "a");
	push(fx, 1, "b");
	push(fx, 2, "c");
	push(fx, 3, "d");
	read_is(fx, &rd, 1, "a"); /* slot 0 part read: the newline is left */
	assert_false(inbox_queue_withdraw(fx->q, 0));
	assert_true(inbox_queue_withdraw(fx->q, 2));
	assert_false(inbox_queue_withdraw(fx->q, 2));
	assert_false(inbox_queue_withdraw(fx->q, 99));
	inbox_queue_counts(fx->q, &c);
	assert_int_equal(c.waiting, 3);
	assert_int_equal(c.withdrawn, 1);
	/* the rest in order, c gone; its slot takes a new message, released once read */
	read_is(fx, &rd, 64, "\n");
	read_is(fx, &rd, 64, "b\n");
	push(fx, 2, "e");
	read_is(fx, &rd, 64, "d\n");
	read_is(fx, &rd, 64, "e\n");
	assert_int_equal(fx->nreleased, 4);
	assert_int_equal(fx->released[0], 0);
	assert_int_equal(fx->released[1], 1);
	assert_int_equal(fx->released[2], 3);
	assert_int_equal(fx->released[3], 2);
	inbox_queue_delete(&fx->q);
	assert_int_equal(fx->nreleased, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_in_order_one_record_per_read),
		cmocka_unit_test(test_byte_at_a_time),
		cmocka_unit_test(test_competing_readers),
		cmocka_unit_test(test_close_mid_record),
		cmocka_unit_test(test_waiter_woken_by_push),
		cmocka_unit_test(test_cancel_and_delete),
		cmocka_unit_test(test_bad_push),
		cmocka_unit_test(test_raw_zero_bytes),
		cmocka_unit_test(test_len_format),
		cmocka_unit_test(test_withdraw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
