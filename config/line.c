// SPDX-License-Identifier: BSD-3-Clause
/* line.c -- what one line of rpmafs.ini is */

#include <stdbool.h>
#include <string.h>

#include "line.h"

#define HEADER_ALONE "syntax error: a section header is [name] alone on its line"

/* isspace() in the C locale, as iniparser uses it, without the locale. */
static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
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

/*
 * What is wrong with the rlen bytes at r, all that follows a key's '=',
 * or NULL. Unquoted, anything goes (iniparser stops at ';' or '#');
 * quoted, the quote must close, and only a comment may follow.
 */
static const char *value_problem(const char *r, size_t rlen)
{
	const char *close, *rest;
	size_t restlen;

	trim(&r, &rlen);
	if (rlen == 0 || (r[0] != '"' && r[0] != '\''))
		return NULL;
	close = memchr(r + 1, r[0], rlen - 1);
	if (!close)
		return "unterminated quote (close it, or leave the quotes out)";
	rest = close + 1;
	restlen = rlen - (size_t)(rest - r);
	trim(&rest, &restlen);
	if (restlen && rest[0] != ';' && rest[0] != '#')
		return "text after the closing quote (start a comment with ';' or '#')";
	return NULL;
}

static void read_header(const char *s, size_t len, struct cfg_line *line)
{
	const char *name = s + 1;
	size_t nlen;

	if (len < 2 || s[len - 1] != ']' || memchr(name, ']', len - 2)) {
		line->kind = CFG_LINE_BAD_HEADER;
		line->why = HEADER_ALONE;
		return;
	}
	nlen = len - 2;
	trim(&name, &nlen);
	line->kind = CFG_LINE_SECTION;
	line->name = name;
	line->name_len = nlen;
}

static void read_key(const char *s, size_t len, struct cfg_line *line)
{
	const char *eq = memchr(s, '=', len);
	const char *key = s;
	size_t klen;

	line->kind = CFG_LINE_REFUSED;
	if (!eq) {
		line->why =
			"syntax error: not a key = value line, a [section] header or a comment (# or ;)";
		return;
	}
	klen = (size_t)(eq - s);
	trim(&key, &klen);
	if (klen == 0) {
		line->why = "syntax error: no key before '='";
		return;
	}
	if (klen > CFG_KEY_NAME_MAX) {
		line->why = "key name is longer than 64 characters";
		return;
	}
	line->why = value_problem(eq + 1, (size_t)(s + len - (eq + 1)));
	if (line->why)
		return;
	line->kind = CFG_LINE_KEY;
	line->name = key;
	line->name_len = klen;
}

void cfg_line_read(const char *s, size_t len, struct cfg_line *line)
{
	memset(line, 0, sizeof(*line));
	trim(&s, &len);
	line->text = s;
	line->text_len = len;
	if (len == 0) {
		line->kind = CFG_LINE_NOTHING;
	} else if (s[len - 1] == '\\') {
		line->kind = CFG_LINE_REFUSED;
		line->why =
			"line ends with a backslash, which iniparser reads as \"continued on the next line\"; rpmafs does not accept continued lines";
	} else if (s[0] == '#' || s[0] == ';') {
		line->kind = CFG_LINE_NOTHING;
	} else if (s[0] == '[') {
		read_header(s, len, line);
	} else {
		read_key(s, len, line);
	}
}
