// SPDX-License-Identifier: BSD-3-Clause
/* inboxfile.c -- the FUSE operations of /inbox and /inbox.status (see inboxfile.h) */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inboxfile.h"
#include "keys.h"
#include "tree.h"
#include "xattrops.h"
#include "inbox/inbox.h"

#define POLLS_MAX 256

/* an open /inbox (or a snapshot of /inbox.status) */
struct inbox_handle {
	struct tree *t;
	struct inbox_reader rd;
	struct inbox_waiter w;
	pthread_mutex_t lock;
	fuse_req_t req;	  /* the read in progress (parked or not), or NULL */
	bool interrupted; /* its INTERRUPT came before it was parked */
	size_t size;	  /* its size and file offset */
	off_t off;
	struct inbox_window win; /* the last read's bytes, given back by an lseek into them */
	/*
	 * Replies from win sent without h->lock: the kernel may end the read
	 * and send RELEASE inside fuse_reply_buf, so h and its window outlive
	 * the release until the last of them is sent (reply_window_locked)
	 */
	unsigned replying;
	bool released;	     /* RELEASE came: the last reply frees h */
	pthread_cond_t idle; /* replying went to 0: the window may change */
	char *text;	     /* inbox.status: the snapshot */
	size_t text_len;
};

/* poll handles waiting for an arrival: notified once, then dropped */
static struct {
	pthread_mutex_t lock;
	struct fuse_pollhandle *ph[POLLS_MAX];
	unsigned n;
} polls = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0};

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

void inboxfile_init(struct tree *t)
{
	if (t->inbox)
		inbox_set_arrival(t->inbox, notify_polls, NULL);
}

/* the figures of inbox.status and of the xattrs, in the text's order */
enum key {
	K_STATE,
	K_LISTEN,
	K_CONNECTIONS,
	K_ACCEPTED,
	K_REJECTED,
	K_FAILED,
	K_RECEIVED,
	K_READ,
	K_WAITING,
	K_BYTES,
	K_READERS,
	K_POLLERS,
	K_ACKS,
	K_DUPLICATES,
	K_WITHDRAWN,
	K_AUTH_FAILURES,
	K_LAST_SENDER,
	K_COUNT
};

static const char *const key_names[K_COUNT] = {
	[K_STATE] = "state",
	[K_LISTEN] = "listen",
	[K_CONNECTIONS] = "connections",
	[K_ACCEPTED] = "accepted",
	[K_REJECTED] = "rejected",
	[K_FAILED] = "failed",
	[K_RECEIVED] = "received",
	[K_READ] = "read",
	[K_WAITING] = "waiting",
	[K_BYTES] = "bytes",
	[K_READERS] = "readers",
	[K_POLLERS] = "pollers",
	[K_ACKS] = "acks",
	[K_DUPLICATES] = "duplicates",
	[K_WITHDRAWN] = "withdrawn",
	[K_AUTH_FAILURES] = "auth_failures",
	[K_LAST_SENDER] = "last_sender",
};

/* one snapshot: the inbox's figures and the poll handles waiting */
struct snap {
	struct inbox_stats st;
	unsigned pollers;
};

static void value_of(const void *snap_v, unsigned key, char *buf, size_t len)
{
	const struct snap *snap = snap_v;
	const struct inbox_stats *st = &snap->st;

	switch ((enum key)key) {
	case K_STATE:
		snprintf(buf, len, "%s", st->state);
		break;
	case K_LISTEN:
		snprintf(buf, len, "%s", st->listen);
		break;
	case K_CONNECTIONS:
		snprintf(buf, len, "%u", st->connections);
		break;
	case K_ACCEPTED:
		snprintf(buf, len, "%llu", (unsigned long long)st->accepted);
		break;
	case K_REJECTED:
		snprintf(buf, len, "%llu", (unsigned long long)st->rejected);
		break;
	case K_FAILED:
		snprintf(buf, len, "%llu", (unsigned long long)st->failed);
		break;
	case K_RECEIVED:
		snprintf(buf, len, "%llu", (unsigned long long)st->q.received);
		break;
	case K_READ:
		snprintf(buf, len, "%llu", (unsigned long long)st->q.read);
		break;
	case K_WAITING:
		snprintf(buf, len, "%u", st->q.waiting);
		break;
	case K_BYTES:
		snprintf(buf, len, "%llu", (unsigned long long)st->q.bytes);
		break;
	case K_READERS:
		snprintf(buf, len, "%u", st->q.readers);
		break;
	case K_POLLERS:
		snprintf(buf, len, "%u", snap->pollers);
		break;
	case K_ACKS:
		snprintf(buf, len, "%llu", (unsigned long long)st->acks);
		break;
	case K_DUPLICATES:
		snprintf(buf, len, "%llu", (unsigned long long)st->duplicates);
		break;
	case K_WITHDRAWN:
		snprintf(buf, len, "%llu", (unsigned long long)st->q.withdrawn);
		break;
	case K_AUTH_FAILURES:
		snprintf(buf, len, "%llu", (unsigned long long)st->auth_failures);
		break;
	case K_LAST_SENDER:
		snprintf(buf, len, "%s", st->last_sender);
		break;
	case K_COUNT:
		buf[0] = '\0';
		break;
	}
}

static const struct keys inbox_keys = {key_names, K_COUNT, value_of};

static void snapshot(struct tree *t, struct snap *snap)
{
	inbox_stats_get(t->inbox, &snap->st);
	pthread_mutex_lock(&polls.lock);
	snap->pollers = polls.n;
	pthread_mutex_unlock(&polls.lock);
}

static char *render(struct tree *t, size_t *len)
{
	struct snap snap;

	snapshot(t, &snap);
	return keys_text(&inbox_keys, &snap, len);
}

static void fill_attr(struct tree *t, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = t->uid;
	st->st_gid = t->gid;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_mode = S_IFREG | 0400;
	st->st_mtim = st->st_ctim = st->st_atim = t->mounted_at;
	if (ino == tree_inbox_status_ino(t)) {
		size_t len = 0;
		char *text = render(t, &len);

		free(text);
		st->st_size = (off_t)len;
	}
}

void inboxfile_lookup(fuse_req_t req, struct tree *t, fuse_ino_t ino)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	e.ino = ino;
	fill_attr(t, e.ino, &e.attr);
	e.entry_timeout = 86400.0;
	fuse_reply_entry(req, &e);
}

void inboxfile_getattr(fuse_req_t req, struct tree *t, fuse_ino_t ino)
{
	struct stat st;

	fill_attr(t, ino, &st);
	fuse_reply_attr(req, &st, 0.0);
}

static struct inbox_handle *handle_of(struct fuse_file_info *fi)
{
	return (struct inbox_handle *)(uintptr_t)fi->fh;
}

static void handle_free(struct inbox_handle *h)
{
	inbox_window_clear(&h->win);
	pthread_cond_destroy(&h->idle);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
}

/*
 * reply_window_locked -- reply req with the n bytes at p, inside h's window,
 * h->lock held on entry and released before the reply. Once the kernel has
 * the reply it ends the read, and the reader's close may bring RELEASE to
 * another worker before fuse_reply_buf returns here: h is freed by whichever
 * of the release and the last reply from its window comes last, and the
 * window is not replaced while a reply is sent from it.
 */
static void reply_window_locked(struct inbox_handle *h, fuse_req_t req, const char *p, size_t n)
{
	bool gone;

	h->replying++;
	pthread_mutex_unlock(&h->lock);
	fuse_reply_buf(req, p, n);
	pthread_mutex_lock(&h->lock);
	if (--h->replying == 0)
		pthread_cond_broadcast(&h->idle);
	gone = h->released && h->replying == 0;
	pthread_mutex_unlock(&h->lock);
	if (gone)
		handle_free(h);
}

/*
 * The read req (h's, at off) took n bytes (or -errno) into buf: they become
 * h's window and the reply. req is cleared under h->lock before the reply,
 * so that the reader's next read, which may come as soon as the kernel has
 * this reply, does not find it still in progress (EBUSY).
 */
static void reply_taken(struct inbox_handle *h, fuse_req_t req, char *buf, ssize_t n, off_t off)
{
	pthread_mutex_lock(&h->lock);
	h->req = NULL;
	if (n < 0) {
		pthread_mutex_unlock(&h->lock);
		free(buf);
		fuse_reply_err(req, (int)-n);
		return;
	}
	/* another thread's reply of the same open file is still sent from the window */
	while (h->replying)
		pthread_cond_wait(&h->idle, &h->lock);
	inbox_window_set(&h->win, buf, (size_t)n, off);
	reply_window_locked(h, req, h->win.buf, (size_t)n);
}

/* a message is rd's now: the parked read takes it and replies */
static void on_ready(struct inbox_waiter *w, bool closing)
{
	struct inbox_handle *h =
		(struct inbox_handle *)((char *)w - offsetof(struct inbox_handle, w));
	fuse_req_t req;
	size_t size;
	off_t off;
	char *buf;
	ssize_t n;

	pthread_mutex_lock(&h->lock);
	req = h->req;
	size = h->size;
	off = h->off;
	if (closing)
		h->req = NULL;
	pthread_mutex_unlock(&h->lock);
	if (!req)
		return;
	if (closing) {
		fuse_reply_buf(req, NULL, 0); /* unmount: end of file */
		return;
	}
	buf = malloc(size ? size : 1);
	n = buf ? inbox_queue_read(inbox_queue(h->t->inbox), &h->rd, buf, size, NULL) : -ENOMEM;
	reply_taken(h, req, buf, n, off);
}

/* SIGINT on a blocked read: unpark it and end it with EINTR */
static void on_interrupt(fuse_req_t req, void *data)
{
	struct inbox_handle *h = data;
	bool mine = false;

	pthread_mutex_lock(&h->lock);
	if (h->req == req) {
		h->interrupted = true;
		if (inbox_queue_cancel(inbox_queue(h->t->inbox), &h->w)) {
			h->req = NULL;
			mine = true;
		}
	}
	pthread_mutex_unlock(&h->lock);
	if (mine)
		fuse_reply_err(req, EINTR);
}

void inboxfile_open(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi)
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
	h->t = t;
	h->w.ready = on_ready;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->idle, NULL);
	if (ino == tree_inbox_status_ino(t)) {
		h->text = render(t, &h->text_len);
		if (!h->text) {
			handle_free(h);
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	/*
	 * Seekable, so that bash's read and GNU head read a buffer at a time
	 * (a read ends at a line's end: nothing over-read to give back) rather
	 * than a byte per read(2) as on a pipe; an lseek back into the last
	 * read's bytes gives them back (inbox_window)
	 */
	fi->direct_io = 1;
	/*
	 * Nothing to do at close(2) but RELEASE: no FLUSH round trip for each
	 * `read -r l < inbox` (bash's redirection closes twice, dup2 and close)
	 */
	fi->noflush = 1;
	if (fuse_reply_open(req, fi) == -ENOENT)
		handle_free(h); /* the open was interrupted: nothing will release h */
}

void inboxfile_read(fuse_req_t req, struct tree *t, fuse_ino_t ino, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	struct inbox_handle *h = handle_of(fi);
	bool nonblock = (fi->flags & O_NONBLOCK) != 0;
	const char *again;
	char *buf;
	ssize_t n;
	size_t len;

	if (ino == tree_inbox_status_ino(t)) {
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
	len = inbox_window_find(&h->win, off, size, &again);
	if (len > 0) {
		/* given back: the reader lseeked into what its last read returned */
		reply_window_locked(h, req, again, len);
		return;
	}
	h->req = req;
	h->size = size;
	h->off = off;
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
			  inbox_queue(t->inbox), &h->rd, buf, size, nonblock ? NULL : &h->w)
		: -ENOMEM;
	if (n == -EAGAIN && !nonblock) {
		bool mine = false;

		/* parked: the arrival (on_ready) or the interrupt replies ... */
		free(buf);
		pthread_mutex_lock(&h->lock);
		/* ... or this, when the interrupt came before the parking */
		if (h->req == req && h->interrupted &&
			inbox_queue_cancel(inbox_queue(t->inbox), &h->w)) {
			h->req = NULL;
			mine = true;
		}
		pthread_mutex_unlock(&h->lock);
		if (mine)
			fuse_reply_err(req, EINTR);
		return;
	}
	reply_taken(h, req, buf, n, off);
}

void inboxfile_release(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct inbox_handle *h = handle_of(fi);

	bool now;

	if (ino == tree_inbox_ino(t))
		inbox_queue_close_reader(inbox_queue(t->inbox), &h->rd);
	pthread_mutex_lock(&h->lock);
	h->released = true;
	/* a reply that ended the last read may still be sent from the window */
	now = h->replying == 0;
	pthread_mutex_unlock(&h->lock);
	if (now)
		handle_free(h);
	fuse_reply_err(req, 0);
}

void inboxfile_poll(fuse_req_t req, struct tree *t, fuse_ino_t ino, struct fuse_file_info *fi,
	struct fuse_pollhandle *ph)
{
	struct inbox_handle *h = handle_of(fi);
	unsigned revents = POLLIN;

	if (ino == tree_inbox_ino(t)) {
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
		revents = inbox_queue_readable(inbox_queue(t->inbox), &h->rd) ? POLLIN : 0;
	}
	fuse_reply_poll(req, revents);
}

void inboxfile_getxattr(fuse_req_t req, struct tree *t, const char *name, size_t size)
{
	char val[KEYS_VALUE_MAX];
	struct snap snap;
	int n;

	snapshot(t, &snap);
	n = keys_xattr(&inbox_keys, &snap, name, val, sizeof(val));
	xattrops_reply(req, val, n, size);
}

void inboxfile_listxattr(fuse_req_t req, size_t size)
{
	char names[K_COUNT * 32];
	int n = keys_xattr_names(&inbox_keys, names, sizeof(names));

	xattrops_reply(req, names, n, size);
}

void inboxfile_setattr(fuse_req_t req)
{
	fuse_reply_err(req, EPERM);
}

void inboxfile_access(fuse_req_t req, int mask)
{
	fuse_reply_err(req, mask & (W_OK | X_OK) ? EACCES : 0); /* both files are 0400 */
}
