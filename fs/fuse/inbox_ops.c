// SPDX-License-Identifier: BSD-3-Clause
/* inbox_ops.c -- open, read (blocking, interruptible), poll, release of /inbox */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inbox_ops.h"
#include "tree.h"
#include "xattrops.h"
#include "inbox/inbox.h"

#define INBOX_XATTR_PREFIX "user.rpma."
#define POLLS_MAX 256

/* an open /inbox (or a snapshot of /inbox.status) */
struct inbox_handle {
	struct tree *m;
	struct inbox_reader rd;
	struct inbox_waiter w;
	pthread_mutex_t lock;
	fuse_req_t req;	  /* the read in progress (parked or not), or NULL */
	bool interrupted; /* its INTERRUPT came before it was parked */
	size_t size;
	char *text; /* inbox.status: the snapshot */
	size_t text_len;
};

/* poll handles waiting for an arrival: notified once, then dropped */
static struct {
	pthread_mutex_t lock;
	struct fuse_pollhandle *ph[POLLS_MAX];
	unsigned n;
} polls = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0};

static fuse_ino_t ino_inbox(struct tree *m)
{
	return spool_ino(m->nspools);
}

static fuse_ino_t ino_status(struct tree *m)
{
	return status_ino(m->nspools);
}

bool inbox_ops_ino(struct tree *m, fuse_ino_t ino)
{
	return m->inbox && (ino == ino_inbox(m) || ino == ino_status(m));
}

static void notify_polls(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&polls.lock);
	for (unsigned i = 0; i < polls.n; i++) {
		(void)fuse_lowlevel_notify_poll(polls.ph[i]);
		fuse_pollhandle_destroy(polls.ph[i]);
	}
	polls.n = 0;
	pthread_mutex_unlock(&polls.lock);
}

void inbox_ops_init(struct tree *m, struct fuse_session *se)
{
	(void)se;
	if (m->inbox)
		inbox_set_arrival(m->inbox, notify_polls, NULL);
}

static char *render(struct tree *m, size_t *len)
{
	struct inbox_stats st;
	char *text = NULL;
	unsigned pollers;
	int n;

	inbox_stats_get(m->inbox, &st);
	pthread_mutex_lock(&polls.lock);
	pollers = polls.n;
	pthread_mutex_unlock(&polls.lock);
	n = asprintf(&text,
		"state: %s\nlisten: %s\nconnections: %u\naccepted: %llu\nrejected: %llu\n"
		"failed: %llu\nreceived: %llu\nread: %llu\nwaiting: %u\nbytes: %llu\n"
		"readers: %u\npollers: %u\nacks: %llu\nduplicates: %llu\nwithdrawn: %llu\nlast_sender: %s\n",
		st.state, st.listen, st.connections, (unsigned long long)st.accepted,
		(unsigned long long)st.rejected, (unsigned long long)st.failed,
		(unsigned long long)st.q.received, (unsigned long long)st.q.read, st.q.waiting,
		(unsigned long long)st.q.bytes, st.q.readers, pollers, (unsigned long long)st.acks,
		(unsigned long long)st.duplicates, (unsigned long long)st.q.withdrawn,
		st.last_sender);
	if (n < 0)
		return NULL;
	*len = (size_t)n;
	return text;
}

static void fill_attr(struct tree *m, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_mode = S_IFREG | 0400;
	st->st_mtim = st->st_ctim = st->st_atim = m->mounted_at;
	if (ino == ino_status(m)) {
		size_t len = 0;
		char *text = render(m, &len);

		free(text);
		st->st_size = (off_t)len;
	}
}

bool inbox_ops_lookup(fuse_req_t req, struct tree *m, const char *name)
{
	struct fuse_entry_param e;

	if (!m->inbox)
		return false;
	memset(&e, 0, sizeof(e));
	if (strcmp(name, "inbox") == 0)
		e.ino = ino_inbox(m);
	else if (strcmp(name, "inbox.status") == 0)
		e.ino = ino_status(m);
	else
		return false;
	fill_attr(m, e.ino, &e.attr);
	e.entry_timeout = 86400.0;
	fuse_reply_entry(req, &e);
	return true;
}

unsigned inbox_ops_dirents(struct tree *m)
{
	return m->inbox ? 2 : 0;
}

const char *inbox_ops_dirent(struct tree *m, unsigned i, fuse_ino_t *ino)
{
	*ino = i == 0 ? ino_inbox(m) : ino_status(m);
	return i == 0 ? "inbox" : "inbox.status";
}

void inbox_ops_getattr(fuse_req_t req, struct tree *m, fuse_ino_t ino)
{
	struct stat st;

	fill_attr(m, ino, &st);
	fuse_reply_attr(req, &st, 0.0);
}

static struct inbox_handle *handle_of(struct fuse_file_info *fi)
{
	return (struct inbox_handle *)(uintptr_t)fi->fh;
}

/* a message is rd's now: the parked read takes it and replies */
static void on_ready(struct inbox_waiter *w, bool closing)
{
	struct inbox_handle *h =
		(struct inbox_handle *)((char *)w - offsetof(struct inbox_handle, w));
	fuse_req_t req;
	size_t size;
	char *buf;
	ssize_t n;

	pthread_mutex_lock(&h->lock);
	req = h->req;
	size = h->size;
	h->req = NULL;
	pthread_mutex_unlock(&h->lock);
	if (!req)
		return;
	if (closing) {
		fuse_reply_buf(req, NULL, 0); /* unmount: end of file */
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = inbox_queue_read(inbox_queue(h->m->inbox), &h->rd, buf, size, NULL);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

/* SIGINT on a blocked read: unpark it and end it with EINTR */
static void on_interrupt(fuse_req_t req, void *data)
{
	struct inbox_handle *h = data;
	bool mine = false;

	pthread_mutex_lock(&h->lock);
	if (h->req == req) {
		h->interrupted = true;
		if (inbox_queue_cancel(inbox_queue(h->m->inbox), &h->w)) {
			h->req = NULL;
			mine = true;
		}
	}
	pthread_mutex_unlock(&h->lock);
	if (mine)
		fuse_reply_err(req, EINTR);
}

void inbox_ops_open(fuse_req_t req, struct tree *m, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct inbox_handle *h;

	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	h->m = m;
	h->w.ready = on_ready;
	pthread_mutex_init(&h->lock, NULL);
	if (ino == ino_status(m)) {
		h->text = render(m, &h->text_len);
		if (!h->text) {
			free(h);
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->direct_io = 1;
	fi->nonseekable = ino == ino_inbox(m);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		free(h->text);
		free(h);
	}
}

void inbox_ops_read(fuse_req_t req, struct tree *m, fuse_ino_t ino, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	struct inbox_handle *h = handle_of(fi);
	bool nonblock = (fi->flags & O_NONBLOCK) != 0;
	char *buf;
	ssize_t n;

	if (ino == ino_status(m)) {
		size_t o = (size_t)off < h->text_len ? (size_t)off : h->text_len;
		size_t len = h->text_len - o < size ? h->text_len - o : size;

		fuse_reply_buf(req, h->text + o, len);
		return;
	}
	pthread_mutex_lock(&h->lock);
	if (h->req) {
		/* one read at a time per open file: the rest of a record is one reader's */
		pthread_mutex_unlock(&h->lock);
		fuse_reply_err(req, EBUSY);
		return;
	}
	h->req = req;
	h->size = size;
	h->interrupted = false;
	pthread_mutex_unlock(&h->lock);
	/*
	 * The interrupt before the read may park: once parked, an arrival on
	 * the loop thread may reply and free req at any moment.
	 */
	if (!nonblock)
		fuse_req_interrupt_func(req, on_interrupt, h);
	buf = malloc(size ? size : 1);
	n = buf ? inbox_queue_read(
			  inbox_queue(m->inbox), &h->rd, buf, size, nonblock ? NULL : &h->w)
		: -ENOMEM;
	if (n == -EAGAIN && !nonblock) {
		bool mine = false;

		/* parked: the arrival (on_ready) or the interrupt replies ... */
		free(buf);
		pthread_mutex_lock(&h->lock);
		/* ... or this, when the interrupt came before the parking */
		if (h->req == req && h->interrupted &&
			inbox_queue_cancel(inbox_queue(m->inbox), &h->w)) {
			h->req = NULL;
			mine = true;
		}
		pthread_mutex_unlock(&h->lock);
		if (mine)
			fuse_reply_err(req, EINTR);
		return;
	}
	pthread_mutex_lock(&h->lock);
	h->req = NULL;
	pthread_mutex_unlock(&h->lock);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

void inbox_ops_release(fuse_req_t req, struct tree *m, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct inbox_handle *h = handle_of(fi);

	if (ino == ino_inbox(m))
		inbox_queue_close_reader(inbox_queue(m->inbox), &h->rd);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
	fuse_reply_err(req, 0);
}

void inbox_ops_poll(fuse_req_t req, struct tree *m, fuse_ino_t ino, struct fuse_file_info *fi,
	struct fuse_pollhandle *ph)
{
	struct inbox_handle *h = handle_of(fi);
	unsigned revents = POLLIN;

	if (ino == ino_inbox(m)) {
		if (ph) {
			/* registered before the check: an arrival in between notifies */
			pthread_mutex_lock(&polls.lock);
			if (polls.n < POLLS_MAX) {
				polls.ph[polls.n++] = ph;
				ph = NULL;
			}
			pthread_mutex_unlock(&polls.lock);
			if (ph)
				fuse_pollhandle_destroy(ph);
		}
		revents = inbox_queue_readable(inbox_queue(m->inbox), &h->rd) ? POLLIN : 0;
	}
	fuse_reply_poll(req, revents);
}

static int xattr_value(struct tree *m, const char *key, char *out, size_t len)
{
	size_t tlen = 0, klen = strlen(key);
	char *text = render(m, &tlen);
	int n = -ENODATA;

	if (!text)
		return -ENOMEM;
	for (char *l = text; *l; l = strchr(l, '\n') + 1) {
		size_t ll = strcspn(l, "\n");

		if (strncmp(l, key, klen) == 0 && l[klen] == ':' && l[klen + 1] == ' ') {
			n = snprintf(out, len, "%.*s", (int)(ll - klen - 2), l + klen + 2);
			break;
		}
	}
	free(text);
	return n;
}

static const char xattr_names[] = INBOX_XATTR_PREFIX
	"state\0" INBOX_XATTR_PREFIX "listen\0" INBOX_XATTR_PREFIX
	"connections\0" INBOX_XATTR_PREFIX "rejected\0" INBOX_XATTR_PREFIX
	"received\0" INBOX_XATTR_PREFIX "read\0" INBOX_XATTR_PREFIX "waiting\0" INBOX_XATTR_PREFIX
	"bytes\0" INBOX_XATTR_PREFIX "acks\0" INBOX_XATTR_PREFIX "duplicates\0" INBOX_XATTR_PREFIX
	"withdrawn\0" INBOX_XATTR_PREFIX "last_sender";

void inbox_ops_getxattr(
	fuse_req_t req, struct tree *m, fuse_ino_t ino, const char *name, size_t size)
{
	char val[512];
	int n;

	(void)ino;
	if (strncmp(name, INBOX_XATTR_PREFIX, strlen(INBOX_XATTR_PREFIX)) != 0) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	n = xattr_value(m, name + strlen(INBOX_XATTR_PREFIX), val, sizeof(val));
	xattrops_reply(req, val, n, size);
}

void inbox_ops_listxattr(fuse_req_t req, struct tree *m, fuse_ino_t ino, size_t size)
{
	(void)m;
	(void)ino;
	xattrops_reply(req, xattr_names, (ssize_t)sizeof(xattr_names), size);
}

/* ---- the table: ops.c's, with requests on the inbox's files answered here ---- */

/* what is not the inbox's goes to the table wrapped */
static const struct fuse_lowlevel_ops *base;

static struct tree *tree_of_req(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static bool is_inbox(fuse_req_t req, fuse_ino_t ino)
{
	return inbox_ops_ino(tree_of_req(req), ino);
}

static void i_init(void *userdata, struct fuse_conn_info *conn)
{
	inbox_ops_init(userdata, NULL);
	base->init(userdata, conn);
}

static void i_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (parent != FUSE_ROOT_ID || !inbox_ops_lookup(req, tree_of_req(req), name))
		base->lookup(req, parent, name);
}

static void i_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (is_inbox(req, ino))
		inbox_ops_getattr(req, tree_of_req(req), ino);
	else
		base->getattr(req, ino, fi);
}

static void i_setattr(
	fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	if (is_inbox(req, ino))
		fuse_reply_err(req, EPERM);
	else
		base->setattr(req, ino, attr, to_set, fi);
}

static void i_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (is_inbox(req, ino))
		inbox_ops_open(req, tree_of_req(req), ino, fi);
	else
		base->open(req, ino, fi);
}

static void i_read(
	fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	if (is_inbox(req, ino))
		inbox_ops_read(req, tree_of_req(req), ino, size, off, fi);
	else
		base->read(req, ino, size, off, fi);
}

static void i_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (is_inbox(req, ino))
		fuse_reply_err(req, 0); /* nothing is written through the inbox's files */
	else
		base->flush(req, ino, fi);
}

static void i_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	if (is_inbox(req, ino))
		fuse_reply_err(req, 0);
	else
		base->fsync(req, ino, datasync, fi);
}

static void i_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (is_inbox(req, ino))
		inbox_ops_release(req, tree_of_req(req), ino, fi);
	else
		base->release(req, ino, fi);
}

static void i_poll(
	fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	if (is_inbox(req, ino))
		inbox_ops_poll(req, tree_of_req(req), ino, fi, ph);
	else
		base->poll(req, ino, fi, ph);
}

static void i_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	if (is_inbox(req, ino))
		inbox_ops_getxattr(req, tree_of_req(req), ino, name, size);
	else
		base->getxattr(req, ino, name, size);
}

static void i_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	if (is_inbox(req, ino))
		inbox_ops_listxattr(req, tree_of_req(req), ino, size);
	else
		base->listxattr(req, ino, size);
}

static void i_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	if (is_inbox(req, ino))
		fuse_reply_err(req, mask & (W_OK | X_OK) ? EACCES : 0); /* both files are 0400 */
	else
		base->access(req, ino, mask);
}

const struct fuse_lowlevel_ops *inbox_ops_table(const struct fuse_lowlevel_ops *ops)
{
	static struct fuse_lowlevel_ops t;

	base = ops;
	t = *ops;
	t.init = i_init;
	t.lookup = i_lookup;
	t.getattr = i_getattr;
	t.setattr = i_setattr;
	t.open = i_open;
	t.read = i_read;
	t.flush = i_flush;
	t.fsync = i_fsync;
	t.release = i_release;
	t.poll = i_poll;
	t.getxattr = i_getxattr;
	t.listxattr = i_listxattr;
	t.access = i_access;
	return &t;
}
