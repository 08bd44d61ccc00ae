/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inbox_queue.h -- the inbox's received messages, waiting to be read
 *
 * Knows nothing of RDMA or FUSE. The receive side pushes each message, in
 * arrival order, as the slot (receive buffer) it landed in; readers take
 * them. A reader that starts a message owns it until its last byte is read:
 * one read returns (the rest of) one record and never bytes of two, so
 * `head -n 1` takes exactly one message; and never more than one line of
 * it (raw: a read ends after a '\n'; a lines record is one line), so that
 * a reader that reads a line (bash's read, head -n, fgets) never takes
 * more than that line from the queue. Each message goes to exactly one
 * reader. Only when the last byte is read is the slot handed back
 * (inbox_release_fn): the receive side re-posts it there, and that is where
 * receiver-confirmed delivery acknowledges the message (inbox_ack.h). A
 * reader that closes in the middle of a record gives the message back, whole,
 * to the front of the queue: a message is never half delivered and never
 * lost (docs/design.md §13.3).
 *
 * A read with nothing waiting parks a waiter instead of blocking a thread;
 * a push hands the message to the oldest waiter and calls its ready
 * function (with no lock held), which reads again and replies.
 *
 * Thread safety: every function may be called from any thread; callbacks
 * are called with no lock held.
 */
#ifndef RPMAFS_INBOX_QUEUE_H
#define RPMAFS_INBOX_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record.h"

struct inbox_queue;

/* a slot's last byte was read (or the queue is deleted with it unread: unread true) */
typedef void (*inbox_release_fn)(void *arg, uint32_t slot, bool unread);

/* One open file handle: the message it is part way through, if any. */
struct inbox_reader {
	bool active;		      /* holds a message */
	uint32_t slot;		      /* the message's slot */
	struct rpmafs_record rec;     /* where its reading is */
	struct inbox_waiter *waiting; /* parked, or NULL */
};

/* A read that found nothing, parked until a message is handed to its reader. */
struct inbox_waiter {
	struct inbox_waiter *next;
	struct inbox_reader *reader;
	/* a message is now the reader's (or cancelled: the queue is closing) */
	void (*ready)(struct inbox_waiter *w, bool closing);
};

struct inbox_counts {
	uint64_t received;  /* messages pushed */
	uint64_t read;	    /* messages read to their last byte */
	uint64_t bytes;	    /* payload bytes received */
	uint64_t withdrawn; /* taken back unread (inbox_queue_withdraw) */
	uint32_t waiting;   /* messages received and not yet read whole (queued or part read) */
	uint32_t readers;   /* waiters parked */
};

/*
 * inbox_queue_new -- a queue for messages in slots 0 .. nslots - 1, encoded
 * as format; release is called for each slot read whole. 0 or -ENOMEM.
 */
int inbox_queue_new(uint32_t nslots, enum rpmafs_record_format format, inbox_release_fn release,
	void *arg, struct inbox_queue **q_ptr);

/*
 * inbox_queue_delete -- wake every waiter (closing), release every slot
 * still held as unread, free the queue, NULL the pointer
 */
void inbox_queue_delete(struct inbox_queue **q_ptr);

/*
 * inbox_queue_push -- the len bytes at msg (which stay in place until the
 * slot is released) landed in slot. Returns 0, or -EINVAL for a slot out of
 * range or already held (then nothing changed).
 */
int inbox_queue_push(struct inbox_queue *q, uint32_t slot, const void *msg, uint32_t len);

/*
 * inbox_queue_read -- up to cap bytes of rd's message (taking the oldest one
 * waiting when rd holds none) into buf. Returns the count (> 0), or
 * -EAGAIN: nothing waiting. With w not NULL and nothing waiting, w is parked
 * for rd and -EAGAIN returned; w->ready is called once rd holds a message.
 */
ssize_t inbox_queue_read(struct inbox_queue *q, struct inbox_reader *rd, void *buf, size_t cap,
	struct inbox_waiter *w);

/*
 * inbox_queue_cancel -- unpark w (an interrupted read). Returns true when it
 * was parked; false when it is being made ready, or already was.
 */
bool inbox_queue_cancel(struct inbox_queue *q, struct inbox_waiter *w);

/*
 * inbox_queue_withdraw -- take slot's message off the queue unread (its
 * sender will send it again: docs/design.md §13.4). True when it was
 * queued and no reader had started it; then it is no longer counted
 * waiting, and the slot is the caller's again (no release call).
 */
bool inbox_queue_withdraw(struct inbox_queue *q, uint32_t slot);

/* inbox_queue_readable -- rd holds a message, or one is waiting */
bool inbox_queue_readable(struct inbox_queue *q, const struct inbox_reader *rd);

/*
 * inbox_queue_close_reader -- the file handle closes: a message part read
 * goes back, whole, to the front of the queue (and to a parked waiter)
 */
void inbox_queue_close_reader(struct inbox_queue *q, struct inbox_reader *rd);

/* inbox_queue_counts -- a snapshot of the counters */
void inbox_queue_counts(struct inbox_queue *q, struct inbox_counts *c);

/*
 * One open file's give-back: the bytes its last read returned, at file
 * offsets [off, off + len). A reader that read past what it wanted and
 * lseeks back into them (bash's read and GNU head do, to just after the
 * newline, on a seekable file) is given them again by its next read at
 * that offset; a read at any other offset takes new bytes from the queue
 * (what the window held was consumed). The kernel keeps the offset (an
 * lseek does not reach the daemon): the daemon sees it with each read.
 * Not locked: the caller's.
 */
struct inbox_window {
	char *buf; /* malloc'd, the window's; NULL when empty */
	off_t off;
	size_t len;
};

/*
 * inbox_window_find -- the window's bytes from file offset off, at most cap:
 * their count (*at points to them), or 0 when off is not inside the window
 */
size_t inbox_window_find(const struct inbox_window *win, off_t off, size_t cap, const char **at);

/* inbox_window_set -- the n bytes at buf (malloc'd, now the window's) were read at off */
void inbox_window_set(struct inbox_window *win, char *buf, size_t n, off_t off);

/* inbox_window_clear -- empty the window, freeing its buffer */
void inbox_window_clear(struct inbox_window *win);

#endif /* RPMAFS_INBOX_QUEUE_H */
