// SPDX-License-Identifier: BSD-3-Clause
/* the reconnect-after-ENOMEM bug, against spool.c as it is (old shape) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine.h"
#include "link.h"
#include "mount.h"
#include "pool.h"
#include "spool.h"

static uint64_t Now = 1000;
static unsigned Connects;
static int Connect_ret;

void engine_arm(struct engine *e, uint64_t at) { (void)e; (void)at; }
void engine_kick(struct engine *e) { (void)e; }
void engine_bury(struct engine *e, struct link *l) { (void)e; (void)l; }
int link_connect_async(struct spool *sp) { (void)sp; Connects++; return Connect_ret; }
int link_post(struct link *l, struct msg *m) { (void)l; (void)m; return 0; }
void link_disconnect(struct link *l) { (void)l; }
void pool_put(struct pool *p, unsigned s) { (void)p; (void)s; }
unsigned pool_nslots(const struct pool *p) { (void)p; return 16; }
unsigned pool_free_count(struct pool *p) { (void)p; return 16; }
void log_msg(int prio, const char *fmt, ...) { (void)prio; (void)fmt; }
int fuse_reply_err(fuse_req_t r, int e) { (void)r; (void)e; return 0; }
int fuse_reply_write(fuse_req_t r, size_t n) { (void)r; (void)n; return 0; }
int fuse_lowlevel_notify_inval_inode(struct fuse_session *se, fuse_ino_t i, off_t o, off_t l)
{ (void)se; (void)i; (void)o; (void)l; return 0; }

static void retry_after_enomem(void **state)
{
	struct rpmafs_peer_cfg cfg = {.name = "alpha", .address = "192.168.77.2", .port = 7204,
		.type = RPMAFS_PEER_RDMA, .max_message = 4096, .send_timeout_ms = 5000,
		.connect_timeout_ms = 1000};
	struct mount m = {0};
	struct spool sp;
	uint64_t next;

	(void)state;
	spool_init(&sp, &m, 0, &cfg);
	Connect_ret = -ENOMEM;
	spool_tick(&sp, Now);
	assert_int_equal(Connects, 1);
	/* the attempt could not even start: a retry must be scheduled */
	next = spool_tick(&sp, Now);
	assert_true(next > Now);
	Now = next;
	Connect_ret = 0;
	spool_tick(&sp, Now);
	assert_int_equal(Connects, 2);
	spool_fini(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(retry_after_enomem)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
