// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_inbox_queue.c -- arrival order, one record per read, competing readers,
 * waiters, reads that end at a line's end, the give-back window
 */

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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

/* raw: a read ends after a '\n', so a line reader takes one line, never two */
static void test_raw_reads_end_at_newline(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_RAW);
	struct inbox_reader rd = {0};

	(void)state;
	push(fx, 0, "a\nbb\nccc");
	push(fx, 1, "\n\nd\n");
	read_is(fx, &rd, 64, "a\n");
	read_is(fx, &rd, 2, "bb");
	read_is(fx, &rd, 64, "\n");
	assert_int_equal(fx->nreleased, 0); /* part read: the message is still rd's */
	read_is(fx, &rd, 64, "ccc");	    /* the record's end, no newline: still one read */
	assert_int_equal(fx->nreleased, 1);
	read_is(fx, &rd, 64, "\n");
	read_is(fx, &rd, 64, "\n");
	read_is(fx, &rd, 64, "d\n");
	assert_int_equal(fx->nreleased, 2);
	inbox_queue_delete(&fx->q);
}

/* the window: a read at an offset inside the last read's bytes gets them again */
static void test_window_find(void **state)
{
	struct inbox_window win = {0};
	const char *at = NULL;
	char *b = malloc(7);

	(void)state;
	assert_int_equal(inbox_window_find(&win, 0, 64, &at), 0); /* empty */
	memcpy(b, "bb\nccc\n", 7);
	inbox_window_set(&win, b, 7, 2); /* offsets 2 .. 8 */
	assert_int_equal(inbox_window_find(&win, 1, 64, &at), 0);
	assert_int_equal(inbox_window_find(&win, 9, 64, &at), 0);
	assert_int_equal(inbox_window_find(&win, 2, 64, &at), 7);
	assert_memory_equal(at, "bb\nccc\n", 7);
	assert_int_equal(inbox_window_find(&win, 5, 64, &at), 4);
	assert_memory_equal(at, "ccc\n", 4);
	assert_int_equal(inbox_window_find(&win, 5, 2, &at), 2);
	assert_int_equal(inbox_window_find(&win, 8, 64, &at), 1);
	assert_memory_equal(at, "\n", 1);
	inbox_window_set(&win, malloc(1), 0, 9); /* a 0-byte read empties it */
	assert_null(win.buf);
	assert_int_equal(inbox_window_find(&win, 9, 64, &at), 0);
	inbox_window_clear(&win);
}

/* one open file as inboxfile_read serves it: the window first, then the queue */
struct file {
	struct inbox_reader rd;
	struct inbox_window win;
	off_t pos; /* the kernel's file offset */
	unsigned reads;
};

static ssize_t file_read(struct fx *fx, struct file *f, char *out, size_t cap)
{
	const char *at;
	size_t n = inbox_window_find(&f->win, f->pos, cap, &at);
	char *buf;
	ssize_t r;

	f->reads++;
	if (n == 0) {
		buf = malloc(cap);
		r = inbox_queue_read(fx->q, &f->rd, buf, cap, NULL);
		if (r < 0) {
			free(buf);
			return r;
		}
		inbox_window_set(&f->win, buf, (size_t)r, f->pos);
		n = (size_t)r;
		at = f->win.buf;
	}
	memcpy(out, at, n);
	f->pos += (off_t)n;
	return (ssize_t)n;
}

static void file_close(struct fx *fx, struct file *f)
{
	inbox_queue_close_reader(fx->q, &f->rd);
	inbox_window_clear(&f->win);
	memset(f, 0, sizeof(*f));
}

/*
 * bash 5.2's read -r on a seekable file (strace): lseek(fd, 0, SEEK_CUR),
 * read(fd, buf, 4096), then lseek(fd, -(bytes past the newline), SEEK_CUR)
 * when there are any. Returns the line (without its newline) in line.
 */
static void bash_read(struct fx *fx, struct file *f, char *line, size_t max)
{
	char buf[4096];
	size_t used = 0;

	for (;;) {
		ssize_t n = file_read(fx, f, buf, sizeof(buf));
		char *nl;

		assert_true(n > 0);
		nl = memchr(buf, '\n', (size_t)n);
		if (nl) {
			size_t k = (size_t)(nl - buf);

			assert_true(used + k < max);
			memcpy(line + used, buf, k);
			line[used + k] = '\0';
			f->pos -= n - (ssize_t)(k + 1); /* gives back what followed */
			return;
		}
		assert_true(used + (size_t)n < max);
		memcpy(line + used, buf, (size_t)n);
		used += (size_t)n;
	}
}

/* while read -r l: one read(2) per line, every line, in order */
static void test_shell_loop_one_read_per_line(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct file f = {0};
	char line[64];

	(void)state;
	push(fx, 0, "m1");
	push(fx, 1, "m2\n");
	push(fx, 2, "l1\\x\ny");
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "m1");
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "m2");
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "l1\\\\x\\ny"); /* lines: one message, one line */
	assert_int_equal(f.reads, 3);
	assert_int_equal(fx->nreleased, 3);
	file_close(fx, &f);
	inbox_queue_delete(&fx->q);

	/* raw: a line per read, within a message and across two */
	fx = fx_new(RPMAFS_RECORD_RAW);
	push(fx, 0, "r1\nr2\nr");
	push(fx, 1, "3\n");
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "r1");
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "r2");
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "r3");
	assert_int_equal(f.reads, 4);
	assert_int_equal(fx->nreleased, 2);
	file_close(fx, &f);
	inbox_queue_delete(&fx->q);
}

/* read -r l < inbox twice: each a new open file, each gets the next message */
static void test_read_twice_nothing_lost(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LINES);
	struct file f = {0};
	char line[64];

	(void)state;
	push(fx, 0, "one");
	push(fx, 1, "two");
	push(fx, 2, "three");
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "one");
	file_close(fx, &f);
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "two");
	file_close(fx, &f);
	bash_read(fx, &f, line, sizeof(line));
	assert_string_equal(line, "three");
	assert_int_equal(f.reads, 1);
	file_close(fx, &f);
	assert_int_equal(fx->nreleased, 3);
	inbox_queue_delete(&fx->q);
}

/*
 * A reader that reads more than it wants (a len record has no line bound)
 * and lseeks back: its next read gives those bytes again, then goes on to
 * the next message; lseek back by the whole read, or a pread at the read's
 * offset, too
 */
static void test_give_back(void **state)
{
	struct fx *fx = fx_new(RPMAFS_RECORD_LEN);
	struct file f = {0};
	char out[64];

	(void)state;
	push(fx, 0, "a\nbcd");
	push(fx, 1, "e");
	assert_int_equal(file_read(fx, &f, out, sizeof(out)), 9);
	assert_memory_equal(out, "\5\0\0\0a\nbcd", 9);
	assert_int_equal(fx->nreleased, 1); /* read whole: released, acknowledged */
	f.pos -= 3;			    /* gives "bcd" back */
	assert_int_equal(file_read(fx, &f, out, 2), 2);
	assert_memory_equal(out, "bc", 2);
	assert_int_equal(file_read(fx, &f, out, sizeof(out)), 1);
	assert_memory_equal(out, "d", 1);
	f.pos -= 9; /* back to the start of the last read */
	assert_int_equal(file_read(fx, &f, out, sizeof(out)), 9);
	assert_memory_equal(out, "\5\0\0\0a\nbcd", 9);
	/* at the window's end: the next message */
	assert_int_equal(file_read(fx, &f, out, sizeof(out)), 5);
	assert_memory_equal(out, "\1\0\0\0e", 5);
	f.pos += 100; /* past the window: nothing there, nothing waiting */
	assert_int_equal(file_read(fx, &f, out, sizeof(out)), -EAGAIN);
	file_close(fx, &f);
	inbox_queue_delete(&fx->q);
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
		cmocka_unit_test(test_raw_reads_end_at_newline),
		cmocka_unit_test(test_window_find),
		cmocka_unit_test(test_shell_loop_one_read_per_line),
		cmocka_unit_test(test_read_twice_nothing_lost),
		cmocka_unit_test(test_give_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
