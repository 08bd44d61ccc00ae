// SPDX-License-Identifier: BSD-3-Clause
/* inbox_queue.c -- received messages in arrival order, each to exactly one reader */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inbox_queue.h"

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_READING };

struct slot {
	enum slot_state state;
	const void *msg;
	uint32_t len;
};

struct inbox_queue {
	pthread_mutex_t lock;
	enum rpmafs_record_format format;
	inbox_release_fn release;
	void *arg;
	uint32_t nslots;
	struct slot *slots;
	/* the queued slots, oldest first: a ring of nslots (each slot once at most) */
	uint32_t *ring;
	uint32_t head, count;
	/* parked readers, oldest first */
	struct inbox_waiter *wait_head, **wait_tail;
	struct inbox_counts counts;
};

int inbox_queue_new(uint32_t nslots, enum rpmafs_record_format format, inbox_release_fn release,
	void *arg, struct inbox_queue **q_ptr)
{
	struct inbox_queue *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->slots = calloc(nslots ? nslots : 1, sizeof(*q->slots));
	q->ring = calloc(nslots ? nslots : 1, sizeof(*q->ring));
	if (!q->slots || !q->ring) {
		free(q->slots);
		free(q->ring);
		free(q);
		return -ENOMEM;
	}
	pthread_mutex_init(&q->lock, NULL);
	q->format = format;
	q->release = release;
	q->arg = arg;
	q->nslots = nslots;
	q->wait_tail = &q->wait_head;
	*q_ptr = q;
	return 0;
}

static struct inbox_waiter *pop_waiter(struct inbox_queue *q)
{
	struct inbox_waiter *w = q->wait_head;

	if (!w)
		return NULL;
	q->wait_head = w->next;
	if (!q->wait_head)
		q->wait_tail = &q->wait_head;
	w->next = NULL;
	w->reader->waiting = NULL;
	q->counts.readers--;
	return w;
}

/* make slot rd's message, from its first byte */
static void assign(struct inbox_queue *q, struct inbox_reader *rd, uint32_t slot)
{
	struct slot *s = &q->slots[slot];

	s->state = SLOT_READING;
	rd->active = true;
	rd->slot = slot;
	rpmafs_record_start(&rd->rec, q->format, s->msg, s->len);
}

/* give slot to the oldest waiter, or queue it (at the front for one given back) */
static struct inbox_waiter *hand_out(struct inbox_queue *q, uint32_t slot, bool front)
{
	struct inbox_waiter *w = pop_waiter(q);

	if (w) {
		assign(q, w->reader, slot);
		return w;
	}
	q->slots[slot].state = SLOT_QUEUED;
	if (front) {
		q->head = (q->head + q->nslots - 1) % q->nslots;
		q->ring[q->head] = slot;
	} else {
		q->ring[(q->head + q->count) % q->nslots] = slot;
	}
	q->count++;
	return NULL;
}

void inbox_queue_delete(struct inbox_queue **q_ptr)
{
	struct inbox_queue *q = *q_ptr;
	struct inbox_waiter *w;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	while ((w = pop_waiter(q)) != NULL) {
		pthread_mutex_unlock(&q->lock);
		w->ready(w, true);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	for (uint32_t i = 0; i < q->nslots; i++)
		if (q->slots[i].state != SLOT_FREE && q->release)
			q->release(q->arg, i, true);
	pthread_mutex_destroy(&q->lock);
	free(q->slots);
	free(q->ring);
	free(q);
	*q_ptr = NULL;
}

int inbox_queue_push(struct inbox_queue *q, uint32_t slot, const void *msg, uint32_t len)
{
	struct inbox_waiter *w;

	pthread_mutex_lock(&q->lock);
	if (slot >= q->nslots || q->slots[slot].state != SLOT_FREE) {
		pthread_mutex_unlock(&q->lock);
		return -EINVAL;
	}
	q->slots[slot].msg = msg;
	q->slots[slot].len = len;
	q->counts.received++;
	q->counts.waiting++;
	q->counts.bytes += len;
	w = hand_out(q, slot, false);
	pthread_mutex_unlock(&q->lock);
	if (w)
		w->ready(w, false);
	return 0;
}

/* rd's message was read whole: its slot is free again; returns it */
static uint32_t finish(struct inbox_queue *q, struct inbox_reader *rd)
{
	q->slots[rd->slot].state = SLOT_FREE;
	q->counts.read++;
	q->counts.waiting--;
	rd->active = false;
	return rd->slot;
}

/* raw: cap shortened to end after the record's next '\n' (a lines record is one line) */
static size_t line_cap(const struct inbox_queue *q, const struct rpmafs_record *r, size_t cap)
{
	size_t left = rpmafs_record_left(r);
	const uint8_t *from = r->msg + r->pos, *nl;

	if (q->format != RPMAFS_RECORD_RAW || left == 0)
		return cap;
	nl = memchr(from, '\n', cap < left ? cap : left);
	return nl ? (size_t)(nl - from) + 1 : cap;
}

ssize_t inbox_queue_read(struct inbox_queue *q, struct inbox_reader *rd, void *buf, size_t cap,
	struct inbox_waiter *w)
{
	ssize_t ret = -EAGAIN;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		uint32_t slot;
		size_t n;

		if (!rd->active) {
			if (q->count == 0) {
				if (w && !rd->waiting) {
					w->reader = rd;
					w->next = NULL;
					*q->wait_tail = w;
					q->wait_tail = &w->next;
					rd->waiting = w;
					q->counts.readers++;
				}
				break;
			}
			assign(q, rd, q->ring[q->head]);
			q->head = (q->head + 1) % q->nslots;
			q->count--;
		}
		n = rpmafs_record_take(&rd->rec, buf, line_cap(q, &rd->rec, cap));
		if (rpmafs_record_left(&rd->rec) > 0 || cap == 0) {
			ret = (ssize_t)n;
			break;
		}
		slot = finish(q, rd);
		pthread_mutex_unlock(&q->lock);
		/* "the message's last byte was read": re-posted, acknowledged (inbox_ack.h) */
		q->release(q->arg, slot, false);
		if (n > 0)
			return (ssize_t)n;
		/* a 0-byte raw record has no byte to read: on to the next message */
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

bool inbox_queue_cancel(struct inbox_queue *q, struct inbox_waiter *w)
{
	bool found = false;

	pthread_mutex_lock(&q->lock);
	for (struct inbox_waiter **p = &q->wait_head; *p; p = &(*p)->next) {
		if (*p != w)
			continue;
		*p = w->next;
		if (q->wait_tail == &w->next)
			q->wait_tail = p;
		w->reader->waiting = NULL;
		w->next = NULL;
		q->counts.readers--;
		found = true;
		break;
	}
	pthread_mutex_unlock(&q->lock);
	return found;
}

bool inbox_queue_withdraw(struct inbox_queue *q, uint32_t slot)
{
	bool found = false;

	pthread_mutex_lock(&q->lock);
	if (slot < q->nslots && q->slots[slot].state == SLOT_QUEUED) {
		for (uint32_t i = 0; i < q->count; i++) {
			if (q->ring[(q->head + i) % q->nslots] != slot)
				continue;
			/* close the gap: the ones after it move up, in order */
			for (uint32_t j = i; j + 1 < q->count; j++)
				q->ring[(q->head + j) % q->nslots] =
					q->ring[(q->head + j + 1) % q->nslots];
			q->count--;
			q->slots[slot].state = SLOT_FREE;
			q->counts.waiting--;
			q->counts.withdrawn++;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return found;
}

bool inbox_queue_readable(struct inbox_queue *q, const struct inbox_reader *rd)
{
	bool r;

	pthread_mutex_lock(&q->lock);
	r = (rd && rd->active) || q->count > 0;
	pthread_mutex_unlock(&q->lock);
	return r;
}

void inbox_queue_close_reader(struct inbox_queue *q, struct inbox_reader *rd)
{
	struct inbox_waiter *w = NULL;

	if (rd->waiting)
		(void)inbox_queue_cancel(q, rd->waiting);
	pthread_mutex_lock(&q->lock);
	if (rd->active) {
		rd->active = false;
		w = hand_out(q, rd->slot, true);
	}
	pthread_mutex_unlock(&q->lock);
	if (w)
		w->ready(w, false);
}

void inbox_queue_counts(struct inbox_queue *q, struct inbox_counts *c)
{
	pthread_mutex_lock(&q->lock);
	*c = q->counts;
	pthread_mutex_unlock(&q->lock);
}

size_t inbox_window_find(const struct inbox_window *win, off_t off, size_t cap, const char **at)
{
	size_t from, n;

	if (!win->buf || off < win->off || (uint64_t)(off - win->off) >= win->len)
		return 0;
	from = (size_t)(off - win->off);
	n = win->len - from;
	*at = win->buf + from;
	return n < cap ? n : cap;
}

void inbox_window_set(struct inbox_window *win, char *buf, size_t n, off_t off)
{
	free(win->buf);
	win->buf = n ? buf : NULL;
	win->len = n;
	win->off = off;
	if (!n)
		free(buf);
}

void inbox_window_clear(struct inbox_window *win)
{
	inbox_window_set(win, NULL, 0, 0);
}
