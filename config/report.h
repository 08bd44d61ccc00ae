/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.h -- collecting the problems found in a config file
 *
 * Every problem becomes one line that names where it is:
 *
 *	rpmafs: FILE: PROBLEM			(the file as a whole)
 *	rpmafs: FILE:LINE: PROBLEM		(a line outside any section)
 *	rpmafs: FILE:LINE: KEY: PROBLEM		(a key outside any section)
 *	rpmafs: FILE:LINE: [SECTION]: PROBLEM	(a section header)
 *	rpmafs: FILE:LINE: [SECTION] KEY: PROBLEM
 *
 * LINE is left out when 0. The loader keeps going after a problem so that
 * one run shows them all. They are listed in line order, problems about the
 * file as a whole last; past CFG_REPORT_MAX lines the rest are counted.
 */
#ifndef RPMAFS_CONFIG_REPORT_H
#define RPMAFS_CONFIG_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define CFG_REPORT_MAX 50

/* Problems kept for sorting; past this they are only counted. */
#define CFG_REPORT_KEEP 1000

/* Room for a value quoted by cfg_quote(): 80 characters, escaped, plus quotes and "...". */
#define CFG_QUOTE_MAX (80 * 4 + 8)

struct cfg_report_item {
	unsigned line; /* 0: about the file as a whole */
	unsigned seq;  /* order of arrival, to keep the sort stable */
	char *text;    /* the whole line */
};

struct cfg_report {
	const char *file; /* as given by the caller, not copied */
	struct cfg_report_item *items;
	size_t nitems, cap;
	unsigned count; /* problems seen, including those not kept */
	bool oom;	/* an allocation failed: the report is incomplete */
};

void cfg_report_init(struct cfg_report *rep, const char *file);

/* Free what the report holds. */
void cfg_report_fini(struct cfg_report *rep);

/*
 * cfg_problem -- add one problem. section and key may be NULL; line may be
 * 0. section is printed escaped (it may be an invalid name); the formatted
 * text must be one line.
 */
void cfg_problem(struct cfg_report *rep, unsigned line, const char *section, const char *key,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));

void cfg_vproblem(struct cfg_report *rep, unsigned line, const char *section, const char *key,
	const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/*
 * cfg_report_take -- the problems as one text for the caller to free, in
 * line order, lines separated by '\n' (with a last line counting those left
 * out), or NULL when memory ran out. Empties the report.
 */
char *cfg_report_take(struct cfg_report *rep);

/*
 * cfg_quote -- s between double quotes, with control and non-ASCII bytes,
 * quotes and backslashes escaped, and cut to 80 characters with "..." when
 * longer. Writes into buf (CFG_QUOTE_MAX bytes) and returns it.
 */
const char *cfg_quote(char *buf, const char *s);

/* cfg_escape -- like cfg_quote() for len bytes at s, without the quotes */
const char *cfg_escape(char *buf, const char *s, size_t len);

/*
 * cfg_escape_line -- len bytes of a config line for the end of a message:
 * like cfg_escape() but quotes and backslashes are left as they are.
 */
const char *cfg_escape_line(char *buf, const char *s, size_t len);

#endif /* RPMAFS_CONFIG_REPORT_H */
