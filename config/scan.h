/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scan.h -- where each section and key of an INI file is, and what is
 * there twice
 *
 * iniparser (ini.h) is the one reader of values. What it cannot give is
 * added here, from a pass over the same bytes, line by line (line.h):
 * the line of every section header and key, so that every problem names
 * its line; sections and keys that appear twice, which iniparser merges
 * without a word; and section names as written, which are file names,
 * where iniparser folds them to lower case. Lines that iniparser would
 * read in a surprising way are refused (line.h), and the file's values are
 * then not looked at.
 *
 * Section names must be peer names (see cfg_peer_name_problem()).
 */
#ifndef RPMAFS_CONFIG_SCAN_H
#define RPMAFS_CONFIG_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "line.h"
#include "report.h"

struct cfg_key_line {
	char *key;     /* lower case, as iniparser stores it */
	unsigned line; /* of the last definition, whose value iniparser keeps */
};

struct cfg_section {
	char *name;		   /* as written: the spool file's name */
	char *lname;		   /* lower case, as iniparser stores it */
	unsigned line;		   /* of the first header */
	struct cfg_key_line *keys; /* in file order of first definition */
	size_t nkeys, cap;
};

struct cfg_scan {
	struct cfg_section *sections; /* in file order of first header */
	size_t nsections, cap;
	/*
	 * false when a line was refused, or a section name is invalid: then
	 * iniparser's reading of the file would not be the one meant.
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

/* cfg_scan_section -- the section iniparser calls lname, or NULL */
const struct cfg_section *cfg_scan_section(const struct cfg_scan *scan, const char *lname);

/* cfg_scan_key_line -- the line where sec sets key (lower case) last, or 0 */
unsigned cfg_scan_key_line(const struct cfg_section *sec, const char *key);

/*
 * cfg_peer_name_problem -- NULL when the len bytes at name are a valid peer
 * name (1 .. RPMAFS_PEER_NAME_MAX letters, digits, '_' or '-'), or a static
 * text saying what is wrong with it.
 */
const char *cfg_peer_name_problem(const char *name, size_t len);

#endif /* RPMAFS_CONFIG_SCAN_H */
