/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handle.h -- an open file of a spool: the spool file opened for writing,
 * or a snapshot of its status file
 *
 * A handle lives while the kernel holds its file open or a message sent
 * through it is unfinished: handle_new() gives it the open file's
 * reference, each message submitted through it takes one more, and
 * handle_delete() (the RELEASE) drops the open file's; the last reference
 * frees it. The spool lists its open handles and frees at
 * unmount those whose RELEASE never came.
 *
 * Outside fs/spool/ only the fields under "set at open" may be read; the
 * rest is the spool's, under its lock, through the functions in spool.h.
 */
#ifndef RPMAFS_HANDLE_H
#define RPMAFS_HANDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "owners.h"

struct frame;
struct frame_budget;
struct pool;
struct reply;
struct spool;

struct handle {
	/* set at open, never changed: anyone may read them */
	struct spool *sp;
	int flags;	     /* open(2) flags */
	bool sync;	     /* mode = sync, or O_SYNC / O_DSYNC */
	struct frame *frame; /* framing = file: the message being assembled (frame.h) */
	char *text;	     /* status files: the snapshot being read (NULL: the spool file) */
	size_t text_len;

	/* the spool's, under its lock */
	bool written;	       /* a write was attempted through it */
	struct owners writers; /* the processes that wrote through it (FLUSH, close = wait) */
	bool empty_intent;     /* opened O_TRUNC or truncated to 0 through it */
	bool op_failed;	       /* an operation through it failed (ftruncate, ...) */
	unsigned in_flight;    /* its messages not finished yet */
	unsigned refs;	       /* 1 for the open file + 1 per message not finished */
	int error;	       /* an async failure not reported yet (EIO) */
	struct reply *fsyncs;  /* fsyncs waiting for in_flight == 0 */
	struct handle *open_prev, *open_next; /* the spool's open files */
};

/*
 * handle_new -- open sp's spool file with open(2) flags: sync from the
 * config's mode or O_SYNC/O_DSYNC, a 0-byte intent from O_TRUNC, with
 * framing = file a frame (its slots from pool, within budget); listed
 * among sp's open files. 0 or -ENOMEM.
 */
int handle_new(struct spool *sp, int flags, struct pool *pool, struct frame_budget *budget,
	struct handle **fh_ptr);

/*
 * handle_new_status -- open sp's status file on text (len bytes, malloc'd;
 * taken, also on failure). 0 or -ENOMEM.
 */
int handle_new_status(struct spool *sp, char *text, size_t len, struct handle **fh_ptr);

/*
 * handle_delete -- the open file is over (its RELEASE, or an interrupted
 * open): off the spool's list, its frame dropped (bytes no close sent are
 * not sent), the open file's reference dropped; NULLs the pointer. The
 * handle itself is freed once no message holds it.
 */
void handle_delete(struct handle **fh_ptr);

/*
 * handle_mark -- an operation through fh (a spool file; a status handle is
 * ignored): empty_intent, it truncated the file to 0; failed, it failed
 * (the 0-byte message is then not sent, docs/design.md §4.1)
 */
void handle_mark(struct handle *fh, bool empty_intent, bool failed);

/*
 * handle_sends_empty -- at release: whether fh's close is the 0-byte
 * message (an intent to send nothing, nothing written, nothing failed)
 */
bool handle_sends_empty(struct handle *fh);

#endif /* RPMAFS_HANDLE_H */
