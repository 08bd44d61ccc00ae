/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * keys.h -- the keys of rpmafs.ini: where each may appear, which values it
 * takes, and what they become in struct rpmafs_cfg
 */
#ifndef RPMAFS_CONFIG_KEYS_H
#define RPMAFS_CONFIG_KEYS_H

#include <stdbool.h>

#include <iniparser.h>

#include "config.h"
#include "report.h"
#include "scan.h"

/* The section that holds the global settings and the peer defaults. */
#define CFG_GLOBAL_SECTION "rpmafs"

/* Whether a scanned section is [rpmafs] (in any letter case). */
bool cfg_is_global(const struct cfg_section *sec);

/*
 * cfg_check_keys -- report every key that is unknown, or in a section where
 * it does not belong. Needs only the names and lines the scan located, so
 * it runs on files whose values are not looked at.
 */
void cfg_check_keys(const struct cfg_scan *scan, struct cfg_report *rep);

/*
 * cfg_apply_keys -- fill cfg->log_level, max_message and slots, and the
 * peers in cfg->peers (cfg->npeers entries allocated by the caller, one per
 * non-global section, in file order), from the defaults and the values
 * iniparser read into d -- the only source of values -- reporting every
 * bad or missing value at the line scan located for it. d must agree with
 * scan (cfg_ini_agrees()).
 */
void cfg_apply_keys(const struct cfg_scan *scan, const dictionary *d, struct rpmafs_cfg *cfg,
	struct cfg_report *rep);

#endif /* RPMAFS_CONFIG_KEYS_H */
