// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_config.c -- libFuzzer target for the config loader
 *
 * Each input is a config file: it is written to a memfd and loaded through
 * rpmafs_cfg_load() as a file on disk would be. Besides what ASan and UBSan
 * catch, the target aborts when the loader breaks a promise of its own:
 * a loaded config holds only valid values; a refused one comes with
 * problem lines that each name the file; and iniparser never sees other
 * sections or keys than those the scan located (the "internal error"
 * check in ini.c: every line number reported relies on it). The
 * same input also goes through the size and number parsers, which must
 * read back what rpmafs_format_size() writes.
 *
 *	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 *	ninja -C build-fuzz config/fuzz_config
 *	build-fuzz/config/fuzz_config -dict=config/fuzz_config.dict CORPUS_DIR
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "size.h"

#define CHECK(cond)                                                                             \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			fprintf(stderr, "fuzz_config: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                \
		}                                                                               \
	} while (0)

static int valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > RPMAFS_PEER_NAME_MAX)
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return 0;
	return 1;
}

static void check_loaded(const struct rpmafs_cfg *cfg)
{
	const struct rpmafs_inbox_cfg *in = &cfg->inbox;

	/* a mount that only receives (listen =) needs no peer; one that does neither is refused */
	CHECK(cfg->npeers >= 1 || in->enabled);
	if (in->enabled) {
		CHECK(in->address[0] != '\0' && strlen(in->address) < sizeof(in->address));
		CHECK(strpbrk(in->address, " \t\r\n;#\"'[]") == NULL);
		CHECK(in->port >= 1);
		CHECK(in->slots >= RPMAFS_CFG_INBOX_SLOTS_MIN &&
			in->slots <= RPMAFS_CFG_INBOX_SLOTS_MAX);
		CHECK(in->max_message >= 1 && in->max_message <= RPMAFS_CFG_MAX_MESSAGE_LIMIT);
		CHECK(in->nallow <= RPMAFS_CFG_ALLOW_MAX);
	}
	CHECK(cfg->log_level >= LOG_ERR && cfg->log_level <= LOG_DEBUG);
	CHECK(cfg->max_message >= 1 && cfg->max_message <= RPMAFS_CFG_MAX_MESSAGE_LIMIT);
	CHECK(cfg->slots >= RPMAFS_CFG_SLOTS_MIN && cfg->slots <= RPMAFS_CFG_SLOTS_MAX);
	for (size_t i = 0; i < cfg->npeers; i++) {
		const struct rpmafs_peer_cfg *p = &cfg->peers[i];

		CHECK(valid_name(p->name));
		CHECK(strcasecmp(p->name, "rpmafs") != 0);
		for (size_t j = 0; j < i; j++)
			CHECK(strcasecmp(p->name, cfg->peers[j].name) != 0);
		CHECK(rpmafs_cfg_find_peer(cfg, p->name) == p);
		CHECK(p->type == RPMAFS_PEER_RDMA || p->type == RPMAFS_PEER_NULL);
		CHECK(p->type == RPMAFS_PEER_NULL || p->address[0] != '\0');
		CHECK(strlen(p->address) < sizeof(p->address));
		CHECK(strpbrk(p->address, " \t\r\n;#\"'[]") == NULL);
		CHECK(p->port >= 1);
		CHECK(p->mode == RPMAFS_MODE_ASYNC || p->mode == RPMAFS_MODE_SYNC);
		CHECK(p->framing == RPMAFS_FRAMING_WRITE || p->framing == RPMAFS_FRAMING_FILE);
		CHECK(p->completion == RPMAFS_COMPLETION_ALWAYS ||
			p->completion == RPMAFS_COMPLETION_ON_ERROR);
		CHECK(p->max_message >= 1 && p->max_message <= RPMAFS_CFG_MAX_MESSAGE_LIMIT);
		CHECK(p->send_timeout_ms <= RPMAFS_CFG_SEND_TIMEOUT_MS_MAX);
		CHECK(p->connect_timeout_ms >= 1 &&
			p->connect_timeout_ms <= RPMAFS_CFG_CONNECT_TIMEOUT_MS_MAX);
	}
}

/* Whether a line of text starts with prefix (quoted input may hold it mid-line). */
static int has_line_starting(const char *text, const char *prefix)
{
	for (const char *l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

static void check_refused(const char *err, const char *path)
{
	char prefix[64];
	size_t plen, lines = 0;

	CHECK(err != NULL);
	CHECK(err[0] != '\0' && err[strlen(err) - 1] != '\n');
	snprintf(prefix, sizeof(prefix), "rpmafs: %s", path);
	plen = strlen(prefix);
	for (const char *l = err; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		CHECK(strncmp(l, prefix, plen) == 0 && l[plen] == ':');
		lines++;
	}
	CHECK(lines <= 51);
	/* the two file-level forms that mean iniparser and the scan disagree */
	snprintf(prefix, sizeof(prefix), "rpmafs: %s: internal error: ", path);
	CHECK(!has_line_starting(err, prefix));
	snprintf(prefix, sizeof(prefix), "rpmafs: %s: iniparser: ", path);
	CHECK(!has_line_starting(err, prefix));
}

static void check_numbers(const uint8_t *data, size_t size)
{
	char text[64], back[RPMAFS_SIZE_STR_MAX];
	uint64_t v, w;

	if (size >= sizeof(text) || memchr(data, '\0', size))
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	if (rpmafs_parse_size(text, &v, NULL) == 0) {
		rpmafs_format_size(v, back, sizeof(back));
		CHECK(rpmafs_parse_size(back, &w, NULL) == 0 && w == v);
	}
	if (rpmafs_parse_decimal(text, &v, NULL) == 0) {
		CHECK(strspn(text, "0123456789") == size);
		CHECK(rpmafs_parse_size(text, &w, NULL) == 0 && w == v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[32];
	struct rpmafs_cfg *cfg = NULL;
	char *err = NULL;

	if (fd < 0) {
		fd = memfd_create("fuzz.ini", MFD_CLOEXEC);
		CHECK(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);

	if (rpmafs_cfg_load(path, &cfg, &err) == 0) {
		CHECK(err == NULL);
		check_loaded(cfg);
		rpmafs_cfg_delete(&cfg);
		CHECK(cfg == NULL);
	} else {
		CHECK(cfg == NULL);
		check_refused(err, path);
		free(err);
	}
	check_numbers(data, size);
	return 0;
}
