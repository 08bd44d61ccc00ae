/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spool.h -- one peer of the config: its spool file, its messages, its link
 *
 * A message goes through three queues of its spool, in order:
 *   pending   written, waiting for the connection or for room in the send
 *             window (the FUSE reply of an async write waits here too);
 *   in flight posted with rpma_send, waiting for its completion (RC
 *             completes a QP's sends in order, so this is a FIFO);
 *   done      counted confirmed or failed, buffer back in the pool, reply
 *             sent where one was owed.
 * Everything in struct spool is protected by spool->lock.
 */
#ifndef RPMAFS_SPOOL_H
#define RPMAFS_SPOOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>

#include <infiniband/verbs.h>

#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include "config.h"

struct mount;
struct link;
struct rpma_cq;

enum spool_state {
	SPOOL_CONNECTING,   /* first attempt since mount */
	SPOOL_CONNECTED,
	SPOOL_RECONNECTING, /* an attempt after a loss or a failed attempt */
	SPOOL_FAILED,       /* the last attempt failed: waiting out the back-off */
};

enum msg_kind {
	MSG_DATA,  /* a write's payload, in a pool slot */
	MSG_EMPTY, /* a 0-byte message: rpma_send(conn, NULL, 0, 0, ...) */
	MSG_FENCE, /* a 0-byte RDMA WRITE posted signaled after unsignaled sends */
};

struct handle;

struct msg {
	struct msg *next;
	enum msg_kind kind;
	struct handle *fh;	/* the handle it was written through (NULL: fence) */
	fuse_req_t req;		/* owed a reply: at post (async) or completion (sync) */
	size_t write_size;	/* what the reply to req says was written */
	bool sync;		/* reply at completion, signaled */
	bool signaled;
	unsigned slot;		/* pool slot holding the payload, or POOL_NO_SLOT */
	size_t offset;		/* payload offset from the pool's base */
	uint32_t len;
	uint64_t seq;		/* the work request id (wr_id): 1, 2, 3, ... per spool */
	uint64_t deadline_ms;	/* while pending: fail with ENOTCONN after this */
	uint64_t posted_ms;	/* when it was posted (monotonic) */
};

struct msgq {
	struct msg *head, *tail;
	unsigned count;
};

/* an fsync waiting for a handle's messages */
struct fsync_wait {
	struct fsync_wait *next;
	fuse_req_t req;
};

/* an open file: the spool file opened for writing, or a status snapshot */
struct handle {
	struct spool *sp;
	int flags;		/* open(2) flags */
	bool sync;		/* mode = sync, or O_SYNC / O_DSYNC */
	bool written;		/* a write was attempted through it */
	bool empty_intent;	/* opened O_TRUNC or truncated to 0 through it */
	bool op_failed;		/* an operation on it failed (ftruncate, fchmod, ...) */
	bool released;
	unsigned in_flight;	/* its messages not completed yet */
	unsigned refs;		/* 1 for the open file + 1 per message not done */
	int error;		/* an async failure not reported yet (EIO) */
	struct fsync_wait *fsyncs; /* fsyncs waiting for in_flight == 0 */
	char *text;		/* status files: the snapshot being read */
	size_t text_len;
};

struct spool_stats {
	enum spool_state state;
	uint64_t posted, completed, failed, refused;
	uint64_t bytes_posted, bytes_confirmed;
	uint64_t in_flight, pending, reconnects, payload_copies;
	uint64_t open_handles;	/* spool file descriptions open now */
	uint64_t last_wr_id;
	uint32_t max_message;
	int last_wc_status;	/* -1: no failure yet */
	char last_error[200];
	struct timespec mtime;	/* last posted message */
	struct timespec ctime;	/* last completion */
};

struct spool {
	const struct rpmafs_peer_cfg *cfg;
	struct mount *m;
	unsigned index;
	fuse_ino_t ino, status_ino;

	pthread_mutex_t lock;
	enum spool_state state;
	struct link *link;	/* the RDMA connection while connected */
	unsigned window;	/* sends allowed in flight */
	uint32_t max_message;	/* effective limit: config, receiver, FUSE */
	struct msgq pending;
	struct msgq in_flight;
	unsigned unsignaled;	/* unsignaled sends since the last signaled one */
	bool fence_in_flight;
	uint64_t next_seq;
	bool ever_connected;
	bool error_since_up;	/* a failure was recorded since the link came up */

	uint64_t backoff_ms;	/* next reconnection delay */
	uint64_t retry_at_ms;	/* when to try again (0: not scheduled) */
	uint64_t fence_at_ms;	/* when to fence unsignaled sends (0: none) */
	uint64_t teardown_at_ms; /* a lost link is freed by then at the latest */
	bool connecting;	/* a connection attempt is running */
	/*
	 * Writes fail at once with ENOTCONN until the next connection: a write
	 * already waited send_timeout_ms in vain, or the peer went silent for
	 * that long. The kernel hands FUSE one write of a file at a time, so
	 * without this each writer queued behind would wait its own
	 * send_timeout_ms, one after the other.
	 */
	bool gave_up;

	struct spool_stats st;
	/* the status text as last rendered (a hash) and when it last changed */
	uint64_t status_hash;
	struct timespec status_changed;
	/* set when the kernel may cache attributes that a completion changes */
	atomic_bool attr_cached;
};

/* spool_init -- set up spool number index of mount m for peer cfg */
void spool_init(struct spool *sp, struct mount *m, unsigned index,
	const struct rpmafs_peer_cfg *cfg);
void spool_fini(struct spool *sp);

/*
 * spool_submit -- queue msg behind everything written before it and post
 * what the connection and the window allow. Takes msg. An async write's
 * reply is sent when its message is posted, a sync one's at completion.
 */
void spool_submit(struct spool *sp, struct msg *msg);

/* engine thread: completions reaped from link's CQ, oldest first */
void spool_completions(struct spool *sp, struct link *link, const struct ibv_wc *wc, int n);

/* engine thread: after a batch -- post what now fits, free a dead link */
void spool_after_completions(struct spool *sp);

/* engine thread: the connection is lost or closed (reason for the status) */
void spool_link_down(struct spool *sp, const char *reason);

/* engine thread: a connection attempt ended (a->link set on success) */
struct link_attempt;
void spool_attempt_done(struct spool *sp, struct link_attempt *a);

/*
 * engine thread: run what is due at now (pending deadlines, link teardown,
 * fences, reconnection); returns when to be called next (0: nothing due).
 */
uint64_t spool_tick(struct spool *sp, uint64_t now);

/* fsync: answer at once or when the handle's messages are settled */
int spool_fsync(struct spool *sp, struct handle *fh, fuse_req_t req);

/* the handle's pending async failure, returned once (0 if none) */
int spool_take_error(struct spool *sp, struct handle *fh);

/* the file is closed for good: drop the open file's reference */
void spool_release(struct spool *sp, struct handle *fh);

/* unmount, after the engine stopped: fail what is queued, free the link */
void spool_close(struct spool *sp);

/* messages queued or in flight */
unsigned spool_busy(struct spool *sp);

/* handle reference counting, under sp->lock; the last put frees it */
void handle_put_locked(struct handle *fh);

/* spool_stats_get -- a consistent copy of the counters */
void spool_stats_get(struct spool *sp, struct spool_stats *st);

const char *spool_state_str(enum spool_state s);

#endif /* RPMAFS_SPOOL_H */
