// SPDX-License-Identifier: BSD-3-Clause
/* scan.c -- the line structure of an INI file, with line numbers */

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

/* isspace() in the C locale, as iniparser uses it, without the locale. */
static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

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

static void trim(const char **s, size_t *len)
{
	while (*len && is_blank(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_blank((*s)[*len - 1]))
		(*len)--;
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

static const char *cur_name(const struct scanner *sc)
{
	return sc->cur >= 0 ? sc->scan->sections[sc->cur].name : NULL;
}

/*
 * Refuse a line: a syntax error, or something iniparser would read in a
 * way nobody means. The line comes last in the message, as written.
 */
static void refuse(struct scanner *sc, const char *why, const char *line, size_t len)
{
	char shown[CFG_QUOTE_MAX];

	sc->scan->ini_safe = false;
	cfg_problem(sc->rep, sc->line, cur_name(sc), NULL, "%s: %s", why,
		cfg_escape_line(shown, line, len));
}

static int on_section(struct scanner *sc, const char *s, size_t len)
{
	struct cfg_scan *scan = sc->scan;
	struct cfg_section *sec;
	char shown[CFG_LINE_MAX + 1];
	const char *name = s + 1;
	size_t nlen = len - 2;
	const char *why;

	if (memchr(name, ']', nlen)) {
		sc->cur = BAD_SECTION;
		refuse(sc, "syntax error: a section header is [name] alone on its line", s, len);
		return 0;
	}
	trim(&name, &nlen);
	memcpy(shown, name, nlen);
	shown[nlen] = '\0';
	why = cfg_peer_name_problem(name, nlen);
	if (why) {
		sc->cur = BAD_SECTION;
		scan->ini_safe = false;
		cfg_problem(sc->rep, sc->line, shown, NULL, "invalid peer name: %s", why);
		return 0;
	}

	for (size_t i = 0; i < scan->nsections; i++) {
		sec = &scan->sections[i];
		if (strcasecmp(sec->name, shown) != 0)
			continue;
		/* iniparser merges the two; follow it, so the values checked are its values */
		sc->cur = (long)i;
		if (strcmp(sec->name, shown) == 0)
			cfg_problem(sc->rep, sc->line, shown, NULL,
				"duplicate section: already defined at line %u; each section may appear only once",
				sec->line);
		else
			cfg_problem(sc->rep, sc->line, shown, NULL,
				"duplicate section: [%s] at line %u is the same section, because section names are not case-sensitive",
				sec->name, sec->line);
		return 0;
	}

	if (scan->nsections == scan->cap) {
		size_t cap = scan->cap ? scan->cap * 2 : 8;
		struct cfg_section *n = realloc(scan->sections, cap * sizeof(*n));

		if (!n)
			return -1;
		scan->sections = n;
		scan->cap = cap;
	}
	sec = &scan->sections[scan->nsections];
	memset(sec, 0, sizeof(*sec));
	sec->line = sc->line;
	sec->name = copy(name, nlen, false);
	sec->lname = copy(name, nlen, true);
	sc->cur = (long)scan->nsections++;
	if (!sec->name || !sec->lname)
		return -1;
	return 0;
}

/* The value of "key = value" as iniparser 4.1 reads it; r is what follows '='. */
static int read_value(struct scanner *sc, const char *line, size_t line_len, const char *r,
	size_t rlen, const char **value, size_t *vlen)
{
	trim(&r, &rlen);
	if (rlen && (r[0] == '"' || r[0] == '\'')) {
		const char *close = memchr(r + 1, r[0], rlen - 1);
		const char *rest;
		size_t restlen;

		if (!close) {
			refuse(sc, "unterminated quote (close it, or leave the quotes out)", line,
				line_len);
			return -1;
		}
		rest = close + 1;
		restlen = rlen - (size_t)(rest - r);
		trim(&rest, &restlen);
		if (restlen && rest[0] != ';' && rest[0] != '#') {
			refuse(sc, "text after the closing quote (start a comment with ';' or '#')",
				line, line_len);
			return -1;
		}
		*value = r + 1;
		*vlen = (size_t)(close - r) - 1;
		return 0;
	}
	/* unquoted: up to a comment, blanks around it dropped */
	for (*vlen = 0; *vlen < rlen && r[*vlen] != ';' && r[*vlen] != '#'; (*vlen)++)
		;
	*value = r;
	trim(value, vlen);
	return 0;
}

static struct cfg_entry *find_entry(struct cfg_section *sec, const char *key)
{
	for (size_t i = 0; i < sec->nentries; i++)
		if (strcmp(sec->entries[i].key, key) == 0)
			return &sec->entries[i];
	return NULL;
}

static int on_key(struct scanner *sc, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	const char *line = s, *eol = s + len;
	const char *value;
	size_t klen, vlen;
	struct cfg_section *sec;
	struct cfg_entry *e;
	char *key, *val;

	if (!eq) {
		refuse(sc,
			"syntax error: not a key = value line, a [section] header or a comment (# or ;)",
			line, len);
		return 0;
	}
	klen = (size_t)(eq - s);
	trim(&s, &klen);
	if (klen == 0) {
		refuse(sc, "syntax error: no key before '='", line, len);
		return 0;
	}
	if (klen > CFG_KEY_NAME_MAX) {
		refuse(sc, "key name is longer than 64 characters", line, len);
		return 0;
	}
	if (read_value(sc, line, len, eq + 1, (size_t)(eol - (eq + 1)), &value, &vlen))
		return 0;
	if (sc->cur == BAD_SECTION)
		return 0;

	key = copy(s, klen, true);
	if (!key)
		return -1;
	if (sc->cur == NO_SECTION) {
		cfg_problem(sc->rep, sc->line, NULL, key,
			"set outside any section; put it under [rpmafs] or under a peer's [name]");
		free(key);
		return 0;
	}

	val = copy(value, vlen, false);
	if (!val) {
		free(key);
		return -1;
	}
	sec = &sc->scan->sections[sc->cur];
	e = find_entry(sec, key);
	if (e) {
		bool cased = false;

		for (size_t i = 0; i < klen; i++)
			cased |= is_upper(s[i]);
		cfg_problem(sc->rep, sc->line, sec->name, key,
			"duplicate key: already set at line %u%s; each key may appear only once in a section",
			e->line, cased ? " (key names are not case-sensitive)" : "");
		/* iniparser keeps the last value; so does the scan */
		free(e->value);
		free(key);
		e->value = val;
		e->line = sc->line;
		return 0;
	}
	if (sec->nentries == sec->cap) {
		size_t cap = sec->cap ? sec->cap * 2 : 8;
		struct cfg_entry *n = realloc(sec->entries, cap * sizeof(*n));

		if (!n) {
			free(key);
			free(val);
			return -1;
		}
		sec->entries = n;
		sec->cap = cap;
	}
	sec->entries[sec->nentries++] = (struct cfg_entry){key, val, sc->line};
	return 0;
}

static int on_line(struct scanner *sc, const char *s, size_t len)
{
	if (len > CFG_LINE_MAX) {
		sc->scan->ini_safe = false;
		cfg_problem(sc->rep, sc->line, cur_name(sc), NULL,
			"line is %zu characters long; the limit is %d", len, CFG_LINE_MAX);
		return 0;
	}
	trim(&s, &len);
	if (len == 0)
		return 0;
	if (s[len - 1] == '\\') {
		refuse(sc,
			"line ends with a backslash, which iniparser reads as \"continued on the next line\"; rpmafs does not accept continued lines",
			s, len);
		return 0;
	}
	if (s[0] == '#' || s[0] == ';')
		return 0;
	if (s[0] == '[') {
		if (len >= 2 && s[len - 1] == ']')
			return on_section(sc, s, len);
		sc->cur = BAD_SECTION;
		refuse(sc, "syntax error: a section header is [name] alone on its line", s, len);
		return 0;
	}
	return on_key(sc, s, len);
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

		for (size_t j = 0; j < sec->nentries; j++) {
			free(sec->entries[j].key);
			free(sec->entries[j].value);
		}
		free(sec->entries);
		free(sec->name);
		free(sec->lname);
	}
	free(scan->sections);
	memset(scan, 0, sizeof(*scan));
}
