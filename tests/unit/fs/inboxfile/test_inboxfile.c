// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_inboxfile.c -- an open inbox file outlives the RELEASE that comes
 * while its last read's reply is still being sent (docs/design.md §13.3)
 *
 * Once the kernel has a read's reply it ends the read, and the reader's
 * close sends RELEASE, which another worker may handle before the replying
 * thread is back from fuse_reply_buf. The fake fuse_reply_buf below does
 * that release inside the reply, then checks the bytes it was given: freed
 * by the release, they would be a use-after-free (ASan) and overwritten by
 * the allocator (plain build).
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fuse/inboxfile.h"
#include "fuse/tree.h"
#include "fuse/xattrops.h"
#include "inbox/inbox.h"

#define NSLOTS 4
/* a read's size under tcache's largest (1032 B): a freed buffer's first bytes are overwritten */
#define READ_SIZE 512

static struct {
	struct inbox_queue *q;
	struct tree t;
	struct fuse_file_info fi;
	char slot[NSLOTS][64];
	/* the fake fuse_reply_buf: release fi inside the reply to this req */
	fuse_req_t release_in_reply_to;
	unsigned replies;
	char got[64];
	size_t got_len;
	int release_err; /* the release's reply, -1 before */
} fx;

static const fuse_req_t REQ_OPEN = (fuse_req_t)(uintptr_t)0x10;
static const fuse_req_t REQ_READ = (fuse_req_t)(uintptr_t)0x20;
static const fuse_req_t REQ_READ2 = (fuse_req_t)(uintptr_t)0x30;
static const fuse_req_t REQ_RELEASE = (fuse_req_t)(uintptr_t)0x40;

/* the inbox (inbox.h): only its queue */
struct inbox_queue *inbox_queue(struct inbox *ib)
{
	(void)ib;
	return fx.q;
}

void inbox_set_arrival(struct inbox *ib, void (*on_arrival)(void *), void *arg)
{
	(void)ib;
	(void)on_arrival;
	(void)arg;
}

void inbox_stats_get(struct inbox *ib, struct inbox_stats *st)
{
	(void)ib;
	memset(st, 0, sizeof(*st));
}

void xattrops_reply(fuse_req_t req, const char *value, ssize_t n, size_t size)
{
	(void)req;
	(void)value;
	(void)n;
	(void)size;
	fail_msg("no xattr is asked in these tests");
}

/* libfuse: the replies */
int fuse_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	(void)fi;
	assert_ptr_equal(req, REQ_OPEN);
	return 0;
}

int fuse_reply_err(fuse_req_t req, int err)
{
	assert_ptr_equal(req, REQ_RELEASE);
	fx.release_err = err;
	return 0;
}

int fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	fx.replies++;
	if (req == fx.release_in_reply_to) {
		/* the kernel ended the read: the reader closed, another worker releases */
		fx.release_in_reply_to = NULL;
		inboxfile_release(REQ_RELEASE, &fx.t, tree_inbox_ino(&fx.t), &fx.fi);
		assert_int_equal(fx.release_err, 0);
	}
	/* what the reply copies out: still the read's bytes */
	assert_true(size < sizeof(fx.got));
	memcpy(fx.got, buf, size);
	fx.got_len = size;
	return 0;
}

void fuse_req_interrupt_func(fuse_req_t req, fuse_interrupt_func_t func, void *data)
{
	(void)req;
	(void)func;
	(void)data;
}

int fuse_reply_attr(fuse_req_t req, const struct stat *attr, double attr_timeout)
{
	(void)req;
	(void)attr;
	(void)attr_timeout;
	return 0;
}

int fuse_reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	(void)req;
	(void)e;
	return 0;
}

int fuse_reply_poll(fuse_req_t req, unsigned revents)
{
	(void)req;
	(void)revents;
	return 0;
}

int fuse_lowlevel_notify_poll(struct fuse_pollhandle *ph)
{
	(void)ph;
	return 0;
}

void fuse_pollhandle_destroy(struct fuse_pollhandle *ph)
{
	(void)ph;
}

static void on_release(void *arg, uint32_t slot, bool unread)
{
	(void)arg;
	(void)slot;
	(void)unread;
}

static int setup(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	fx.release_err = -1;
	fx.t.inbox = (struct inbox *)&fx; /* never looked into: inbox_queue() is the fake's */
	assert_int_equal(inbox_queue_new(NSLOTS, RPMAFS_RECORD_RAW, on_release, NULL, &fx.q), 0);
	fx.fi.flags = O_RDONLY;
	inboxfile_open(REQ_OPEN, &fx.t, tree_inbox_ino(&fx.t), &fx.fi);
	assert_true(fx.fi.fh != 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	inbox_queue_delete(&fx.q);
	return 0;
}

static void push(uint32_t slot, const char *text)
{
	size_t len = strlen(text);

	memcpy(fx.slot[slot], text, len);
	assert_int_equal(inbox_queue_push(fx.q, slot, fx.slot[slot], (uint32_t)len), 0);
}

static void got_is(const char *want)
{
	assert_int_equal(fx.got_len, strlen(want));
	assert_memory_equal(fx.got, want, fx.got_len);
}

/* a read parked on an empty inbox is answered by the arrival (the loop thread) */
static void release_inside_the_reply_of_a_parked_read(void **state)
{
	(void)state;
	inboxfile_read(REQ_READ, &fx.t, tree_inbox_ino(&fx.t), READ_SIZE, 0, &fx.fi);
	assert_int_equal(fx.replies, 0); /* parked */
	fx.release_in_reply_to = REQ_READ;
	push(0, "ping\n");
	assert_int_equal(fx.replies, 1);
	got_is("ping\n");
	assert_int_equal(fx.release_err, 0);
	/* the handle is gone now (ASan's leak check: freed once, by the reply) */
}

/* a message already queued is answered by the read's own worker */
static void release_inside_the_reply_of_a_ready_read(void **state)
{
	(void)state;
	push(1, "pong\n");
	fx.release_in_reply_to = REQ_READ;
	inboxfile_read(REQ_READ, &fx.t, tree_inbox_ino(&fx.t), READ_SIZE, 0, &fx.fi);
	assert_int_equal(fx.replies, 1);
	got_is("pong\n");
	assert_int_equal(fx.release_err, 0);
}

/* bytes given back by an lseek are replied from the window, then released */
static void release_inside_the_reply_of_bytes_given_back(void **state)
{
	(void)state;
	push(2, "one\n");
	inboxfile_read(REQ_READ, &fx.t, tree_inbox_ino(&fx.t), READ_SIZE, 0, &fx.fi);
	got_is("one\n");
	fx.release_in_reply_to = REQ_READ2;
	/* the reader seeked back to 1: "ne\n" again, from the window */
	inboxfile_read(REQ_READ2, &fx.t, tree_inbox_ino(&fx.t), READ_SIZE, 1, &fx.fi);
	assert_int_equal(fx.replies, 2);
	got_is("ne\n");
	assert_int_equal(fx.release_err, 0);
}

/* without a reply in progress the release frees the handle itself */
static void release_after_the_reply(void **state)
{
	(void)state;
	push(3, "three\n");
	inboxfile_read(REQ_READ, &fx.t, tree_inbox_ino(&fx.t), READ_SIZE, 0, &fx.fi);
	got_is("three\n");
	inboxfile_release(REQ_RELEASE, &fx.t, tree_inbox_ino(&fx.t), &fx.fi);
	assert_int_equal(fx.release_err, 0);
}

/* an open inbox asks for no FLUSH at close: RELEASE is all it needs */
static void opened_without_flush(void **state)
{
	(void)state;
	assert_true(fx.fi.noflush);
	assert_true(fx.fi.direct_io);
	inboxfile_release(REQ_RELEASE, &fx.t, tree_inbox_ino(&fx.t), &fx.fi);
	assert_int_equal(fx.release_err, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			release_inside_the_reply_of_a_parked_read, setup, teardown),
		cmocka_unit_test_setup_teardown(
			release_inside_the_reply_of_a_ready_read, setup, teardown),
		cmocka_unit_test_setup_teardown(
			release_inside_the_reply_of_bytes_given_back, setup, teardown),
		cmocka_unit_test_setup_teardown(release_after_the_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(opened_without_flush, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
