/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promtext.h -- metrics in the Prometheus text exposition format, for
 * node_exporter's textfile collector
 *
 * A daemon builds the whole text in memory (promtext_family() then its
 * samples, family by family) and hands it to a promtext_file, which writes
 * it to PATH.tmp in the same directory and rename()s that onto PATH: the
 * collector, reading PATH at any moment, sees a whole file, the last one
 * or the one before. The file also keeps the schedule (every interval_ms,
 * from the caller's event loop) and which kinds of write error were
 * already reported, so that a daemon logs a failing write once, not every
 * interval.
 */
#ifndef RPMAFS_PROMTEXT_H
#define RPMAFS_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum promtext_type {
	PROMTEXT_COUNTER, /* only goes up; its name ends in _total */
	PROMTEXT_GAUGE,	  /* a figure of now */
};

struct promtext;

/* promtext_new -- an empty text; 0, or -ENOMEM */
int promtext_new(struct promtext **pt_ptr);

/* promtext_delete -- free *pt_ptr (may be NULL) and set it to NULL */
void promtext_delete(struct promtext **pt_ptr);

/* promtext_reset -- empty the text (and forget an earlier error), for the next round */
void promtext_reset(struct promtext *pt);

/*
 * promtext_family -- start the family called name: its "# HELP" line (help,
 * with backslashes and line breaks escaped) and its "# TYPE" line. A
 * counter's name must end in _total; a name must match
 * [a-zA-Z_:][a-zA-Z0-9_:]*. Returns 0, or -EINVAL (the text is then
 * marked bad: promtext_text() fails) or -ENOMEM.
 */
int promtext_family(
	struct promtext *pt, const char *name, enum promtext_type type, const char *help);

/*
 * promtext_sample -- one sample of the family started last: name{label="value"} n,
 * or name n when label is NULL. The label's value is escaped (backslash,
 * double quote, line break); the label's name must match
 * [a-zA-Z_][a-zA-Z0-9_]*. Returns 0, or -EINVAL (no family yet, a bad
 * label name) or -ENOMEM; either marks the text bad.
 */
int promtext_sample(struct promtext *pt, const char *label, const char *value, uint64_t n);

/*
 * promtext_text -- the text so far and its length in *len; NULL (and errno
 * set) when building it failed
 */
const char *promtext_text(const struct promtext *pt, size_t *len);

struct promtext_file;

/*
 * promtext_file_new -- the file at path (PATH.tmp beside it while
 * writing), written every interval_ms (> 0): the first write is due at
 * now_ms. Returns 0, -EINVAL or -ENOMEM.
 */
int promtext_file_new(
	const char *path, uint64_t interval_ms, uint64_t now_ms, struct promtext_file **pf_ptr);

/* promtext_file_delete -- free *pf_ptr (may be NULL) and set it to NULL; the file stays */
void promtext_file_delete(struct promtext_file **pf_ptr);

/*
 * promtext_file_due -- whether a write is due at now_ms; when it is, the
 * next one is scheduled an interval after now_ms
 */
bool promtext_file_due(struct promtext_file *pf, uint64_t now_ms);

/* promtext_file_next -- when the next write is due (monotonic ms) */
uint64_t promtext_file_next(const struct promtext_file *pf);

/* promtext_file_path -- the path written */
const char *promtext_file_path(const struct promtext_file *pf);

/*
 * promtext_file_write -- write pt to PATH.tmp and rename it onto PATH; on
 * failure PATH.tmp is removed and PATH keeps its last content. Returns 0
 * or a negative errno. why (size > 0) is set to a line to log, "" when
 * there is nothing to say: the failure (which step, which path, the error)
 * the first time this kind of error happens since the last success, and
 * "... written again" on the first success after failures.
 */
int promtext_file_write(
	struct promtext_file *pf, const struct promtext *pt, char *why, size_t size);

#endif /* RPMAFS_PROMTEXT_H */
