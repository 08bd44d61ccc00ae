// SPDX-License-Identifier: BSD-3-Clause
/* promtext.c -- the Prometheus text format, and its file replaced whole (see promtext.h) */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "promtext.h"

struct promtext {
	char *buf;
	size_t len, cap;
	int err;	  /* 0, or the first failure's -errno: the text is not to be written */
	char family[128]; /* the family started last ("" none) */
};

int promtext_new(struct promtext **pt_ptr)
{
	struct promtext *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return -ENOMEM;
	*pt_ptr = pt;
	return 0;
}

void promtext_delete(struct promtext **pt_ptr)
{
	if (!pt_ptr || !*pt_ptr)
		return;
	free((*pt_ptr)->buf);
	free(*pt_ptr);
	*pt_ptr = NULL;
}

void promtext_reset(struct promtext *pt)
{
	pt->len = 0;
	if (pt->buf)
		pt->buf[0] = '\0';
	pt->err = 0;
	pt->family[0] = '\0';
}

static int fail(struct promtext *pt, int err)
{
	if (!pt->err)
		pt->err = err;
	return err;
}

static int put(struct promtext *pt, const char *s, size_t n)
{
	if (pt->err)
		return pt->err;
	if (pt->len + n + 1 > pt->cap) {
		size_t cap = pt->cap ? pt->cap : 4096;
		char *bigger;

		while (pt->len + n + 1 > cap)
			cap *= 2;
		bigger = realloc(pt->buf, cap);
		if (!bigger)
			return fail(pt, -ENOMEM);
		pt->buf = bigger;
		pt->cap = cap;
	}
	memcpy(pt->buf + pt->len, s, n);
	pt->len += n;
	pt->buf[pt->len] = '\0';
	return 0;
}

static int puts_(struct promtext *pt, const char *s)
{
	return put(pt, s, strlen(s));
}

/*
 * s escaped: a backslash and a line break always, a double quote in a
 * label value (HELP text keeps its quotes, as the format says)
 */
static int put_escaped(struct promtext *pt, const char *s, bool quote)
{
	for (; *s; s++) {
		const char *e = NULL;

		if (*s == '\\')
			e = "\\\\";
		else if (*s == '\n')
			e = "\\n";
		else if (*s == '"' && quote)
			e = "\\\"";
		if (e ? puts_(pt, e) : put(pt, s, 1))
			return pt->err;
	}
	return 0;
}

static bool valid_name(const char *s, bool colon)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (colon && c == ':') || (p != s && c >= '0' && c <= '9');

		if (!ok)
			return false;
	}
	return true;
}

int promtext_family(
	struct promtext *pt, const char *name, enum promtext_type type, const char *help)
{
	size_t n = strlen(name);

	if (!valid_name(name, true) || n >= sizeof(pt->family) ||
		(type == PROMTEXT_COUNTER && (n < 6 || strcmp(name + n - 6, "_total") != 0)))
		return fail(pt, -EINVAL);
	memcpy(pt->family, name, n + 1);
	if (puts_(pt, "# HELP ") || puts_(pt, name) || puts_(pt, " ") ||
		put_escaped(pt, help ? help : "", false) || puts_(pt, "\n# TYPE ") ||
		puts_(pt, name) || puts_(pt, type == PROMTEXT_COUNTER ? " counter\n" : " gauge\n"))
		return pt->err;
	return 0;
}

int promtext_sample(struct promtext *pt, const char *label, const char *value, uint64_t n)
{
	char num[32];

	if (!pt->family[0] || (label && !valid_name(label, false)))
		return fail(pt, -EINVAL);
	if (puts_(pt, pt->family))
		return pt->err;
	if (label && (puts_(pt, "{") || puts_(pt, label) || puts_(pt, "=\"") ||
			     put_escaped(pt, value ? value : "", true) || puts_(pt, "\"}")))
		return pt->err;
	snprintf(num, sizeof(num), " %llu\n", (unsigned long long)n);
	return puts_(pt, num);
}

const char *promtext_text(const struct promtext *pt, size_t *len)
{
	if (pt->err) {
		errno = -pt->err;
		return NULL;
	}
	*len = pt->len;
	return pt->buf ? pt->buf : "";
}

/* the steps of a write, each a kind of error with the errno */
enum step { STEP_BUILD, STEP_OPEN, STEP_WRITE, STEP_CLOSE, STEP_RENAME, STEP_COUNT };

static const char *const step_names[STEP_COUNT] = {
	[STEP_BUILD] = "cannot build the metrics",
	[STEP_OPEN] = "cannot create",
	[STEP_WRITE] = "cannot write",
	[STEP_CLOSE] = "cannot write (close)",
	[STEP_RENAME] = "cannot rename onto the metrics file",
};

/* kinds of error reported since the last success; more are not remembered (nor logged) */
#define SEEN_MAX 16

struct promtext_file {
	char *path, *tmp;
	uint64_t interval_ms, next_ms;
	unsigned nseen;
	struct {
		enum step step;
		int err;
	} seen[SEEN_MAX];
	bool failing; /* the last write failed */
};

int promtext_file_new(
	const char *path, uint64_t interval_ms, uint64_t now_ms, struct promtext_file **pf_ptr)
{
	struct promtext_file *pf;
	size_t n;

	if (!path || !*path || !interval_ms || !pf_ptr)
		return -EINVAL;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	n = strlen(path);
	pf->path = strdup(path);
	pf->tmp = malloc(n + sizeof(".tmp"));
	if (!pf->path || !pf->tmp) {
		promtext_file_delete(&pf);
		return -ENOMEM;
	}
	memcpy(pf->tmp, path, n);
	memcpy(pf->tmp + n, ".tmp", sizeof(".tmp"));
	pf->interval_ms = interval_ms;
	pf->next_ms = now_ms;
	*pf_ptr = pf;
	return 0;
}

void promtext_file_delete(struct promtext_file **pf_ptr)
{
	if (!pf_ptr || !*pf_ptr)
		return;
	free((*pf_ptr)->path);
	free((*pf_ptr)->tmp);
	free(*pf_ptr);
	*pf_ptr = NULL;
}

bool promtext_file_due(struct promtext_file *pf, uint64_t now_ms)
{
	if (now_ms < pf->next_ms)
		return false;
	pf->next_ms = now_ms + pf->interval_ms;
	return true;
}

uint64_t promtext_file_next(const struct promtext_file *pf)
{
	return pf->next_ms;
}

const char *promtext_file_path(const struct promtext_file *pf)
{
	return pf->path;
}

/* a failure of step with err: said in why the first time since the last success */
static int failed(struct promtext_file *pf, enum step step, int err, char *why, size_t size)
{
	char ebuf[128];

	pf->failing = true;
	for (unsigned i = 0; i < pf->nseen; i++)
		if (pf->seen[i].step == step && pf->seen[i].err == err)
			return -err;
	if (pf->nseen == SEEN_MAX)
		return -err;
	pf->seen[pf->nseen].step = step;
	pf->seen[pf->nseen].err = err;
	pf->nseen++;
	snprintf(why, size, "%s %s: %s (said once; the metrics keep being tried)", step_names[step],
		step == STEP_BUILD || step == STEP_RENAME ? pf->path : pf->tmp,
		strerror_r(err, ebuf, sizeof(ebuf)));
	return -err;
}

int promtext_file_write(struct promtext_file *pf, const struct promtext *pt, char *why, size_t size)
{
	const char *text;
	size_t len, off = 0;
	int fd;

	why[0] = '\0';
	text = promtext_text(pt, &len);
	if (!text)
		return failed(pf, STEP_BUILD, errno, why, size);
	fd = open(pf->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0)
		return failed(pf, STEP_OPEN, errno, why, size);
	while (off < len) {
		ssize_t r = write(fd, text + off, len - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int err = r < 0 ? errno : ENOSPC;

			close(fd);
			unlink(pf->tmp);
			return failed(pf, STEP_WRITE, err, why, size);
		}
		off += (size_t)r;
	}
	if (close(fd)) {
		int err = errno;

		unlink(pf->tmp);
		return failed(pf, STEP_CLOSE, err, why, size);
	}
	if (rename(pf->tmp, pf->path)) {
		int err = errno;

		unlink(pf->tmp);
		return failed(pf, STEP_RENAME, err, why, size);
	}
	if (pf->failing)
		snprintf(why, size, "%s written again", pf->path);
	pf->failing = false;
	pf->nseen = 0;
	return 0;
}
