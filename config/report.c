// SPDX-License-Identifier: BSD-3-Clause
/* report.c -- collecting the problems found in a config file */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define QUOTE_CHARS 80

void cfg_report_init(struct cfg_report *rep, const char *file)
{
	memset(rep, 0, sizeof(*rep));
	rep->file = file ? file : "(null)";
}

void cfg_report_fini(struct cfg_report *rep)
{
	for (size_t i = 0; i < rep->nitems; i++)
		free(rep->items[i].text);
	free(rep->items);
	rep->items = NULL;
	rep->nitems = rep->cap = 0;
}

/* "rpmafs: FILE:LINE: [SECTION] KEY: MSG" with the parts that are there. */
static char *format_line(const struct cfg_report *rep, unsigned line, const char *section,
	const char *key, const char *msg)
{
	char at[16] = "", esc_sec[CFG_QUOTE_MAX] = "", esc_key[CFG_QUOTE_MAX] = "";
	const char *open = "", *close = "", *key_sep = "";
	char *text;

	if (line)
		snprintf(at, sizeof(at), ":%u", line);
	if (section) {
		cfg_escape(esc_sec, section, strlen(section));
		open = "[";
		close = key ? "] " : "]: ";
	}
	if (key) {
		cfg_escape(esc_key, key, strlen(key));
		key_sep = ": ";
	}
	if (asprintf(&text, "rpmafs: %s%s: %s%s%s%s%s%s", rep->file, at, open, esc_sec, close,
		    esc_key, key_sep, msg) < 0)
		return NULL;
	return text;
}

void cfg_vproblem(struct cfg_report *rep, unsigned line, const char *section, const char *key,
	const char *fmt, va_list ap)
{
	struct cfg_report_item *item;
	char *msg, *text;

	rep->count++;
	if (rep->oom || rep->nitems == CFG_REPORT_KEEP)
		return;
	if (rep->nitems == rep->cap) {
		size_t cap = rep->cap ? rep->cap * 2 : 16;
		struct cfg_report_item *items = realloc(rep->items, cap * sizeof(*items));

		if (!items) {
			rep->oom = true;
			return;
		}
		rep->items = items;
		rep->cap = cap;
	}
	if (vasprintf(&msg, fmt, ap) < 0) {
		rep->oom = true;
		return;
	}
	text = format_line(rep, line, section, key, msg);
	free(msg);
	if (!text) {
		rep->oom = true;
		return;
	}
	item = &rep->items[rep->nitems];
	item->line = line;
	item->seq = (unsigned)rep->nitems++;
	item->text = text;
}

void cfg_problem(struct cfg_report *rep, unsigned line, const char *section, const char *key,
	const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_vproblem(rep, line, section, key, fmt, ap);
	va_end(ap);
}

/* Line order; the file as a whole (line 0) last; otherwise order of arrival. */
static int by_line(const void *a, const void *b)
{
	const struct cfg_report_item *x = a, *y = b;
	unsigned lx = x->line ? x->line : ~0u;
	unsigned ly = y->line ? y->line : ~0u;

	if (lx != ly)
		return lx < ly ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

char *cfg_report_take(struct cfg_report *rep)
{
	size_t shown = rep->nitems < CFG_REPORT_MAX ? rep->nitems : CFG_REPORT_MAX;
	size_t len = 0, off = 0;
	char *more = NULL, *text = NULL;

	if (rep->oom || rep->nitems == 0)
		goto out;
	qsort(rep->items, rep->nitems, sizeof(*rep->items), by_line);
	if (rep->count > shown && asprintf(&more, "\nrpmafs: %s: %u more problems not shown",
					  rep->file, rep->count - (unsigned)shown) < 0)
		goto out;
	for (size_t i = 0; i < shown; i++)
		len += strlen(rep->items[i].text) + 1;
	text = malloc(len + (more ? strlen(more) : 0) + 1);
	if (!text)
		goto out;
	for (size_t i = 0; i < shown; i++)
		off += (size_t)sprintf(text + off, "%s%s", i ? "\n" : "", rep->items[i].text);
	sprintf(text + off, "%s", more ? more : "");
out:
	free(more);
	cfg_report_fini(rep);
	return text;
}

static const char *escape(char *buf, const char *s, size_t len, bool quotes)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == QUOTE_CHARS) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (quotes && (c == '"' || c == '\\')) {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o] = '\0';
	return buf;
}

const char *cfg_escape(char *buf, const char *s, size_t len)
{
	return escape(buf, s, len, true);
}

const char *cfg_escape_line(char *buf, const char *s, size_t len)
{
	return escape(buf, s, len, false);
}

const char *cfg_quote(char *buf, const char *s)
{
	buf[0] = '"';
	cfg_escape(buf + 1, s, strlen(s));
	strcat(buf, "\"");
	return buf;
}
