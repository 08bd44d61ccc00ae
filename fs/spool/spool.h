/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spool.h -- one peer of the config: its spool file and its messages
 *
 * A message goes through two queues of its spool, in order:
 *   pending   written, waiting for the connection or for room in the send
 *             window (the FUSE reply of an async write waits here too);
 *   in flight posted, waiting for its completion (RC completes a QP's
 *             sends in order, so this is a FIFO).
 * Then one function finishes it (spool_finish_locked in send.c): it is
 * counted confirmed, failed or refused, its buffer goes back to the pool,
 * and the reply it still owes is collected and sent once the spool's lock
 * is released. The connection itself is the spool's link (link.h).
 * struct spool is opaque: its state and its lock are fs/spool/'s
 * (spool_impl.h); messages are made with msg.h's constructors, open files
 * with handle.h's.
 */
#ifndef RPMAFS_SPOOL_H
#define RPMAFS_SPOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "counters.h"
#include "msg.h"

struct handle;
struct link;
struct spool;
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

/* spool_new -- the spool of peer cfg, its file inode ino; 0 or -ENOMEM */
int spool_new(const struct spool_env *env, fuse_ino_t ino, const struct rpmafs_peer_cfg *cfg,
	struct spool **sp_ptr);

/*
 * spool_delete -- unmount, after spool_close: free the open files whose
 * RELEASE never came (handle.h), the link and the spool; NULLs the pointer
 */
void spool_delete(struct spool **sp_ptr);

/* spool_cfg -- the peer's config */
const struct rpmafs_peer_cfg *spool_cfg(const struct spool *sp);

/* spool_max_message -- the message limit in force: the config's, or the receiver's if smaller */
uint32_t spool_max_message(struct spool *sp);

/*
 * spool_attr_cached -- the kernel is about to cache the spool file's
 * attributes: the next completion invalidates them. Called before the
 * figures are read, so that one landing in between invalidates them too.
 */
void spool_attr_cached(struct spool *sp);

/*
 * spool_status_rendered -- the status text was rendered, hash h (not 0);
 * returns when the text last changed (now, if h differs from the last one)
 */
struct timespec spool_status_rendered(struct spool *sp, uint64_t h);

/*
 * spool_submit -- queue msg behind everything written before it and post
 * what the connection and the window allow, as one chain (the calling
 * worker posts, after its reply). Takes msg (made by a msg_new_*
 * constructor, msg.h). An async write's reply is sent once it is queued on
 * an up link (else when it is posted), a sync one's at completion.
 */
void spool_submit(struct spool *sp, struct msg *msg);

/*
 * spool_submit_empty -- fh's release sends the 0-byte message (docs/design.md
 * §4.1): submitted, or, when it cannot be allocated, logged and counted
 * refused (§8.2: every message that entered is posted or refused)
 */
void spool_submit_empty(struct spool *sp, struct handle *fh);

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
 * spool_count_small_copy -- count a small payload copied into a small slot
 * (pool_copy_small): in payload_copies, and in small_copies
 */
void spool_count_small_copy(struct spool *sp);

/* spool_small_slots -- the mount's small slots (pool.h), for the status */
unsigned spool_small_slots(const struct spool *sp);

/* spool_small_slots_free -- how many of them are free now */
unsigned spool_small_slots_free(const struct spool *sp);

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

/* unmount, before the loop stops: make no more connection attempts */
void spool_stop(struct spool *sp);

/* unmount, after the loop stopped: fail what is queued, close the link */
void spool_close(struct spool *sp);

/* messages queued or in flight */
unsigned spool_busy(struct spool *sp);

/*
 * spool_session_new -- a random non-zero session id (getrandom(2)), made
 * once per spool at spool_new when it offers receiver confirmation; 0 when
 * no randomness can be had (docs/design.md §8.6)
 */
uint64_t spool_session_new(void);

/* spool_stats_get -- a consistent copy of the counters (session: the link's offer now) */
void spool_stats_get(struct spool *sp, struct spool_stats *st);

#endif /* RPMAFS_SPOOL_H */
