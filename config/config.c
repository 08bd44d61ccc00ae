// SPDX-License-Identifier: BSD-3-Clause
/*
 * config.c -- loading rpmafs.ini: read the file once; scan its lines for
 * where each section and key is; let iniparser, the one reader of values,
 * parse the same bytes; check both saw the same sections and keys; then
 * check and apply every value
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "config.h"
#include "ini.h"
#include "keys.h"
#include "report.h"
#include "scan.h"
#include "size.h"

static void report_errno(struct cfg_report *rep, const char *what, int err)
{
	char buf[128];

	cfg_problem(rep, 0, NULL, NULL, "%s: %s", what, strerror_r(err, buf, sizeof(buf)));
}

/* Read the whole file at path into *buf (*len bytes, NUL-terminated). */
static int read_file(const char *path, char **buf, size_t *len, struct cfg_report *rep)
{
	size_t cap = 4096, n = 0;
	char *data = NULL;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		report_errno(rep, "cannot open", errno);
		return -1;
	}
	for (;;) {
		ssize_t r;

		if (!data || n == cap) {
			char *bigger;

			if (data)
				cap *= 2;
			bigger = realloc(data, cap + 1);
			if (!bigger) {
				rep->oom = true;
				goto fail;
			}
			data = bigger;
		}
		r = read(fd, data + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			report_errno(rep, "cannot read", errno);
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > RPMAFS_CFG_FILE_MAX) {
			char limit[RPMAFS_SIZE_STR_MAX];

			cfg_problem(rep, 0, NULL, NULL,
				"is larger than %s (%u bytes); this is not an rpmafs config",
				rpmafs_format_size(RPMAFS_CFG_FILE_MAX, limit, sizeof(limit)),
				RPMAFS_CFG_FILE_MAX);
			goto fail;
		}
	}
	close(fd);
	data[n] = '\0';
	*buf = data;
	*len = n;
	return 0;

fail:
	close(fd);
	free(data);
	return -1;
}

static size_t count_peers(const struct cfg_scan *scan)
{
	size_t n = 0;

	for (size_t i = 0; i < scan->nsections; i++)
		n += !cfg_is_global(&scan->sections[i]);
	return n;
}

static struct rpmafs_cfg *cfg_new(const char *path, size_t npeers)
{
	struct rpmafs_cfg *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	cfg->path = strdup(path);
	cfg->peers = calloc(npeers ? npeers : 1, sizeof(*cfg->peers));
	cfg->npeers = npeers;
	if (!cfg->path || !cfg->peers)
		rpmafs_cfg_delete(&cfg);
	return cfg;
}

/* the line of [rpmafs] listen (set, even if its value is bad), or 0 */
static unsigned listen_line(const struct cfg_scan *scan)
{
	const struct cfg_section *g = cfg_scan_section(scan, CFG_GLOBAL_SECTION);

	return g ? cfg_scan_key_line(g, "listen") : 0;
}

/*
 * Each peer's key = PATH, read now (rpmafs_key_load: a regular file of 32
 * bytes that only its owner may read or write), so that a bad key file
 * refuses the mount with the file, line, section and the key file's path.
 */
static void load_peer_keys(
	const struct cfg_scan *scan, struct rpmafs_cfg *cfg, struct cfg_report *rep)
{
	for (size_t i = 0; i < scan->nsections; i++) {
		const struct cfg_section *sec = &scan->sections[i];
		struct rpmafs_peer_cfg *peer =
			(struct rpmafs_peer_cfg *)rpmafs_cfg_find_peer(cfg, sec->name);
		char why[PATH_MAX + 160];

		if (cfg_is_global(sec) || !peer || !peer->key_path[0] || peer->key)
			continue;
		if (rpmafs_key_load(peer->key_path, NULL, &peer->key, why, sizeof(why)))
			cfg_problem(
				rep, cfg_scan_key_line(sec, "key"), sec->name, "key", "%s", why);
	}
}

/*
 * [rpmafs] listen_keys = DIR, read now (rpmafs_keyring_load: every *.key
 * file, each as a peer's key is read), so that a bad key file refuses the
 * mount with the file, line, section and the key file's path; and what
 * goes with it: listen, and listen_protect only beside it.
 */
static void load_listen_keys(
	const struct cfg_scan *scan, struct rpmafs_cfg *cfg, struct cfg_report *rep)
{
	const struct cfg_section *g = cfg_scan_section(scan, CFG_GLOBAL_SECTION);
	unsigned line = g ? cfg_scan_key_line(g, "listen_keys") : 0;
	unsigned pline = g ? cfg_scan_key_line(g, "listen_protect") : 0;
	char why[PATH_MAX + 160];

	if (pline && !line)
		cfg_problem(rep, pline, g->name, "listen_protect",
			"needs listen_keys = DIR: listen_protect says what the keys do");
	if (!line || !cfg->inbox.keys_dir[0] || cfg->inbox.keys)
		return;
	if (!listen_line(scan)) {
		cfg_problem(rep, line, g->name, "listen_keys",
			"needs listen = ADDR: the keys are the inbox's");
		return;
	}
	if (rpmafs_keyring_load(cfg->inbox.keys_dir, &cfg->inbox.keys, why, sizeof(why)))
		cfg_problem(rep, line, g->name, "listen_keys", "%s", why);
}

/* Everything after reading: the problems end up in rep, the result in *cfg. */
static void load_bytes(const char *path, const char *buf, size_t len, struct rpmafs_cfg **cfg,
	struct cfg_report *rep)
{
	struct cfg_scan scan;
	dictionary *d = NULL;
	size_t npeers;

	if (cfg_scan(buf, len, &scan, rep)) {
		rep->oom = true;
		goto out;
	}
	cfg_check_keys(&scan, rep);
	npeers = count_peers(&scan);
	if (!scan.ini_safe)
		goto out;
	if (cfg_ini_load(buf, len, path, &d, rep) || cfg_ini_agrees(d, &scan, rep))
		goto out;

	*cfg = cfg_new(path, npeers);
	if (!*cfg) {
		rep->oom = true;
		goto out;
	}
	cfg_apply_keys(&scan, d, *cfg, rep);
	load_peer_keys(&scan, *cfg, rep);
	load_listen_keys(&scan, *cfg, rep);
	/* a mount that only receives needs no peer; one that does neither is a mistake */
	/* the inbox's files and a peer's spool file share the directory */
	if ((*cfg)->inbox.enabled && rpmafs_cfg_find_peer(*cfg, "inbox")) {
		const struct cfg_section *sec = cfg_scan_section(&scan, "inbox");

		cfg_problem(rep, sec ? sec->line : 0, "inbox", NULL,
			"a peer may not be called inbox when [rpmafs] listen is set: the mount's "
			"inbox has that name");
	}
	if (npeers == 0 && !listen_line(&scan))
		cfg_problem(rep, 0, NULL, NULL,
			"no peers: add a section such as [alpha] with address = 192.168.77.2, or "
			"listen = ADDR in [rpmafs] for a mount that only receives");

out:
	if (d)
		iniparser_freedict(d);
	cfg_scan_fini(&scan);
}

int rpmafs_cfg_load(const char *path, struct rpmafs_cfg **cfg_ptr, char **err)
{
	struct rpmafs_cfg *cfg = NULL;
	struct cfg_report rep;
	char *buf = NULL;
	size_t len;

	if (err)
		*err = NULL;
	if (!path || !cfg_ptr) {
		errno = EINVAL;
		return -1;
	}

	cfg_report_init(&rep, path);
	if (read_file(path, &buf, &len, &rep) == 0)
		load_bytes(path, buf, len, &cfg, &rep);
	free(buf);

	if (rep.count == 0 && !rep.oom && cfg) {
		cfg_report_fini(&rep);
		*cfg_ptr = cfg;
		return 0;
	}
	rpmafs_cfg_delete(&cfg);
	if (rep.oom) {
		cfg_report_fini(&rep);
		errno = ENOMEM;
	} else if (err) {
		*err = cfg_report_take(&rep);
		if (!*err)
			errno = ENOMEM;
	} else {
		cfg_report_fini(&rep);
	}
	return -1;
}

void rpmafs_cfg_delete(struct rpmafs_cfg **cfg_ptr)
{
	struct rpmafs_cfg *cfg;

	if (!cfg_ptr || !*cfg_ptr)
		return;
	cfg = *cfg_ptr;
	free(cfg->path);
	for (size_t i = 0; cfg->peers && i < cfg->npeers; i++)
		rpmafs_key_delete(&cfg->peers[i].key);
	rpmafs_keyring_delete(&cfg->inbox.keys);
	free(cfg->peers);
	free(cfg);
	*cfg_ptr = NULL;
}

const struct rpmafs_peer_cfg *rpmafs_cfg_find_peer(const struct rpmafs_cfg *cfg, const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->npeers; i++)
		if (strcmp(cfg->peers[i].name, name) == 0)
			return &cfg->peers[i];
	return NULL;
}
