/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ini.h -- reading the config with iniparser, the one reader of values
 *
 * iniparser 4.1 only loads from a path, so the bytes the scan has read are
 * handed to it through a memfd: the scan's line numbers are those of the
 * bytes iniparser reads, even if the file is rewritten meanwhile or is a
 * pipe. Its error messages, which it would print on stderr, become
 * problems in the report of the load running in the calling thread.
 */
#ifndef RPMAFS_CONFIG_INI_H
#define RPMAFS_CONFIG_INI_H

#include <stddef.h>

#include <iniparser.h>

#include "report.h"
#include "scan.h"

/*
 * cfg_ini_load -- parse len bytes at buf with iniparser into *dict; file
 * names them in messages. Returns 0, or -1 with the problem reported.
 */
int cfg_ini_load(
	const char *buf, size_t len, const char *file, dictionary **dict, struct cfg_report *rep);

/*
 * cfg_ini_load_path -- iniparser_load(ini_path) with its messages reported
 * in rep, ini_path replaced by file in them. Returns 0 with *dict set, or -1.
 */
int cfg_ini_load_path(
	const char *ini_path, const char *file, dictionary **dict, struct cfg_report *rep);

/*
 * cfg_ini_agrees -- 0 when d holds exactly the sections and keys that scan
 * located (their values are d's alone), else -1 with the difference
 * reported. It cannot fail for a file the scan accepts; it is checked
 * anyway because every line number rpmafs reports relies on it, and the
 * fuzzer relies on it to find out when it does not hold.
 */
int cfg_ini_agrees(const dictionary *d, const struct cfg_scan *scan, struct cfg_report *rep);

#endif /* RPMAFS_CONFIG_INI_H */
