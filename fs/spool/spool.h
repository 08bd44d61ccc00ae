/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spool.h -- one peer of the config: its spool file and its messages
 *
 * A message goes through two queues of its spool, in order:
 *   pending   written, waiting for the connection or for room in the send
 *             window (the FUSE reply of an async write waits here too);
 *   in flight posted, waiting for its completion (RC completes a QP's
 *             sends in order, so this is a FIFO).
 * Then one function finishes it (finish_locked in spool.c): it is counted
 * confirmed, failed or refused, its buffer goes back to the pool, and the
 * reply it still owes is collected and sent once sp->lock is released.
 * The connection itself is the spool's link (link.h).
 * Everything in struct spool is protected by spool->lock.
 */
#ifndef RPMAFS_SPOOL_H
#define RPMAFS_SPOOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>

#include "config.h"
#include "confirm.h"
#include "counters.h"
#include "msg.h"
#include "owners.h"

struct frame;
struct link;
struct loop;
struct pool;
struct devices;

/*
 * The largest write FUSE hands over in one request whatever the alignment
 * of the writer's buffer: the kernel passes at most 256 pages per request,
 * and a buffer that does not start on a page boundary needs one of them for
 * its first partial page. max_write is set one byte above this, so a write
 * larger than the limit still arrives whole (and fails with EMSGSIZE)
 * instead of being split into two messages.
 */
#define FUSE_ATOMIC_WRITE_MAX (256u * 4096u - 4096u)

/* what every spool of a mount shares */
struct spool_env {
	struct pool *pool;
	struct loop *loop;
	struct devices *devices;
	struct fuse_session *se; /* for attribute invalidation; set once mounted */
	unsigned nworkers;
};

/* an open file: the spool file opened for writing, or a status snapshot */
struct handle {
	struct spool *sp;
	int flags;		/* open(2) flags */
	bool sync;		/* mode = sync, or O_SYNC / O_DSYNC */
	bool written;		/* a write was attempted through it */
	struct owners writers;	/* the processes that wrote through it (FLUSH, close = wait) */
	bool empty_intent;	/* opened O_TRUNC or truncated to 0 through it */
	bool op_failed;		/* an operation through it failed (ftruncate, ...) */
	unsigned in_flight;	/* its messages not finished yet */
	unsigned refs;		/* 1 for the open file + 1 per message not finished */
	int error;		/* an async failure not reported yet (EIO) */
	struct reply *fsyncs;	/* fsyncs waiting for in_flight == 0 */
	struct frame *frame;	/* framing = file: the message being assembled (frame.h) */
	struct handle *open_prev, *open_next; /* the spool's open files (openfiles.h) */
	char *text;		/* status files: the snapshot being read */
	size_t text_len;
};

struct spool {
	const struct rpmafs_peer_cfg *cfg;
	const struct spool_env *env;
	fuse_ino_t ino;

	pthread_mutex_t lock;
	struct link *link;	/* NULL for a null peer */
	bool up;		/* the link is up and takes posts (always, for a null peer) */
	bool ever_up;
	unsigned window;	/* sends allowed in flight */
	struct msgq pending;
	struct msgq in_flight;
	unsigned unsignaled;	/* unsignaled sends since the last signaled one */
	bool fence_in_flight;
	uint64_t next_seq;
	bool error_since_up;	/* a failure was recorded since the link came up */
	uint64_t fence_at_ms;	/* when to fence unsignaled sends (0: none) */
	/*
	 * Writes fail at once with ENOTCONN until the next connection: a write
	 * already waited send_timeout_ms in vain, or the peer went silent for
	 * that long. The kernel hands FUSE one write of a file at a time, so
	 * without this each writer queued behind would wait its own
	 * send_timeout_ms, one after the other.
	 */
	bool gave_up;

	struct confirm cf;	/* receiver confirmation (confirm.h) */
	struct handle *open_files; /* not released yet (openfiles.h) */
	unsigned fsync_waiting;	/* fsyncs (and waiting closes) not answered yet */

	struct spool_stats st;	/* the counters, kept current */
	/* the status text as last rendered (a hash) and when it last changed */
	uint64_t status_hash;
	struct timespec status_changed;
	/* set when the kernel may cache attributes that a completion changes */
	atomic_bool attr_cached;
};

/* spool_init -- set up sp for peer cfg, file inode ino; 0 or -ENOMEM */
int spool_init(struct spool *sp, const struct spool_env *env, fuse_ino_t ino,
	const struct rpmafs_peer_cfg *cfg);
void spool_fini(struct spool *sp);

/*
 * spool_submit -- queue msg behind everything written before it and post
 * what the connection and the window allow, as one chain (the calling
 * worker posts, after its reply). Takes msg. An async write's reply is sent once it is queued on an up
 * link (else when it is posted), a sync one's at completion.
 */
void spool_submit(struct spool *sp, struct msg *msg);

/*
 * spool_write_check -- before a write through fh of size bytes: 0, or the
 * errno to fail it with (an earlier async failure, EMSGSIZE, EAGAIN)
 */
int spool_write_check(struct spool *sp, struct handle *fh, size_t size, bool nonblock);

/* spool_refuse -- count a write that failed before it became a message */
void spool_refuse(struct spool *sp);

/* spool_count_copy -- count a payload copied in user space */
void spool_count_copy(struct spool *sp);

/*
 * loop thread: run what is due at now (pending deadlines, the in-flight
 * timeout, fences, the link's timers); returns when to be called next (0:
 * nothing due).
 */
uint64_t spool_tick(struct spool *sp, uint64_t now);

/* fsync: answer at once or when the handle's messages are finished */
int spool_fsync(struct spool *sp, struct handle *fh, fuse_req_t req);

/* spool_note_writer -- owner (a write's FUSE lock owner) wrote through fh */
void spool_note_writer(struct spool *sp, struct handle *fh, uint64_t owner);

/* spool_wrote -- whether owner (a FLUSH's lock owner) wrote through fh (fs/owners.h) */
bool spool_wrote(struct spool *sp, struct handle *fh, uint64_t owner);

/*
 * spool_flush -- a close(2) of fh by owner (the FLUSH's lock owner). close =
 * wait and owner wrote through fh: as spool_fsync. Otherwise answered at
 * once: close = return with the pending error (once); a process that never
 * wrote through fh (a child closing what it inherited) with 0, leaving the
 * error for the writers.
 */
int spool_flush(struct spool *sp, struct handle *fh, fuse_req_t req, uint64_t owner);

/*
 * spool_take_error -- the handle's pending async failure, returned once (0
 * if none); *written (unless NULL): whether a write went through fh (if
 * not, its release is a 0-byte message)
 */
int spool_take_error(struct spool *sp, struct handle *fh, bool *written);

/* the file is closed for good: drop the open file's reference */
void spool_release(struct spool *sp, struct handle *fh);

/* unmount, before the loop stops: make no more connection attempts */
void spool_stop(struct spool *sp);

/* unmount, after the loop stopped: fail what is queued, close the link */
void spool_close(struct spool *sp);

/* messages queued or in flight */
unsigned spool_busy(struct spool *sp);

/* spool_stats_get -- a consistent copy of the counters */
void spool_stats_get(struct spool *sp, struct spool_stats *st);

#endif /* RPMAFS_SPOOL_H */
