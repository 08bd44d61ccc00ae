// SPDX-License-Identifier: BSD-3-Clause
/* scan.c -- where each section and key of an INI file is, and what is there twice */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "scan.h"

/* The scanner's idea of the current section when it is not an index. */
#define NO_SECTION (-1L)  /* before the first header: keys here are an error */
#define BAD_SECTION (-2L) /* after a refused header: its keys are not looked at */

struct scanner {
	struct cfg_scan *scan;
	struct cfg_report *rep;
	long cur; /* index into scan->sections, or NO_SECTION / BAD_SECTION */
	unsigned line;
};

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || is_upper(c) || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-';
}

/* A NUL-terminated copy of len bytes at s, lower-cased when lower is set. */
static char *copy(const char *s, size_t len, bool lower)
{
	char *d = malloc(len + 1);

	if (!d)
		return NULL;
	for (size_t i = 0; i < len; i++)
		d[i] = lower && is_upper(s[i]) ? (char)(s[i] - 'A' + 'a') : s[i];
	d[len] = '\0';
	return d;
}

const char *cfg_peer_name_problem(const char *name, size_t len)
{
	if (len == 0)
		return "the name is empty";
	if (len > RPMAFS_PEER_NAME_MAX)
		return "the name is longer than 64 characters";
	for (size_t i = 0; i < len; i++)
		if (!is_name_char(name[i]))
			return "a name may only hold letters, digits, '_' and '-' (it becomes the spool file's name)";
	return NULL;
}

const struct cfg_section *cfg_scan_section(const struct cfg_scan *scan, const char *lname)
{
	for (size_t i = 0; i < scan->nsections; i++)
		if (strcmp(scan->sections[i].lname, lname) == 0)
			return &scan->sections[i];
	return NULL;
}

static struct cfg_key_line *find_key(const struct cfg_section *sec, const char *key)
{
	for (size_t i = 0; i < sec->nkeys; i++)
		if (strcmp(sec->keys[i].key, key) == 0)
			return &sec->keys[i];
	return NULL;
}

unsigned cfg_scan_key_line(const struct cfg_section *sec, const char *key)
{
	const struct cfg_key_line *k = find_key(sec, key);

	return k ? k->line : 0;
}

static const char *cur_name(const struct scanner *sc)
{
	return sc->cur >= 0 ? sc->scan->sections[sc->cur].name : NULL;
}

/* A refused line: the reason, then the line as written. */
static void refuse(struct scanner *sc, const struct cfg_line *l)
{
	char shown[CFG_QUOTE_MAX];

	sc->scan->ini_safe = false;
	cfg_problem(sc->rep, sc->line, cur_name(sc), NULL, "%s: %s", l->why,
		cfg_escape_line(shown, l->text, l->text_len));
}

static int on_section(struct scanner *sc, const struct cfg_line *l)
{
	struct cfg_scan *scan = sc->scan;
	char *name = copy(l->name, l->name_len, false);
	struct cfg_section *sec;
	const char *why;

	if (!name)
		return -1;
	why = cfg_peer_name_problem(l->name, l->name_len);
	if (why) {
		sc->cur = BAD_SECTION;
		scan->ini_safe = false;
		cfg_problem(sc->rep, sc->line, name, NULL, "invalid peer name: %s", why);
		free(name);
		return 0;
	}

	for (size_t i = 0; i < scan->nsections; i++) {
		sec = &scan->sections[i];
		if (strcasecmp(sec->name, name) != 0)
			continue;
		/* iniparser merges the two: so do the locations */
		sc->cur = (long)i;
		if (strcmp(sec->name, name) == 0)
			cfg_problem(sc->rep, sc->line, name, NULL,
				"duplicate section: already defined at line %u; each section may appear only once",
				sec->line);
		else
			cfg_problem(sc->rep, sc->line, name, NULL,
				"duplicate section: [%s] at line %u is the same section, because section names are not case-sensitive",
				sec->name, sec->line);
		free(name);
		return 0;
	}

	if (scan->nsections == scan->cap) {
		size_t cap = scan->cap ? scan->cap * 2 : 8;
		struct cfg_section *n = realloc(scan->sections, cap * sizeof(*n));

		if (!n) {
			free(name);
			return -1;
		}
		scan->sections = n;
		scan->cap = cap;
	}
	sec = &scan->sections[scan->nsections];
	memset(sec, 0, sizeof(*sec));
	sec->line = sc->line;
	sec->name = name;
	sec->lname = copy(l->name, l->name_len, true);
	sc->cur = (long)scan->nsections++;
	return sec->lname ? 0 : -1;
}

static int on_key(struct scanner *sc, const struct cfg_line *l)
{
	struct cfg_section *sec;
	struct cfg_key_line *k;
	char *key;

	if (sc->cur == BAD_SECTION)
		return 0;
	key = copy(l->name, l->name_len, true);
	if (!key)
		return -1;
	if (sc->cur == NO_SECTION) {
		cfg_problem(sc->rep, sc->line, NULL, key,
			"set outside any section; put it under [rpmafs] or under a peer's [name]");
		free(key);
		return 0;
	}

	sec = &sc->scan->sections[sc->cur];
	k = find_key(sec, key);
	if (k) {
		bool cased = false;

		for (size_t i = 0; i < l->name_len; i++)
			cased |= is_upper(l->name[i]);
		cfg_problem(sc->rep, sc->line, sec->name, key,
			"duplicate key: already set at line %u%s; each key may appear only once in a section%s",
			k->line, cased ? " (key names are not case-sensitive)" : "",
			strcmp(key, "allow") == 0
				? " (list several networks in one line: allow = 10.0.0.0/8, fd00::/8)"
				: "");
		/* iniparser keeps the last value: its line is the one to name */
		k->line = sc->line;
		free(key);
		return 0;
	}
	if (sec->nkeys == sec->cap) {
		size_t cap = sec->cap ? sec->cap * 2 : 8;
		struct cfg_key_line *n = realloc(sec->keys, cap * sizeof(*n));

		if (!n) {
			free(key);
			return -1;
		}
		sec->keys = n;
		sec->cap = cap;
	}
	sec->keys[sec->nkeys++] = (struct cfg_key_line){key, sc->line};
	return 0;
}

static int on_line(struct scanner *sc, const char *s, size_t len)
{
	struct cfg_line l;

	if (len > CFG_LINE_MAX) {
		sc->scan->ini_safe = false;
		cfg_problem(sc->rep, sc->line, cur_name(sc), NULL,
			"line is %zu characters long; the limit is %d", len, CFG_LINE_MAX);
		return 0;
	}
	cfg_line_read(s, len, &l);
	switch (l.kind) {
	case CFG_LINE_NOTHING:
		return 0;
	case CFG_LINE_SECTION:
		return on_section(sc, &l);
	case CFG_LINE_KEY:
		return on_key(sc, &l);
	case CFG_LINE_BAD_HEADER:
		/* the section it was meant to open: none that keys could go to */
		sc->cur = BAD_SECTION;
		refuse(sc, &l);
		return 0;
	case CFG_LINE_REFUSED:
		refuse(sc, &l);
		return 0;
	}
	return 0;
}

int cfg_scan(const char *buf, size_t len, struct cfg_scan *scan, struct cfg_report *rep)
{
	struct scanner sc = {scan, rep, NO_SECTION, 0};
	const char *nul = memchr(buf, '\0', len);
	const char *p = buf, *end = buf + len;

	memset(scan, 0, sizeof(*scan));
	scan->ini_safe = true;

	if (nul) {
		/* iniparser would cut the line there; it is not a text file anyway */
		unsigned line = 1;

		for (const char *q = buf; q < nul; q++)
			line += *q == '\n';
		scan->ini_safe = false;
		cfg_problem(rep, line, NULL, NULL, "contains a NUL byte; this is not a text file");
		return 0;
	}

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		sc.line++;
		if (on_line(&sc, p, (size_t)(eol - p)))
			return -1;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

void cfg_scan_fini(struct cfg_scan *scan)
{
	for (size_t i = 0; i < scan->nsections; i++) {
		struct cfg_section *sec = &scan->sections[i];

		for (size_t j = 0; j < sec->nkeys; j++)
			free(sec->keys[j].key);
		free(sec->keys);
		free(sec->name);
		free(sec->lname);
	}
	free(scan->sections);
	memset(scan, 0, sizeof(*scan));
}
