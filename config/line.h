/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * line.h -- what one line of rpmafs.ini is: nothing, a section header, a
 * key, or a line rpmafs refuses
 *
 * Only the form of the line is read here, never a value: values are
 * iniparser's (ini.h). A line is refused when iniparser would reject it, or
 * would read it in a way nobody means: a backslash at the end of a line
 * (iniparser joins the next line, even to a comment), an unterminated quote
 * or text after a closing quote (iniparser drops it silently), a section
 * header with anything around it.
 *
 * What is accepted, after leading and trailing blanks are dropped:
 *	(empty)
 *	# comment	; comment
 *	[name]			blanks inside the brackets are dropped
 *	key = value		value up to a ';' or '#'
 *	key = "value"		may hold ';' and '#'; '...' works too
 *	key = "value" ; comment
 */
#ifndef RPMAFS_CONFIG_LINE_H
#define RPMAFS_CONFIG_LINE_H

#include <stddef.h>

/* Longest line accepted, newline excluded; iniparser's own limit is 1022. */
#define CFG_LINE_MAX 1000

/* Longest key name accepted (the longest real one is 18 characters). */
#define CFG_KEY_NAME_MAX 64

enum cfg_line_kind {
	CFG_LINE_NOTHING,    /* blank, or a comment */
	CFG_LINE_SECTION,    /* [name] */
	CFG_LINE_KEY,	     /* key = value */
	CFG_LINE_REFUSED,    /* not a line rpmafs accepts */
	CFG_LINE_BAD_HEADER, /* refused, and it was meant as a section header */
};

struct cfg_line {
	enum cfg_line_kind kind;
	/* the line without the blanks around it, for messages */
	const char *text;
	size_t text_len;
	/* SECTION: the name, blanks inside the brackets dropped; KEY: the key as written */
	const char *name;
	size_t name_len;
	/* REFUSED, BAD_HEADER: what is wrong, a static text */
	const char *why;
};

/*
 * cfg_line_read -- what the len bytes at s are (a line without its
 * newline, at most CFG_LINE_MAX bytes, no NUL among them). line points into
 * s afterwards.
 */
void cfg_line_read(const char *s, size_t len, struct cfg_line *line);

#endif /* RPMAFS_CONFIG_LINE_H */
