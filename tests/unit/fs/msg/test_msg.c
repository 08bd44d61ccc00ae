// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_msg.c -- fs/spool/msg.c: each kind of message as its constructor
 * makes it (what the spool then does with it is tests/unit/fs/spool's)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/pool.h"
#include "spool/msg.h"

#define NSLOTS 4

static struct pool *Pool;
/* a handle is only pointed to by a message: any address does */
static struct handle *const Fh = (struct handle *)(uintptr_t)0x1000;
static const fuse_req_t Req = (fuse_req_t)(uintptr_t)0x2000;

/* the logger pool.c may call */
void log_msg(int prio, const char *fmt, ...)
{
	(void)prio;
	(void)fmt;
}

static int setup(void **state)
{
	(void)state;
	return pool_new(NSLOTS, 4096, &Pool);
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	pool_delete(&Pool);
	return 0;
}

static unsigned slot_get(void)
{
	unsigned slot;

	assert_int_equal(pool_get(Pool, false, &slot), 0);
	return slot;
}

static size_t offset_of(unsigned slot, size_t in)
{
	return (size_t)((char *)pool_slot_ptr(Pool, slot) + in - (char *)pool_base(Pool));
}

/* the spool frees a message when its holds are dropped: one, the spool's */
static void end(struct msg *msg)
{
	assert_int_equal(atomic_load(&msg->holds), 1);
	if (msg->slot != POOL_NO_SLOT)
		pool_put(Pool, msg->slot);
	msg_unhold(msg);
}

static void write_message_is_the_payload_where_it_lies(void **state)
{
	unsigned slot = slot_get();
	char *payload = (char *)pool_slot_ptr(Pool, slot) + 64; /* after the request header */
	struct msg *msg = NULL;

	(void)state;
	assert_int_equal(msg_new_write(Fh, Req, Pool, slot, payload, 100, true, &msg), 0);
	assert_int_equal(msg->kind, MSG_DATA);
	assert_ptr_equal(msg->fh, Fh);
	assert_ptr_equal(msg->req, Req);
	assert_int_equal(msg->write_size, 100); /* the reply says 100 written */
	assert_true(msg->sync);
	assert_false(msg->flush);
	assert_int_equal(msg->slot, slot);
	assert_int_equal(msg->offset, offset_of(slot, 64));
	assert_int_equal(msg->len, 100);
	assert_null(msg->answered);
	end(msg);
}

static void file_message_is_a_close(void **state)
{
	unsigned slot = slot_get();
	struct msg *msg = NULL;

	(void)state;
	assert_int_equal(msg_new_file(Fh, Req, Pool, slot, 300, false, &msg), 0);
	assert_int_equal(msg->kind, MSG_DATA);
	assert_ptr_equal(msg->fh, Fh);
	assert_true(msg->flush); /* answered 0 or an errno, not a size */
	assert_false(msg->sync); /* close = return */
	assert_int_equal(msg->offset, offset_of(slot, 0));
	assert_int_equal(msg->len, 300);
	end(msg);
}

static void answered(void *ctx, uint64_t arg, int err)
{
	(void)ctx;
	(void)arg;
	(void)err;
}

static void draft_message_is_a_close_with_an_outcome(void **state)
{
	unsigned slot = slot_get();
	struct msg *msg = NULL;
	int ctx;

	(void)state;
	assert_int_equal(msg_new_draft(Req, Pool, slot, 5, true, answered, &ctx, &msg), 0);
	assert_int_equal(msg->kind, MSG_DATA);
	assert_null(msg->fh); /* a draft is no open file */
	assert_ptr_equal(msg->req, Req);
	assert_true(msg->flush); /* the rename is answered 0 or an errno */
	assert_true(msg->sync);	 /* close = wait */
	assert_ptr_equal(msg->answered, answered);
	assert_ptr_equal(msg->answered_ctx, &ctx);
	assert_int_equal(msg->slot, slot);
	assert_int_equal(msg->offset, offset_of(slot, 0));
	assert_int_equal(msg->len, 5);
	end(msg);
}

static void empty_draft_gives_its_slot_back(void **state)
{
	unsigned slot = slot_get();
	struct msg *msg = NULL;

	(void)state;
	assert_int_equal(pool_free_count(Pool), NSLOTS - 1);
	assert_int_equal(msg_new_draft(Req, Pool, slot, 0, false, NULL, NULL, &msg), 0);
	assert_int_equal(msg->kind, MSG_EMPTY);
	assert_int_equal(msg->slot, POOL_NO_SLOT);
	assert_int_equal(msg->len, 0);
	assert_int_equal(pool_free_count(Pool), NSLOTS);
	end(msg);
}

static void empty_message_owes_no_reply(void **state)
{
	struct msg *msg = NULL;

	(void)state;
	assert_int_equal(msg_new_empty(Fh, &msg), 0);
	assert_int_equal(msg->kind, MSG_EMPTY);
	assert_ptr_equal(msg->fh, Fh);
	assert_null(msg->req);
	assert_int_equal(msg->slot, POOL_NO_SLOT);
	assert_int_equal(msg->len, 0);
	end(msg);
}

static void fence_is_signaled_and_numbered(void **state)
{
	struct msg *msg = NULL;

	(void)state;
	assert_int_equal(msg_new_fence(42, &msg), 0);
	assert_int_equal(msg->kind, MSG_FENCE);
	assert_int_equal(msg->seq, 42);
	assert_true(msg->signaled);
	assert_null(msg->fh);
	assert_null(msg->req);
	assert_int_equal(msg->slot, POOL_NO_SLOT);
	end(msg);
}

static void delete_frees_an_unsubmitted_message(void **state)
{
	struct msg *msg = NULL;

	(void)state;
	assert_int_equal(msg_new_empty(Fh, &msg), 0);
	msg_delete(&msg);
	assert_null(msg);
	msg_delete(&msg); /* NULL: nothing */
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(write_message_is_the_payload_where_it_lies),
		T(file_message_is_a_close),
		T(draft_message_is_a_close_with_an_outcome),
		T(empty_draft_gives_its_slot_back),
		T(empty_message_owes_no_reply),
		T(fence_is_signaled_and_numbered),
		T(delete_frees_an_unsubmitted_message),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
