/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scan.h -- the line structure of an INI file, with line numbers
 *
 * iniparser returns a dictionary: it folds the case of names, merges a
 * section or key that appears twice, and keeps no line numbers. The scan
 * reads the same bytes line by line first, so that the loader can name the
 * line of every problem, see duplicates, and keep peer names as written.
 *
 * The scan accepts a strict subset of what iniparser accepts and, for every
 * line it accepts, reads the same section, key and value as iniparser 4.1
 * does (ini.c checks that, for every load). Lines that iniparser would read
 * in a surprising way are refused with a message instead: a backslash at the
 * end of a line (iniparser joins the next line, even to a comment), an
 * unterminated quote or text after a closing quote (iniparser drops it
 * silently), "[]" (iniparser reuses a piece of the previous section's name),
 * NUL bytes, lines over CFG_LINE_MAX characters.
 *
 * What is accepted, after leading and trailing blanks are dropped:
 *	(empty)
 *	# comment	; comment
 *	[name]			blanks inside the brackets are dropped
 *	key = value		value up to a ';' or '#', blanks around it dropped
 *	key = "value"		verbatim, may hold ';' and '#'; '...' works too
 *	key = "value" ; comment
 * Section names must be peer names (see cfg_peer_name_problem()).
 */
#ifndef RPMAFS_CONFIG_SCAN_H
#define RPMAFS_CONFIG_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

/* Longest line accepted, newline excluded; iniparser's own limit is 1022. */
#define CFG_LINE_MAX 1000

/* Longest key name accepted (the longest real one is 18 characters). */
#define CFG_KEY_NAME_MAX 64

struct cfg_entry {
	char *key;     /* lower case, as iniparser stores it */
	char *value;   /* as iniparser reads it */
	unsigned line; /* of the last definition, whose value iniparser keeps */
};

struct cfg_section {
	char *name;		   /* as written: the spool file's name */
	char *lname;		   /* lower case, as iniparser stores it */
	unsigned line;		   /* of the first header */
	struct cfg_entry *entries; /* in file order of first definition */
	size_t nentries, cap;
};

struct cfg_scan {
	struct cfg_section *sections; /* in file order of first header */
	size_t nsections, cap;
	/*
	 * false when a line was refused, or a section name is invalid: then
	 * iniparser's reading of the file would not match this one.
	 */
	bool ini_safe;
};

/*
 * cfg_scan -- scan len bytes at buf into *scan, reporting every problem in
 * rep. Returns 0 (problems or not), or -1 when memory ran out. Free *scan
 * with cfg_scan_fini() either way.
 */
int cfg_scan(const char *buf, size_t len, struct cfg_scan *scan, struct cfg_report *rep);

void cfg_scan_fini(struct cfg_scan *scan);

/*
 * cfg_peer_name_problem -- NULL when the len bytes at name are a valid peer
 * name (1 .. RPMAFS_PEER_NAME_MAX letters, digits, '_' or '-'), or a static
 * text saying what is wrong with it.
 */
const char *cfg_peer_name_problem(const char *name, size_t len);

#endif /* RPMAFS_CONFIG_SCAN_H */
