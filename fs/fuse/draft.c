// SPDX-License-Identifier: BSD-3-Clause
/* draft.c -- drafts for write-then-rename, kept in memory (see draft.h) */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "draft.h"

struct draft {
	char name[NAME_MAX + 1];
	struct draft_attr attr;
	char *data;
	size_t cap;
	bool used;
};

struct drafts {
	pthread_mutex_t lock;
	unsigned max, count;
	size_t budget, bytes; /* bytes: what the drafts' buffers hold */
	uint64_t first_ino, next_ino;
	struct draft *d; /* max entries, in creation order among the used */
};

int drafts_new(unsigned max, size_t budget, uint64_t first_ino, struct drafts **d_ptr)
{
	struct drafts *d = calloc(1, sizeof(*d));

	if (!d || !(d->d = calloc(max ? max : 1, sizeof(*d->d)))) {
		free(d);
		return -ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->max = max;
	d->budget = budget;
	d->first_ino = d->next_ino = first_ino;
	*d_ptr = d;
	return 0;
}

void drafts_delete(struct drafts **d_ptr)
{
	struct drafts *d = *d_ptr;

	if (!d)
		return;
	for (unsigned i = 0; i < d->max; i++)
		free(d->d[i].data);
	free(d->d);
	pthread_mutex_destroy(&d->lock);
	free(d);
	*d_ptr = NULL;
}

bool drafts_is_ino(const struct drafts *d, uint64_t ino)
{
	return d && ino >= d->first_ino;
}

static struct draft *by_name(struct drafts *d, const char *name)
{
	for (unsigned i = 0; i < d->max; i++)
		if (d->d[i].used && strcmp(d->d[i].name, name) == 0)
			return &d->d[i];
	return NULL;
}

static struct draft *by_ino(struct drafts *d, uint64_t ino)
{
	for (unsigned i = 0; i < d->max; i++)
		if (d->d[i].used && d->d[i].attr.ino == ino)
			return &d->d[i];
	return NULL;
}

static void drop(struct drafts *d, struct draft *dr)
{
	d->bytes -= dr->attr.size;
	d->count--;
	free(dr->data);
	memset(dr, 0, sizeof(*dr));
}

int drafts_create(struct drafts *d, const char *name, uid_t uid, gid_t gid, mode_t mode,
	struct draft_attr *attr, const char **which)
{
	struct draft *dr = NULL;
	int ret = 0;

	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&d->lock);
	if (by_name(d, name)) {
		ret = -EEXIST;
	} else if (d->count >= d->max) {
		*which = "drafts";
		ret = -ENOSPC;
	} else {
		for (unsigned i = 0; i < d->max && !dr; i++)
			if (!d->d[i].used)
				dr = &d->d[i];
		dr->used = true;
		strcpy(dr->name, name);
		dr->attr = (struct draft_attr){
			.ino = d->next_ino++, .uid = uid, .gid = gid, .mode = mode & 07777};
		clock_gettime(CLOCK_REALTIME, &dr->attr.mtime);
		dr->attr.ctime = dr->attr.mtime;
		d->count++;
		*attr = dr->attr;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int drafts_lookup(struct drafts *d, const char *name, struct draft_attr *attr)
{
	struct draft *dr;

	pthread_mutex_lock(&d->lock);
	dr = by_name(d, name);
	if (dr)
		*attr = dr->attr;
	pthread_mutex_unlock(&d->lock);
	return dr ? 0 : -ENOENT;
}

int drafts_getattr(struct drafts *d, uint64_t ino, struct draft_attr *attr)
{
	struct draft *dr;

	pthread_mutex_lock(&d->lock);
	dr = by_ino(d, ino);
	if (dr)
		*attr = dr->attr;
	pthread_mutex_unlock(&d->lock);
	return dr ? 0 : -ENOENT;
}

/* make dr size bytes long (zeros added), within the limits */
static int resize_locked(struct drafts *d, struct draft *dr, uint64_t size, const char **which)
{
	if (size > DRAFT_MAX_BYTES)
		return -EFBIG;
	if (size > dr->attr.size && d->bytes + (size - dr->attr.size) > d->budget) {
		*which = "draft_bytes";
		return -ENOSPC;
	}
	if (size > dr->cap) {
		size_t cap = dr->cap ? dr->cap : 4096;
		char *p;

		while (cap < size)
			cap *= 2;
		if (cap > DRAFT_MAX_BYTES)
			cap = DRAFT_MAX_BYTES;
		p = realloc(dr->data, cap);
		if (!p)
			return -ENOMEM;
		dr->data = p;
		dr->cap = cap;
	}
	if (size > dr->attr.size)
		memset(dr->data + dr->attr.size, 0, size - dr->attr.size);
	d->bytes = d->bytes - dr->attr.size + size;
	dr->attr.size = size;
	return 0;
}

int drafts_write(struct drafts *d, uint64_t ino, uint64_t off, const void *buf, size_t size,
	const char **which)
{
	struct draft *dr;
	int ret = -ENOENT;

	pthread_mutex_lock(&d->lock);
	dr = by_ino(d, ino);
	if (dr) {
		ret = 0;
		if (off + size > dr->attr.size)
			ret = resize_locked(d, dr, off + size, which);
		if (!ret) {
			memcpy(dr->data + off, buf, size);
			clock_gettime(CLOCK_REALTIME, &dr->attr.mtime);
			dr->attr.ctime = dr->attr.mtime;
		}
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

ssize_t drafts_read(struct drafts *d, uint64_t ino, uint64_t off, void *buf, size_t size)
{
	struct draft *dr;
	ssize_t n = -ENOENT;

	pthread_mutex_lock(&d->lock);
	dr = by_ino(d, ino);
	if (dr) {
		n = 0;
		if (off < dr->attr.size) {
			n = (ssize_t)(dr->attr.size - off < size ? dr->attr.size - off : size);
			memcpy(buf, dr->data + off, (size_t)n);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return n;
}

int drafts_setattr(struct drafts *d, uint64_t ino, bool mode_set, mode_t mode, bool size_set,
	uint64_t size, const struct timespec *mtime, const char **which)
{
	struct draft *dr;
	int ret = -ENOENT;

	pthread_mutex_lock(&d->lock);
	dr = by_ino(d, ino);
	if (dr) {
		ret = size_set ? resize_locked(d, dr, size, which) : 0;
		if (!ret && mode_set)
			dr->attr.mode = mode & 07777;
		if (!ret && mtime)
			dr->attr.mtime = *mtime;
		if (!ret)
			clock_gettime(CLOCK_REALTIME, &dr->attr.ctime);
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int drafts_unlink(struct drafts *d, const char *name)
{
	struct draft *dr;

	pthread_mutex_lock(&d->lock);
	dr = by_name(d, name);
	if (dr)
		drop(d, dr);
	pthread_mutex_unlock(&d->lock);
	return dr ? 0 : -ENOENT;
}

int drafts_rename(struct drafts *d, const char *from, const char *to)
{
	struct draft *src, *dst;
	int ret = 0;

	if (strlen(to) > NAME_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&d->lock);
	src = by_name(d, from);
	dst = by_name(d, to);
	if (!src) {
		ret = -ENOENT;
	} else if (src != dst) {
		if (dst)
			drop(d, dst);
		strcpy(src->name, to);
		clock_gettime(CLOCK_REALTIME, &src->attr.ctime);
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

ssize_t drafts_copy_out(struct drafts *d, const char *name, void *dst, size_t cap)
{
	struct draft *dr;
	ssize_t n = -ENOENT;

	pthread_mutex_lock(&d->lock);
	dr = by_name(d, name);
	if (dr && dr->attr.size > cap) {
		n = -EMSGSIZE;
	} else if (dr) {
		if (dr->attr.size)
			memcpy(dst, dr->data, dr->attr.size);
		n = (ssize_t)dr->attr.size;
	}
	pthread_mutex_unlock(&d->lock);
	return n;
}

int drafts_entry(struct drafts *d, unsigned i, char *name, uint64_t *ino)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&d->lock);
	for (unsigned k = 0; k < d->max; k++) {
		if (!d->d[k].used || i-- > 0)
			continue;
		strcpy(name, d->d[k].name);
		*ino = d->d[k].attr.ino;
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

void drafts_usage(struct drafts *d, unsigned *count, size_t *bytes, unsigned *max, size_t *budget)
{
	pthread_mutex_lock(&d->lock);
	*count = d->count;
	*bytes = d->bytes;
	*max = d->max;
	*budget = d->budget;
	pthread_mutex_unlock(&d->lock);
}
