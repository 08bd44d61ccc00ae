/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spool_impl.h -- struct spool, private to fs/spool/, and the steps its
 * files share under the spool's lock
 *
 * The spool is cut along its concerns: spool.c (its life, what others
 * read of it), send.c (a message queued, posted and finished: the data
 * path), events.c (what the link reports), timers.c (its deadlines),
 * handle.c (an open file, the spool's list of them, and the checks of
 * what goes through one), framed.c (a file-framed handle's operations).
 * What they call of each other is declared here, not in headers of their
 * own (handle.h is the handle's public side, for fs/fuse/): they are one
 * state cut into files, not modules layered on each other.
 *
 * Everything in struct spool is protected by sp->lock unless said
 * otherwise. Each *_locked step is called with it held; replies it owes
 * are collected in rs and sent by the caller after the unlock
 * (docs/design.md §10).
 */
#ifndef RPMAFS_SPOOL_IMPL_H
#define RPMAFS_SPOOL_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>

#include "confirm.h"
#include "counters.h"
#include "msg.h"
#include "spool.h"

struct handle;

struct spool {
	/* set at spool_new, never changed */
	const struct rpmafs_peer_cfg *cfg;
	const struct spool_env *env;
	fuse_ino_t ino;
	struct link *link; /* NULL for a null peer */

	pthread_mutex_t lock;
	/*
	 * Posts go: the link's on_up has set the window and the confirmation
	 * up, and no loss was seen since (always, for a null peer). Not the
	 * link's state: the link is UP a moment before on_up has run, and the
	 * spool stops posting a moment before the link hears of a loss.
	 */
	bool up;
	unsigned window; /* sends allowed in flight */
	struct msgq pending;
	struct msgq in_flight;
	unsigned unsignaled; /* unsignaled sends since the last signaled one */
	bool fence_in_flight;
	uint64_t next_seq;
	/* the last_error to keep: a failure was recorded since the connection came up */
	bool error_since_up;
	uint64_t fence_at_ms; /* when to fence unsignaled sends (0: none) */
	uint64_t fence_armed_ms; /* when fence_at_ms was first set for them */
	uint64_t last_post_ms;	 /* coarse: the last post of a message (a fence waits for quiet) */
	uint64_t ack_look_ms; /* when the tick reaps acknowledgements nobody waits for (0: none) */
	/*
	 * Writes fail at once with ENOTCONN until the next connection: a write
	 * already waited send_timeout_ms in vain, or the peer went silent for
	 * that long. The kernel hands FUSE one write of a file at a time, so
	 * without this each writer queued behind would wait its own
	 * send_timeout_ms, one after the other. The spool's judgement of the
	 * peer, not a state of the link (which keeps trying).
	 */
	bool gave_up;

	struct confirm cf;	   /* receiver confirmation (confirm.h) */
	struct handle *open_files; /* not released yet (handle.c) */
	unsigned fsync_waiting;	   /* fsyncs (and waiting closes) not answered yet */
	uint64_t sync_mean_ns;	   /* a sync message's time from its post to its end, running mean (await.c) */

	struct spool_stats st; /* the counters, kept current (ever_up is stored here only) */
	/* the status text as last rendered (a hash) and when it last changed */
	uint64_t status_hash;
	struct timespec status_changed;
	/* set when the kernel may cache attributes that a completion changes (no lock) */
	atomic_bool attr_cached;
};

/* the link's callbacks (events.c) */
extern const struct link_ops spool_link_ops;

/* ---- spool.c ---- */

/* spool_set_error_locked -- text is the status' last_error now */
void spool_set_error_locked(struct spool *sp, const char *text);

/* spool_attrs_changed -- invalidate the kernel's cached attributes if it has any; no lock */
void spool_attrs_changed(struct spool *sp);

/* ---- send.c: the data path ---- */

/* spool_pending_pop -- take the oldest queued message (NULL: none) */
struct msg *spool_pending_pop(struct spool *sp);

/* how a message ended (spool_finish_locked) */
enum msg_end {
	END_CONFIRMED, /* posted, completed with IBV_WC_SUCCESS */
	END_FAILED,    /* posted, completed with an error (or could not be posted) */
	END_REFUSED,   /* never posted: the write fails with an errno */
};

/*
 * spool_finish_locked -- the one place a message ends: count msg as it
 * ended, free its buffer, drop its handle and collect the reply it still
 * owes. code: the completion status (END_CONFIRMED, END_FAILED) or the
 * errno (END_REFUSED); why: for the status' last_error (END_REFUSED, or
 * END_FAILED without a completion).
 */
void spool_finish_locked(struct spool *sp, struct msg *msg, enum msg_end end, int code,
	const char *why, struct replies *rs);

/*
 * spool_refuse_locked -- end msg unsent with err (a message sent before
 * that waits to go again is counted posted and failed: EIO)
 */
void spool_refuse_locked(
	struct spool *sp, struct msg *msg, int err, const char *why, struct replies *rs);

/* spool_refuse_unsent_locked -- end msg for want of a connection; the link picks the errno */
void spool_refuse_unsent_locked(
	struct spool *sp, struct msg *msg, bool waited, const char *what, struct replies *rs);

/*
 * Acknowledgements nobody waits for are not worth a wake-up each while the
 * spool posts: the next post's settle reaps them; once it has posted
 * nothing for SPOOL_ACK_LOOK_MS the tick reaps them and the CQ is armed
 * for the rest (events.c's awaits, timers.c; docs/design.md §8.4)
 */
#define SPOOL_ACK_LOOK_MS 10

/* spool_pool_short -- a class of the pool's slots is at its reserve: someone may wait for one */
bool spool_pool_short(const struct spool *sp);

/* spool_post_ready_locked -- post what is pending, as the window and credits allow */
void spool_post_ready_locked(struct spool *sp, struct replies *rs);

/*
 * spool_fence_due_locked -- at the tick: fence unsignaled sends if the
 * spool has been quiet FENCE_DELAY_MS, or FENCE_MAX_MS passed since the
 * first of them; else move the fence to when it will be. The fence's
 * deadline (0: none).
 */
uint64_t spool_fence_due_locked(struct spool *sp, uint64_t now, struct replies *rs);

/* spool_fence_locked -- confirm unsignaled sends now: a 0-byte RDMA WRITE, signaled */
void spool_fence_locked(struct spool *sp, struct replies *rs);

/* ---- events.c: the connection as the spool sees it ---- */

/* spool_lost_locked -- posts stop; what waits for the link waits send_timeout_ms at most */
void spool_lost_locked(struct spool *sp, const char *reason);

/* spool_drop_locked -- the spool saw the link fail: tell the link, which drains it */
void spool_drop_locked(struct spool *sp, const char *reason);

/* spool_flush_in_flight_locked -- the connection is gone: fail what it did not report */
void spool_flush_in_flight_locked(struct spool *sp, struct replies *rs);

/* ---- handle.c ---- */

/* handle_put_locked -- drop a reference to fh; the last frees it */
void handle_put_locked(struct handle *fh);

/* handle_finished_locked -- one of fh's messages ended: answer its fsyncs once none is left */
void handle_finished_locked(struct handle *fh, struct replies *rs);

/*
 * handles_free_unreleased -- unmount, after spool_close finished every
 * message: free the handles whose RELEASE never came (their unsent frames
 * are dropped). After a lazy unmount (`fusermount3 -u -z`) the kernel may
 * close the FUSE connection before the RELEASE of a file still open
 * reaches the daemon, so nothing else would drop the open file's reference.
 */
void handles_free_unreleased(struct spool *sp);

#endif /* RPMAFS_SPOOL_IMPL_H */
