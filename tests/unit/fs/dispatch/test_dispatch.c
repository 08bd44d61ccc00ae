// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_dispatch.c -- the FUSE operations table: every request reaches the
 * handler of its inode's kind (or of the name's, in the root), and what no
 * kind has gets the errno the mount has always answered
 *
 * The handler files (root, spoolfile, statusfile, inboxfile, draftfile,
 * xattrops) are fakes here: each records its name, the inode and the spool
 * it was called with. The tree has peers "a" and "b", an inbox, and one
 * draft "d1" in a real draft store.
 */

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fuse/draft.h"
#include "fuse/draftfile.h"
#include "fuse/inboxfile.h"
#include "fuse/ops.h"
#include "fuse/root.h"
#include "fuse/spoolfile.h"
#include "fuse/statusfile.h"
#include "fuse/tree.h"
#include "fuse/xattrops.h"

/* ---- what was called ---- */

static struct {
	const char *fn;	    /* the handler, or "reply_err" / "reply_poll" */
	fuse_ino_t ino;	    /* the inode it got (0: none passed) */
	struct spool *sp;   /* the spool it got (NULL: none passed) */
	int err;	    /* reply_err's errno */
	unsigned revents;   /* reply_poll's */
	unsigned calls;	    /* handlers and replies together: exactly one per request */
	unsigned destroyed; /* poll handles destroyed */
} got;

static void record(const char *fn, fuse_ino_t ino, struct spool *sp)
{
	got.fn = fn;
	got.ino = ino;
	got.sp = sp;
	got.calls++;
}

static struct tree tree;
/* spool/spool.h keeps struct spool opaque: the test's own, and spool_cfg over it */
struct spool {
	const struct rpmafs_peer_cfg *cfg;
};
static struct spool spool_objs[2];
static struct spool *spools[2] = {&spool_objs[0], &spool_objs[1]};

const struct rpmafs_peer_cfg *spool_cfg(const struct spool *sp)
{
	return sp->cfg;
}
static struct rpmafs_peer_cfg cfgs[2];
static int req_dummy;
#define REQ ((fuse_req_t)(void *)&req_dummy)
static fuse_ino_t draft_ino;

void *__wrap_fuse_req_userdata(fuse_req_t req);
const struct fuse_ctx *__wrap_fuse_req_ctx(fuse_req_t req);
int __wrap_fuse_reply_err(fuse_req_t req, int err);
int __wrap_fuse_reply_poll(fuse_req_t req, unsigned revents);
void __wrap_fuse_pollhandle_destroy(struct fuse_pollhandle *ph);

void *__wrap_fuse_req_userdata(fuse_req_t req)
{
	assert_ptr_equal(req, REQ);
	return &tree;
}

int __wrap_fuse_reply_err(fuse_req_t req, int err)
{
	(void)req;
	record("reply_err", 0, NULL);
	got.err = err;
	return 0;
}

int __wrap_fuse_reply_poll(fuse_req_t req, unsigned revents)
{
	(void)req;
	record("reply_poll", 0, NULL);
	got.revents = revents;
	return 0;
}

void __wrap_fuse_pollhandle_destroy(struct fuse_pollhandle *ph)
{
	(void)ph;
	got.destroyed++;
}

/* ---- the fake handler files ---- */

#define FAKE(fn, ino, sp) record(#fn, ino, sp)

void root_getattr(fuse_req_t req, struct tree *t)
{
	FAKE(root_getattr, 0, NULL);
}
void root_setattr(fuse_req_t req, struct tree *t, int to_set)
{
	FAKE(root_setattr, 0, NULL);
}
void root_readdir(fuse_req_t req, struct tree *t, size_t size, off_t off)
{
	FAKE(root_readdir, 0, NULL);
}
void root_access(fuse_req_t req)
{
	FAKE(root_access, 0, NULL);
}
void root_getxattr(fuse_req_t req, struct tree *t, const char *name, size_t size)
{
	FAKE(root_getxattr, 0, NULL);
}
void root_listxattr(fuse_req_t req, size_t size)
{
	FAKE(root_listxattr, 0, NULL);
}
void root_statfs(fuse_req_t req, struct tree *t)
{
	FAKE(root_statfs, 0, NULL);
}

void spoolfile_lookup(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino)
{
	FAKE(spoolfile_lookup, ino, sp);
}
void spoolfile_getattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino)
{
	FAKE(spoolfile_getattr, ino, sp);
}
void spoolfile_setattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino,
	struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	FAKE(spoolfile_setattr, ino, sp);
}
void spoolfile_open(fuse_req_t req, struct tree *t, struct spool *sp, struct fuse_file_info *fi)
{
	FAKE(spoolfile_open, 0, sp);
}
void spoolfile_create(
	fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino, struct fuse_file_info *fi)
{
	FAKE(spoolfile_create, ino, sp);
}
void spoolfile_read(fuse_req_t req)
{
	FAKE(spoolfile_read, 0, NULL);
}
void spoolfile_write(fuse_req_t req, struct tree *t, const char *buf, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	FAKE(spoolfile_write, 0, NULL);
}
void spoolfile_flush(fuse_req_t req, struct tree *t, struct fuse_file_info *fi)
{
	FAKE(spoolfile_flush, 0, NULL);
}
void spoolfile_fsync(fuse_req_t req, struct fuse_file_info *fi)
{
	FAKE(spoolfile_fsync, 0, NULL);
}
void spoolfile_release(fuse_req_t req, struct fuse_file_info *fi)
{
	FAKE(spoolfile_release, 0, NULL);
}
void spoolfile_access(fuse_req_t req, int mask)
{
	FAKE(spoolfile_access, 0, NULL);
}

void statusfile_lookup(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino)
{
	FAKE(statusfile_lookup, ino, sp);
}
void statusfile_getattr(fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino)
{
	FAKE(statusfile_getattr, ino, sp);
}
void statusfile_setattr(
	fuse_req_t req, struct tree *t, struct spool *sp, fuse_ino_t ino, int to_set)
{
	FAKE(statusfile_setattr, ino, sp);
}
void statusfile_open(fuse_req_t req, struct spool *sp, struct fuse_file_info *fi)
{
	FAKE(statusfile_open, 0, sp);
}
void statusfile_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	FAKE(statusfile_read, 0, NULL);
}
void statusfile_release(fuse_req_t req, struct fuse_file_info *fi)
{
	FAKE(statusfile_release, 0, NULL);
}
void statusfile_access(fuse_req_t req, int mask)
{
	FAKE(statusfile_access, 0, NULL);
}

void inboxfile_init(struct tree *t)
{
	assert_ptr_equal(t, &tree);
	FAKE(inboxfile_init, 0, NULL);
}
void inboxfile_lookup(fuse_req_t req, struct tree *t, fuse_ino_t ino)
{
	FAKE(inboxfile_lookup, ino, NULL);
}
void inboxfile_getattr(fuse_req_t req, struct tree *t, fuse_ino_t ino)
{
	FAKE(inboxfile_getattr, ino, NULL);
}
void inboxfile_setattr(fuse_req_t req)
{
	FAKE(inboxfile_setattr, 0, NULL);
}
void inboxfile_open(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi)
{
	FAKE(inboxfile_open, ino, NULL);
}
void inboxfile_read(fuse_req_t req, struct tree *t, fuse_ino_t ino, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	FAKE(inboxfile_read, ino, NULL);
}
void inboxfile_release(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi)
{
	FAKE(inboxfile_release, ino, NULL);
}
void inboxfile_poll(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi,
	struct fuse_pollhandle *ph)
{
	FAKE(inboxfile_poll, ino, NULL);
}
void inboxfile_getxattr(fuse_req_t req, struct tree *t, const char *name, size_t size)
{
	FAKE(inboxfile_getxattr, 0, NULL);
}
void inboxfile_listxattr(fuse_req_t req, size_t size)
{
	FAKE(inboxfile_listxattr, 0, NULL);
}
void inboxfile_access(fuse_req_t req, int mask)
{
	FAKE(inboxfile_access, 0, NULL);
}

void draftfile_lookup(fuse_req_t req, struct tree *t, fuse_ino_t ino)
{
	FAKE(draftfile_lookup, ino, NULL);
}
void draftfile_getattr(fuse_req_t req, struct tree *t, fuse_ino_t ino)
{
	FAKE(draftfile_getattr, ino, NULL);
}
void draftfile_setattr(
	fuse_req_t req, struct tree *t, fuse_ino_t ino, struct stat *attr, int to_set)
{
	FAKE(draftfile_setattr, ino, NULL);
}
void draftfile_create(
	fuse_req_t req, struct tree *t, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	FAKE(draftfile_create, 0, NULL);
}
void draftfile_open(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi)
{
	FAKE(draftfile_open, ino, NULL);
}
void draftfile_read(fuse_req_t req, struct tree *t, fuse_ino_t ino, size_t size, off_t off)
{
	FAKE(draftfile_read, ino, NULL);
}
void draftfile_write(fuse_req_t req, struct tree *t, fuse_ino_t ino, const char *buf, size_t size,
	off_t off, struct fuse_file_info *fi)
{
	FAKE(draftfile_write, ino, NULL);
}
void draftfile_unlink(fuse_req_t req, struct tree *t, const char *name)
{
	FAKE(draftfile_unlink, 0, NULL);
}
void draftfile_rename(fuse_req_t req, struct tree *t, const char *name, fuse_ino_t newparent,
	const char *newname, unsigned int flags)
{
	FAKE(draftfile_rename, 0, NULL);
}
void draftfile_access(fuse_req_t req, struct tree *t, fuse_ino_t ino, int mask)
{
	FAKE(draftfile_access, ino, NULL);
}

void xattrops_reply(fuse_req_t req, const char *value, ssize_t n, size_t size)
{
	FAKE(xattrops_reply, 0, NULL);
}
void xattrops_reply_none(fuse_req_t req, size_t size)
{
	FAKE(xattrops_reply_none, 0, NULL);
}
void xattrops_get(fuse_req_t req, struct spool *sp, const char *name, size_t size)
{
	FAKE(xattrops_get, 0, sp);
}
void xattrops_list(fuse_req_t req, size_t size)
{
	FAKE(xattrops_list, 0, NULL);
}
void xattrops_set(
	fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size, int flags)
{
	FAKE(xattrops_set, ino, NULL);
}
void xattrops_remove(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	FAKE(xattrops_remove, ino, NULL);
}

/* ---- the tree ---- */

/* the caller of every request: the mount's owner unless a test says otherwise */
static struct fuse_ctx caller;

const struct fuse_ctx *__wrap_fuse_req_ctx(fuse_req_t req)
{
	assert_ptr_equal(req, REQ);
	return &caller;
}

#define INO_A spool_ino(0)
#define INO_A_STATUS status_ino(0)
#define INO_B spool_ino(1)
#define INO_B_STATUS status_ino(1)
#define INO_INBOX spool_ino(2)
#define INO_INBOX_STATUS status_ino(2)
#define INO_NONE status_ino(40) /* past every spool, below the drafts */

static int setup(void **state)
{
	struct draft_attr a;
	const char *which = "";

	(void)state;
	memset(&tree, 0, sizeof(tree));
	tree.uid = 1000;
	tree.gid = 1000;
	memset(&caller, 0, sizeof(caller));
	caller.uid = tree.uid;
	snprintf(cfgs[0].name, sizeof(cfgs[0].name), "a");
	snprintf(cfgs[1].name, sizeof(cfgs[1].name), "b");
	spools[0]->cfg = &cfgs[0];
	spools[1]->cfg = &cfgs[1];
	tree.spools = spools;
	tree.nspools = 2;
	tree.inbox = (struct inbox *)(void *)&req_dummy; /* never looked into: the fakes answer */
	assert_int_equal(drafts_new(4, 4096, DRAFT_FIRST_INO, &tree.drafts), 0);
	assert_int_equal(drafts_create(tree.drafts, "d1", 0, 0, 0600, &a, &which), 0);
	draft_ino = a.ino;
	memset(&got, 0, sizeof(got));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	drafts_delete(&tree.drafts);
	tree_hidden_delete(&tree);
	return 0;
}

/* exactly one call since the last check, to fn (with ino and sp when they are passed) */
static void expect_call(const char *fn, fuse_ino_t ino, struct spool *sp)
{
	assert_int_equal(got.calls, 1);
	assert_string_equal(got.fn, fn);
	assert_int_equal(got.ino, ino);
	assert_ptr_equal(got.sp, sp);
	memset(&got, 0, sizeof(got));
}

static void expect_err(int err)
{
	int was = got.err;

	expect_call("reply_err", 0, NULL);
	assert_int_equal(was, err);
}

/* ---- the inode kinds ---- */

static void test_kinds(void **state)
{
	struct spool *sp;

	(void)state;
	assert_int_equal(tree_kind(&tree, FUSE_ROOT_ID, &sp), NODE_ROOT);
	assert_int_equal(tree_kind(&tree, INO_A, &sp), NODE_SPOOL);
	assert_ptr_equal(sp, spools[0]);
	assert_int_equal(tree_kind(&tree, INO_B_STATUS, &sp), NODE_STATUS);
	assert_ptr_equal(sp, spools[1]);
	assert_int_equal(tree_kind(&tree, INO_INBOX, &sp), NODE_INBOX);
	assert_null(sp);
	assert_int_equal(tree_kind(&tree, INO_INBOX_STATUS, &sp), NODE_INBOX_STATUS);
	assert_int_equal(tree_kind(&tree, draft_ino, &sp), NODE_DRAFT);
	/* a draft's inode, gone or never made, is still the drafts' to answer */
	assert_int_equal(tree_kind(&tree, draft_ino + 7, &sp), NODE_DRAFT);
	assert_int_equal(tree_kind(&tree, INO_NONE, &sp), NODE_NONE);
	assert_null(sp);
	assert_int_equal(tree_kind(&tree, 0, &sp), NODE_NONE);
	/* no inbox: its inodes are nobody's */
	tree.inbox = NULL;
	assert_int_equal(tree_kind(&tree, INO_INBOX, &sp), NODE_NONE);
	assert_int_equal(tree_kind(&tree, INO_INBOX_STATUS, &sp), NODE_NONE);
}

/* ---- lookup and the namespace, by name ---- */

static void test_lookup(void **state)
{
	(void)state;
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "a");
	expect_call("spoolfile_lookup", INO_A, spools[0]);
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "b.status");
	expect_call("statusfile_lookup", INO_B_STATUS, spools[1]);
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "inbox");
	expect_call("inboxfile_lookup", INO_INBOX, NULL);
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "inbox.status");
	expect_call("inboxfile_lookup", INO_INBOX_STATUS, NULL);
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "d1");
	expect_call("draftfile_lookup", draft_ino, NULL);
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "nope");
	expect_err(ENOENT);
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "a.stat");
	expect_err(ENOENT);
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "ab");
	expect_err(ENOENT);
	rpmafs_ops.lookup(REQ, INO_A, "a");
	expect_err(ENOTDIR);
	rpmafs_ops.lookup(REQ, INO_NONE, "a");
	expect_err(ENOTDIR);
	/* no inbox: its names are nobody's */
	tree.inbox = NULL;
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "inbox");
	expect_err(ENOENT);
}

/* an unlinked spool's name is gone until the next create of it opens the spool */
static void test_hidden_spool(void **state)
{
	struct fuse_file_info fi = {0};

	(void)state;
	assert_int_equal(tree_hidden_new(&tree), 0);
	caller.uid = 1001; /* another user (allow_other): the spool is not theirs */
	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "a");
	expect_err(EPERM);
	caller.uid = tree.uid;
	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "a.status");
	expect_err(EPERM);
	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "a");
	expect_err(0);
	assert_true(tree_is_hidden(&tree, INO_A));
	assert_false(tree_is_hidden(&tree, INO_B));
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "a");
	expect_err(ENOENT);
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "a.status");
	expect_call("statusfile_lookup", INO_A_STATUS, spools[0]);
	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "a");
	expect_err(ENOENT);
	/* the create opens the spool and shows the name again */
	rpmafs_ops.create(REQ, FUSE_ROOT_ID, "a", S_IFREG | 0644, &fi);
	expect_call("spoolfile_create", INO_A, spools[0]);
	assert_false(tree_is_hidden(&tree, INO_A));
	rpmafs_ops.lookup(REQ, FUSE_ROOT_ID, "a");
	expect_call("spoolfile_lookup", INO_A, spools[0]);
	/* a visible spool is never created */
	rpmafs_ops.create(REQ, FUSE_ROOT_ID, "a", S_IFREG | 0644, &fi);
	expect_err(EPERM);
	/* root may unlink it too; a rename of a draft onto it shows it again */
	caller.uid = 0;
	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "b");
	expect_err(0);
	rpmafs_ops.rename(REQ, FUSE_ROOT_ID, "d1", FUSE_ROOT_ID, "b", 0);
	expect_call("draftfile_rename", 0, NULL);
	assert_false(tree_is_hidden(&tree, INO_B));
}

static void test_namespace(void **state)
{
	struct fuse_file_info fi = {0};

	(void)state;
	rpmafs_ops.create(REQ, FUSE_ROOT_ID, "new", S_IFREG | 0600, &fi);
	expect_call("draftfile_create", 0, NULL);
	rpmafs_ops.create(REQ, FUSE_ROOT_ID, "d1", S_IFREG | 0600, &fi);
	expect_call("draftfile_create", 0, NULL); /* it says EEXIST */
	rpmafs_ops.create(REQ, FUSE_ROOT_ID, "a", S_IFREG | 0600, &fi);
	expect_err(EPERM);
	rpmafs_ops.create(REQ, FUSE_ROOT_ID, "a.status", S_IFREG | 0600, &fi);
	expect_err(EPERM);
	rpmafs_ops.create(REQ, INO_A, "new", S_IFREG | 0600, &fi);
	expect_err(EPERM);

	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "d1");
	expect_call("draftfile_unlink", 0, NULL);
	/* without room for hidden names (no FUSE_INIT), a spool is not unlinked */
	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "a");
	expect_err(EPERM);
	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "inbox");
	expect_err(EPERM);
	rpmafs_ops.unlink(REQ, FUSE_ROOT_ID, "nope");
	expect_err(EPERM);
	rpmafs_ops.unlink(REQ, INO_A, "d1");
	expect_err(EPERM);

	rpmafs_ops.rename(REQ, FUSE_ROOT_ID, "d1", FUSE_ROOT_ID, "a", 0);
	expect_call("draftfile_rename", 0, NULL);
	rpmafs_ops.rename(REQ, FUSE_ROOT_ID, "a", FUSE_ROOT_ID, "b", 0);
	expect_err(EPERM);
	rpmafs_ops.rename(REQ, INO_A, "d1", FUSE_ROOT_ID, "a", 0);
	expect_err(EPERM);

	rpmafs_ops.mknod(REQ, FUSE_ROOT_ID, "n", S_IFIFO | 0600, 0);
	expect_err(EPERM);
	rpmafs_ops.mkdir(REQ, FUSE_ROOT_ID, "n", 0700);
	expect_err(EPERM);
	rpmafs_ops.rmdir(REQ, FUSE_ROOT_ID, "d1");
	expect_err(EPERM);
	rpmafs_ops.symlink(REQ, "a", FUSE_ROOT_ID, "n");
	expect_err(EPERM);
	rpmafs_ops.link(REQ, draft_ino, FUSE_ROOT_ID, "n");
	expect_err(EPERM);
}

/* ---- by inode: one row per kind, what each operation reaches ---- */

enum op {
	GETATTR,
	SETATTR,
	READDIR,
	OPEN,
	READ,
	WRITE,
	FLUSH,
	FSYNC,
	RELEASE,
	GETXATTR,
	LISTXATTR,
	ACCESS,
	OPS
};

static const char *const op_names[OPS] = {"getattr", "setattr", "readdir", "open", "read", "write",
	"flush", "fsync", "release", "getxattr", "listxattr", "access"};

/* a handler's name, or an errno for a reply_err the table gives itself */
struct want {
	const char *fn;
	int err;
};

#define H(f)          \
	{             \
#f, 0 \
	}
#define E(e)            \
	{               \
		NULL, e \
	}

struct row {
	const char *what;
	fuse_ino_t ino;
	struct spool *sp;     /* what the handler gets passed: its spool */
	bool ino_passed[OPS]; /* the handler gets the inode */
	struct want want[OPS];
};

static void call(enum op op, fuse_ino_t ino)
{
	struct fuse_file_info fi = {0};
	struct stat st = {0};

	switch (op) {
	case GETATTR:
		rpmafs_ops.getattr(REQ, ino, NULL);
		break;
	case SETATTR:
		rpmafs_ops.setattr(REQ, ino, &st, FUSE_SET_ATTR_MTIME, NULL);
		break;
	case READDIR:
		rpmafs_ops.readdir(REQ, ino, 4096, 0, &fi);
		break;
	case OPEN:
		rpmafs_ops.open(REQ, ino, &fi);
		break;
	case READ:
		rpmafs_ops.read(REQ, ino, 10, 0, &fi);
		break;
	case WRITE:
		rpmafs_ops.write(REQ, ino, "x", 1, 0, &fi);
		break;
	case FLUSH:
		rpmafs_ops.flush(REQ, ino, &fi);
		break;
	case FSYNC:
		rpmafs_ops.fsync(REQ, ino, 0, &fi);
		break;
	case RELEASE:
		rpmafs_ops.release(REQ, ino, &fi);
		break;
	case GETXATTR:
		rpmafs_ops.getxattr(REQ, ino, "user.rpma.state", 0);
		break;
	case LISTXATTR:
		rpmafs_ops.listxattr(REQ, ino, 0);
		break;
	case ACCESS:
		rpmafs_ops.access(REQ, ino, R_OK);
		break;
	case OPS:
		break;
	}
}

static void check_row(const struct row *r)
{
	for (int op = 0; op < OPS; op++) {
		const struct want *w = &r->want[op];

		memset(&got, 0, sizeof(got));
		call((enum op)op, r->ino);
		print_message("%s %s\n", r->what, op_names[op]);
		assert_int_equal(got.calls, 1);
		if (!w->fn) {
			assert_string_equal(got.fn, "reply_err");
			assert_int_equal(got.err, w->err);
			continue;
		}
		assert_string_equal(got.fn, w->fn);
		assert_int_equal(got.ino, r->ino_passed[op] ? r->ino : 0);
		/* the handlers of a spool's files that take its spool get it */
		assert_ptr_equal(got.sp,
			r->sp && (op == GETATTR || op == SETATTR || op == OPEN || op == GETXATTR)
				? r->sp
				: NULL);
	}
}

static void test_by_inode(void **state)
{
	const struct row rows[] = {
		{"root", FUSE_ROOT_ID, NULL, {0},
			{H(root_getattr), H(root_setattr), H(root_readdir), E(EISDIR), E(EBADF),
				E(EBADF), E(EBADF), E(EBADF), E(EBADF), H(root_getxattr),
				H(root_listxattr), H(root_access)}},
		{"spool", INO_B, spools[1], {[GETATTR] = true, [SETATTR] = true},
			{H(spoolfile_getattr), H(spoolfile_setattr), E(ENOTDIR), H(spoolfile_open),
				H(spoolfile_read), H(spoolfile_write), H(spoolfile_flush),
				H(spoolfile_fsync), H(spoolfile_release), H(xattrops_get),
				H(xattrops_list), H(spoolfile_access)}},
		{"status", INO_A_STATUS, spools[0], {[GETATTR] = true, [SETATTR] = true},
			{H(statusfile_getattr), H(statusfile_setattr), E(ENOTDIR),
				H(statusfile_open), H(statusfile_read), E(EBADF), E(0), E(0),
				H(statusfile_release), H(xattrops_get), H(xattrops_list),
				H(statusfile_access)}},
		{"inbox", INO_INBOX, NULL,
			{[GETATTR] = true, [OPEN] = true, [READ] = true, [RELEASE] = true},
			{H(inboxfile_getattr), H(inboxfile_setattr), E(ENOTDIR), H(inboxfile_open),
				H(inboxfile_read), E(EBADF), E(0), E(0), H(inboxfile_release),
				H(inboxfile_getxattr), H(inboxfile_listxattr),
				H(inboxfile_access)}},
		{"inbox.status", INO_INBOX_STATUS, NULL,
			{[GETATTR] = true, [OPEN] = true, [READ] = true, [RELEASE] = true},
			{H(inboxfile_getattr), H(inboxfile_setattr), E(ENOTDIR), H(inboxfile_open),
				H(inboxfile_read), E(EBADF), E(0), E(0), H(inboxfile_release),
				H(inboxfile_getxattr), H(inboxfile_listxattr),
				H(inboxfile_access)}},
		{"draft", draft_ino, NULL,
			{[GETATTR] = true,
				[SETATTR] = true,
				[OPEN] = true,
				[READ] = true,
				[WRITE] = true,
				[ACCESS] = true},
			{H(draftfile_getattr), H(draftfile_setattr), E(ENOTDIR), H(draftfile_open),
				H(draftfile_read), H(draftfile_write), E(0), E(0), E(0), E(ENODATA),
				H(xattrops_reply_none), H(draftfile_access)}},
		{"unknown", INO_NONE, NULL, {0},
			{E(ENOENT), E(ENOENT), E(ENOTDIR), E(ENOENT), E(EBADF), E(EBADF), E(EBADF),
				E(EBADF), E(EBADF), E(ENOENT), H(xattrops_reply_none), E(ENOENT)}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
}

/* without an inbox, its inodes are unknown ones */
static void test_no_inbox(void **state)
{
	struct fuse_file_info fi = {0};

	(void)state;
	tree.inbox = NULL;
	rpmafs_ops.getattr(REQ, INO_INBOX, NULL);
	expect_err(ENOENT);
	rpmafs_ops.open(REQ, INO_INBOX_STATUS, &fi);
	expect_err(ENOENT);
	rpmafs_ops.getxattr(REQ, INO_INBOX_STATUS, "user.rpma.state", 0);
	expect_err(ENOENT);
}

/* ---- the rest: poll, statfs, the xattrs no file has, init ---- */

static void test_poll(void **state)
{
	struct fuse_file_info fi = {0};
	struct fuse_pollhandle *ph = (struct fuse_pollhandle *)(void *)&req_dummy;
	const fuse_ino_t ready[] = {FUSE_ROOT_ID, INO_A, INO_A_STATUS, draft_ino, INO_NONE};

	(void)state;
	rpmafs_ops.poll(REQ, INO_INBOX, &fi, ph);
	expect_call("inboxfile_poll", INO_INBOX, NULL);
	rpmafs_ops.poll(REQ, INO_INBOX_STATUS, &fi, NULL);
	expect_call("inboxfile_poll", INO_INBOX_STATUS, NULL);
	for (size_t i = 0; i < sizeof(ready) / sizeof(ready[0]); i++) {
		rpmafs_ops.poll(REQ, ready[i], &fi, ph);
		/* always ready, as a regular file; the handle is not kept */
		assert_int_equal(got.revents, POLLIN | POLLOUT);
		assert_int_equal(got.destroyed, 1);
		expect_call("reply_poll", 0, NULL);
	}
}

static void test_rest(void **state)
{
	struct fuse_conn_info conn = {0};

	(void)state;
	rpmafs_ops.statfs(REQ, INO_A);
	expect_call("root_statfs", 0, NULL);
	rpmafs_ops.setxattr(REQ, INO_NONE, "user.rpma.state", "x", 1, 0);
	expect_call("xattrops_set", INO_NONE, NULL);
	rpmafs_ops.removexattr(REQ, draft_ino, "user.x");
	expect_call("xattrops_remove", draft_ino, NULL);
	conn.capable = FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_SPLICE_READ;
	conn.want = FUSE_CAP_SPLICE_READ;
	rpmafs_ops.init(&tree, &conn);
	expect_call("inboxfile_init", 0, NULL);
	assert_true(conn.want & FUSE_CAP_ATOMIC_O_TRUNC);
	assert_false(conn.want & FUSE_CAP_SPLICE_READ);
	assert_non_null(tree.hidden); /* init made room for the hidden names */
	rpmafs_ops.destroy(&tree);
	assert_null(tree.hidden);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hidden_spool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by_inode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_inbox, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rest, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
