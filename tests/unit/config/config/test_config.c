// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_config.c -- unit tests of config/: loading and checking rpmafs.ini
 *
 * Every test writes a config file into its own temporary directory and
 * loads it through the public API, then checks the values or the exact
 * problem lines (file, line, section, key, text).
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth.h"
#include "config.h"
#include "ini.h"
#include "line.h"
#include "report.h"
#include "scan.h"

struct fx {
	char dir[64];
	char path[128]; /* dir/rpmafs.ini */
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/rpmafs-test-config-XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/rpmafs.ini", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[200];

	/* the directory holds only files the tests wrote (and maybe a fifo or a subdir) */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		return -1;
	free(fx);
	return 0;
}

static void write_bytes(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void write_cfg(struct fx *fx, const char *text)
{
	write_bytes(fx->path, text, strlen(text));
}

/* Load text; it must succeed. */
static struct rpmafs_cfg *load_ok(struct fx *fx, const char *text)
{
	struct rpmafs_cfg *cfg = NULL;
	char *err = NULL;

	write_cfg(fx, text);
	if (rpmafs_cfg_load(fx->path, &cfg, &err) != 0)
		fail_msg("load failed:\n%s\n--- config:\n%s", err ? err : "(no message)", text);
	assert_null(err);
	assert_non_null(cfg);
	assert_string_equal(cfg->path, fx->path);
	assert_true(cfg->npeers >= 1);
	return cfg;
}

/* Every line of err starts with "rpmafs: FILE" and is followed by ':'. */
static void check_prefixes(const char *err, const char *file)
{
	char prefix[256];
	size_t plen;

	snprintf(prefix, sizeof(prefix), "rpmafs: %s", file);
	plen = strlen(prefix);
	for (const char *l = err; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, prefix, plen) != 0 || l[plen] != ':')
			fail_msg("line without the file prefix: %.*s", (int)strcspn(l, "\n"), l);
	}
	assert_true(err[strlen(err) - 1] != '\n');
}

/* Load text; it must fail with a message. The caller frees the message. */
static char *load_bad(struct fx *fx, const char *text)
{
	struct rpmafs_cfg *cfg = NULL;
	char *err = NULL;

	write_cfg(fx, text);
	if (rpmafs_cfg_load(fx->path, &cfg, &err) == 0) {
		rpmafs_cfg_delete(&cfg);
		fail_msg("load succeeded:\n%s", text);
	}
	assert_null(cfg);
	assert_non_null(err);
	check_prefixes(err, fx->path);
	return err;
}

static size_t count_lines(const char *err)
{
	size_t n = 1;

	for (; *err; err++)
		n += *err == '\n';
	return n;
}

/* err has the line "rpmafs: PATH" + rest, in full. */
static void assert_problem(const char *err, const struct fx *fx, const char *rest)
{
	char want[1024];
	size_t wlen;

	snprintf(want, sizeof(want), "rpmafs: %s%s", fx->path, rest);
	wlen = strlen(want);
	for (const char *l = err; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, want, wlen) == 0 && (l[wlen] == '\n' || l[wlen] == '\0'))
			return;
	}
	fail_msg("no line\n  %s\nin\n%s", want, err);
}

/* err contains every string given, in any line. */
#define assert_has(err, ...) assert_has_((err), (const char *[]){__VA_ARGS__, NULL})
static void assert_has_(const char *err, const char **needles)
{
	for (; *needles; needles++)
		if (!strstr(err, *needles))
			fail_msg("\"%s\" not in\n%s", *needles, err);
}

/* Load text with one bad line; the message is exactly one line containing the strings. */
#define assert_one_problem(fx, text, ...)                                                 \
	do {                                                                              \
		char *err_ = load_bad((fx), (text));                                      \
		if (count_lines(err_) != 1)                                               \
			fail_msg("more than one problem for\n%s\n---\n%s", (text), err_); \
		assert_has(err_, __VA_ARGS__);                                            \
		free(err_);                                                               \
	} while (0)

/* A config with peer alpha holding one extra line. */
static char *with_peer_line(const char *line)
{
	char *text;

	assert_true(asprintf(&text, "[alpha]\naddress = 192.168.77.2\n%s\n", line) > 0);
	return text;
}

/* alpha's config after adding line; it must load. */
static struct rpmafs_cfg *load_peer_line(struct fx *fx, const char *line)
{
	char *text = with_peer_line(line);
	struct rpmafs_cfg *cfg = load_ok(fx, text);

	free(text);
	assert_int_equal(cfg->npeers, 1);
	return cfg;
}

/* alpha's config with line (line 3) must fail with one problem containing want. */
static void peer_line_bad(struct fx *fx, const char *line, const char *key, const char *want)
{
	char *text = with_peer_line(line);
	char head[128];

	snprintf(head, sizeof(head), ":3: [alpha] %s: ", key);
	assert_one_problem(fx, text, head, want);
	free(text);
}

static void test_minimal_defaults(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg = load_ok(fx, "[alpha]\naddress = 192.168.77.2\n");
	const struct rpmafs_peer_cfg *p = &cfg->peers[0];

	assert_int_equal(cfg->log_level, LOG_NOTICE);
	assert_int_equal(cfg->max_message, 1048576);
	assert_int_equal(cfg->slots, 16);
	assert_int_equal(cfg->drafts, 64);
	assert_int_equal(cfg->npeers, 1);
	assert_string_equal(p->name, "alpha");
	assert_string_equal(p->address, "192.168.77.2");
	assert_int_equal(p->port, 7204);
	assert_int_equal(p->type, RPMAFS_PEER_RDMA);
	assert_int_equal(p->mode, RPMAFS_MODE_ASYNC);
	assert_int_equal(p->completion, RPMAFS_COMPLETION_ALWAYS);
	assert_int_equal(p->confirm, RPMAFS_CONFIRM_AUTO);
	assert_int_equal(p->close, RPMAFS_CLOSE_WAIT);
	assert_int_equal(p->max_message, 1048576);
	assert_int_equal(p->send_timeout_ms, 5000);
	assert_int_equal(p->connect_timeout_ms, 1000);
	rpmafs_cfg_delete(&cfg);
	assert_null(cfg);
}

static void test_every_peer_key(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg = load_ok(fx, "[alpha]\n"
					     "address = receiver.lab\n"
					     "port = 7300\n"
					     "type = rdma\n"
					     "mode = sync\n"
					     "framing = file\n"
					     "completion = on_error\n"
					     "max_message = 64K\n"
					     "send_timeout_ms = 250\n"
					     "connect_timeout_ms = 20\n");
	const struct rpmafs_peer_cfg *p = &cfg->peers[0];

	assert_string_equal(p->address, "receiver.lab");
	assert_int_equal(p->port, 7300);
	assert_int_equal(p->type, RPMAFS_PEER_RDMA);
	assert_int_equal(p->mode, RPMAFS_MODE_SYNC);
	assert_int_equal(p->framing, RPMAFS_FRAMING_FILE);
	assert_int_equal(p->completion, RPMAFS_COMPLETION_ON_ERROR);
	assert_int_equal(p->max_message, 65536);
	assert_int_equal(p->send_timeout_ms, 250);
	assert_int_equal(p->connect_timeout_ms, 20);
	/* a peer's max_message is not the global one */
	assert_int_equal(cfg->max_message, 1048576);
	rpmafs_cfg_delete(&cfg);
}

static void test_global_keys_and_peer_defaults(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg = load_ok(fx, "[alpha]\n"
					     "address = 10.0.0.1\n"
					     "[rpmafs]\n" /* after a peer: still its defaults */
					     "log_level = debug\n"
					     "slots = 64\n"
					     "drafts = 9\n"
					     "max_message = 256K\n"
					     "port = 7400\n"
					     "type = null\n"
					     "mode = sync\n"
					     "framing = file\n"
					     "completion = on_error\n"
					     "send_timeout_ms = 0\n"
					     "connect_timeout_ms = 7\n"
					     "[beta]\n"
					     "type = rdma\n"
					     "address = 10.0.0.2\n"
					     "port = 1\n"
					     "mode = async\n"
					     "framing = write\n"
					     "completion = always\n"
					     "max_message = 1\n"
					     "send_timeout_ms = 9\n"
					     "connect_timeout_ms = 8\n");
	const struct rpmafs_peer_cfg *a = &cfg->peers[0], *b = &cfg->peers[1];

	assert_int_equal(cfg->log_level, LOG_DEBUG);
	assert_int_equal(cfg->slots, 64);
	assert_int_equal(cfg->drafts, 9);
	assert_int_equal(cfg->max_message, 256 * 1024);
	assert_int_equal(cfg->npeers, 2);

	assert_string_equal(a->name, "alpha");
	assert_string_equal(a->address, "10.0.0.1");
	assert_int_equal(a->port, 7400);
	assert_int_equal(a->type, RPMAFS_PEER_NULL);
	assert_int_equal(a->mode, RPMAFS_MODE_SYNC);
	assert_int_equal(a->framing, RPMAFS_FRAMING_FILE);
	assert_int_equal(a->completion, RPMAFS_COMPLETION_ON_ERROR);
	assert_int_equal(a->max_message, 256 * 1024);
	assert_int_equal(a->send_timeout_ms, 0);
	assert_int_equal(a->connect_timeout_ms, 7);

	assert_string_equal(b->name, "beta");
	assert_int_equal(b->port, 1);
	assert_int_equal(b->type, RPMAFS_PEER_RDMA);
	assert_int_equal(b->mode, RPMAFS_MODE_ASYNC);
	assert_int_equal(b->framing, RPMAFS_FRAMING_WRITE);
	assert_int_equal(b->completion, RPMAFS_COMPLETION_ALWAYS);
	assert_int_equal(b->max_message, 1);
	assert_int_equal(b->send_timeout_ms, 9);
	assert_int_equal(b->connect_timeout_ms, 8);
	rpmafs_cfg_delete(&cfg);
}

static void test_log_levels(void **state)
{
	static const struct {
		const char *name;
		int level;
	} levels[] = {
		{"error", LOG_ERR},
		{"warning", LOG_WARNING},
		{"notice", LOG_NOTICE},
		{"info", LOG_INFO},
		{"debug", LOG_DEBUG},
		{"DEBUG", LOG_DEBUG},
		{"Warning", LOG_WARNING},
	};
	struct fx *fx = *state;

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		struct rpmafs_cfg *cfg;
		char *text;

		assert_true(asprintf(&text, "[rpmafs]\nlog_level = %s\n[a]\naddress = h\n",
				    levels[i].name) > 0);
		cfg = load_ok(fx, text);
		assert_int_equal(cfg->log_level, levels[i].level);
		rpmafs_cfg_delete(&cfg);
		free(text);
	}
	assert_string_equal(rpmafs_log_level_name(LOG_ERR), "error");
	assert_string_equal(rpmafs_log_level_name(LOG_DEBUG), "debug");
	assert_null(rpmafs_log_level_name(LOG_EMERG));

	assert_one_problem(fx, "[rpmafs]\nlog_level = verbose\n[a]\naddress = h\n",
		":2: [rpmafs] log_level: \"verbose\" is not valid; use error, warning, notice, info or debug");
	assert_one_problem(fx, "[rpmafs]\nlog_level = 7\n[a]\naddress = h\n",
		":2: [rpmafs] log_level: \"7\" is not valid");
}

static void test_max_message_bounds(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;
	char *err;

	cfg = load_peer_line(fx, "max_message = 1048576");
	assert_int_equal(cfg->peers[0].max_message, 1048576);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "max_message = 1MiB");
	assert_int_equal(cfg->peers[0].max_message, 1048576);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "max_message = 1");
	assert_int_equal(cfg->peers[0].max_message, 1);
	rpmafs_cfg_delete(&cfg);

	err = load_bad(fx, "[alpha]\naddress = h\nmax_message = 1048577\n");
	assert_int_equal(count_lines(err), 1);
	assert_problem(err, fx,
		":3: [alpha] max_message: \"1048577\" is over the limit of 1MiB (1048576 bytes)");
	free(err);
	peer_line_bad(
		fx, "max_message = 0", "max_message", "\"0\" is too small; the minimum is 1 byte");
	peer_line_bad(fx, "max_message = 1G", "max_message", "over the limit of 1MiB");

	/* the same limits in [rpmafs] */
	cfg = load_ok(fx, "[rpmafs]\nmax_message = 1M\n[a]\naddress = h\n");
	assert_int_equal(cfg->max_message, 1048576);
	rpmafs_cfg_delete(&cfg);
	assert_one_problem(fx, "[rpmafs]\nmax_message = 1025K\n[a]\naddress = h\n",
		":2: [rpmafs] max_message: \"1025K\" is over the limit of 1MiB (1048576 bytes)");
	assert_one_problem(fx, "[rpmafs]\nmax_message = 0\n[a]\naddress = h\n",
		":2: [rpmafs] max_message: \"0\" is too small");
}

/* The message from the brief, byte for byte. */
static void test_error_format_exact(void **state)
{
	struct fx *fx = *state;
	char *err = load_bad(fx, "# rpmafs.ini\n"
				 "\n"
				 "[rpmafs]\n"
				 "log_level = info\n"
				 "\n"
				 "[beta]\n"
				 "address = 10.0.0.2\n"
				 "\n"
				 "[alpha]\n"
				 "address = 192.168.77.2\n"
				 "mode = sync\n"
				 "max_message = 2MiB\n");
	char want[512];

	snprintf(want, sizeof(want),
		"rpmafs: %s:12: [alpha] max_message: \"2MiB\" is over the limit of 1MiB (1048576 bytes)",
		fx->path);
	assert_string_equal(err, want);
	free(err);
}

static void test_size_syntax(void **state)
{
	static const struct {
		const char *text;
		uint32_t bytes;
	} ok[] = {
		{"64", 64},
		{"4K", 4096},
		{"4k", 4096},
		{"4KiB", 4096},
		{"4kib", 4096},
		{"1M", 1048576},
		{"1MiB", 1048576},
		{"\"16K\"", 16384},
		{"512K ; half", 524288},
	};
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"4KB", "has an unknown suffix"},
		{"1.5M", "has a fraction"},
		{"-1", "is negative"},
		{"", "is empty"},
		{"4 K", "has blanks"},
		{"99999999999999999999999", "is too large"},
		{"64x", "has an unknown suffix"},
		{"0x40", "has an unknown suffix"},
	};
	struct fx *fx = *state;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char line[64];
		struct rpmafs_cfg *cfg;

		snprintf(line, sizeof(line), "max_message = %s", ok[i].text);
		cfg = load_peer_line(fx, line);
		assert_int_equal(cfg->peers[0].max_message, ok[i].bytes);
		rpmafs_cfg_delete(&cfg);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64], want[128];

		snprintf(line, sizeof(line), "max_message = %s", bad[i].text);
		snprintf(want, sizeof(want), "\"%s\" %s", bad[i].text, bad[i].why);
		peer_line_bad(fx, line, "max_message", want);
		/* and every one says what is accepted */
		peer_line_bad(fx, line, "max_message",
			"; expected 1 to 1MiB, written as a whole number of bytes, optionally followed by K, KiB, M, MiB, G or GiB (powers of 1024; letters in any case), e.g. 64, 4K, 1MiB");
	}
}

static void test_slots_bounds(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;

	cfg = load_ok(fx, "[rpmafs]\nslots = 2\n[a]\naddress = h\n");
	assert_int_equal(cfg->slots, 2);
	rpmafs_cfg_delete(&cfg);
	cfg = load_ok(fx, "[rpmafs]\nslots = 1024\n[a]\naddress = h\n");
	assert_int_equal(cfg->slots, 1024);
	rpmafs_cfg_delete(&cfg);
	assert_one_problem(fx, "[rpmafs]\nslots = 1\n[a]\naddress = h\n",
		":2: [rpmafs] slots: \"1\" is out of range; expected a whole number from 2 to 1024");
	assert_one_problem(fx, "[rpmafs]\nslots = 1025\n[a]\naddress = h\n",
		":2: [rpmafs] slots: \"1025\" is out of range; expected a whole number from 2 to 1024");
	assert_one_problem(fx, "[rpmafs]\nslots = 16k\n[a]\naddress = h\n",
		":2: [rpmafs] slots: \"16k\" has characters after the number");
	/* slots is global only */
	peer_line_bad(
		fx, "slots = 4", "slots", "is a global setting, not a peer's; put it in [rpmafs]");
}

static void test_port_bounds(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;

	cfg = load_peer_line(fx, "port = 1");
	assert_int_equal(cfg->peers[0].port, 1);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "port = 65535");
	assert_int_equal(cfg->peers[0].port, 65535);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "port = 07204"); /* decimal, not octal */
	assert_int_equal(cfg->peers[0].port, 7204);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "port = \"7205\"");
	assert_int_equal(cfg->peers[0].port, 7205);
	rpmafs_cfg_delete(&cfg);

	peer_line_bad(fx, "port = 0", "port",
		"\"0\" is out of range; expected a whole number from 1 to 65535");
	peer_line_bad(fx, "port = 65536", "port",
		"\"65536\" is out of range; expected a whole number from 1 to 65535");
	peer_line_bad(fx, "port = 4294967297", "port", "\"4294967297\" is out of range");
	peer_line_bad(fx, "port = 99999999999999999999", "port", "is too large");
	peer_line_bad(fx, "port = -1", "port", "\"-1\" is negative");
	peer_line_bad(fx, "port = +7204", "port", "\"+7204\" has a sign");
	peer_line_bad(fx, "port = 0x1c24", "port", "\"0x1c24\" is not decimal");
	peer_line_bad(fx, "port = 7204x", "port", "\"7204x\" has characters after the number");
	peer_line_bad(fx, "port = 72.04", "port", "\"72.04\" is not a whole number");
	peer_line_bad(fx, "port =", "port", "\"\" is empty");
	peer_line_bad(fx, "port = \" 7204\"", "port", "\" 7204\" has blanks before the number");
}

static void test_timeouts_bounds(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;

	cfg = load_peer_line(fx, "send_timeout_ms = 0");
	assert_int_equal(cfg->peers[0].send_timeout_ms, 0);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "send_timeout_ms = 3600000");
	assert_int_equal(cfg->peers[0].send_timeout_ms, 3600000);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "connect_timeout_ms = 1");
	assert_int_equal(cfg->peers[0].connect_timeout_ms, 1);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "connect_timeout_ms = 600000");
	assert_int_equal(cfg->peers[0].connect_timeout_ms, 600000);
	rpmafs_cfg_delete(&cfg);

	peer_line_bad(fx, "send_timeout_ms = 3600001", "send_timeout_ms",
		"\"3600001\" is out of range; expected a whole number from 0 to 3600000 (milliseconds)");
	peer_line_bad(fx, "send_timeout_ms = 5s", "send_timeout_ms",
		"\"5s\" has characters after the number");
	peer_line_bad(fx, "connect_timeout_ms = 0", "connect_timeout_ms",
		"\"0\" is out of range; expected a whole number from 1 to 600000 (milliseconds)");
	peer_line_bad(fx, "connect_timeout_ms = 600001", "connect_timeout_ms",
		"\"600001\" is out of range");
}

static void test_enums(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;

	cfg = load_peer_line(fx, "mode = SYNC"); /* values are not case-sensitive */
	assert_int_equal(cfg->peers[0].mode, RPMAFS_MODE_SYNC);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "completion = On_Error");
	assert_int_equal(cfg->peers[0].completion, RPMAFS_COMPLETION_ON_ERROR);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "confirm = Receiver");
	assert_int_equal(cfg->peers[0].confirm, RPMAFS_CONFIRM_RECEIVER);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "confirm = transport");
	assert_int_equal(cfg->peers[0].confirm, RPMAFS_CONFIRM_TRANSPORT);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "close = return");
	assert_int_equal(cfg->peers[0].close, RPMAFS_CLOSE_RETURN);
	rpmafs_cfg_delete(&cfg);
	cfg = load_peer_line(fx, "type = Null");
	assert_int_equal(cfg->peers[0].type, RPMAFS_PEER_NULL);
	rpmafs_cfg_delete(&cfg);

	peer_line_bad(fx, "mode = fast", "mode", "\"fast\" is not valid; use async or sync");
	peer_line_bad(fx, "framing = line", "framing", "\"line\" is not valid; use write or file");
	peer_line_bad(fx, "completion = sometimes", "completion",
		"\"sometimes\" is not valid; use always or on_error");
	peer_line_bad(fx, "completion = on-error", "completion", "use always or on_error");
	peer_line_bad(
		fx, "confirm = nic", "confirm", "\"nic\" is not valid; use receiver or transport");
	peer_line_bad(fx, "close = later", "close", "\"later\" is not valid; use wait or return");
	peer_line_bad(fx, "type = tcp", "type", "\"tcp\" is not valid; use rdma or null");
	peer_line_bad(fx, "mode =", "mode", "\"\" is not valid; use async or sync");
}

static void test_null_peer(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg =
		load_ok(fx, "[dry]\ntype = null\n[dry2]\ntype = null\naddress = 10.1.1.1\n");

	assert_int_equal(cfg->npeers, 2);
	assert_int_equal(cfg->peers[0].type, RPMAFS_PEER_NULL);
	assert_string_equal(cfg->peers[0].address, "");
	assert_string_equal(cfg->peers[1].address, "10.1.1.1");
	rpmafs_cfg_delete(&cfg);

	/* null as the default type in [rpmafs] */
	cfg = load_ok(fx, "[rpmafs]\ntype = null\n[dry]\n");
	assert_int_equal(cfg->peers[0].type, RPMAFS_PEER_NULL);
	rpmafs_cfg_delete(&cfg);
}

static void test_missing_address(void **state)
{
	struct fx *fx = *state;
	char *err = load_bad(fx, "[alpha]\naddress = h\n\n[beta]\nport = 7205\n[gamma]\n");

	assert_int_equal(count_lines(err), 2);
	assert_problem(err, fx,
		":4: [beta] address: missing; an rdma peer needs its receiver's host name or IP address (or set type = null for a peer that sends nothing)");
	assert_problem(err, fx,
		":6: [gamma] address: missing; an rdma peer needs its receiver's host name or IP address (or set type = null for a peer that sends nothing)");
	free(err);

	/* a bad type is reported once, not also as a missing address */
	assert_one_problem(fx, "[alpha]\ntype = udp\n", ":2: [alpha] type: ");
	assert_one_problem(fx, "[rpmafs]\ntype = udp\n[alpha]\n[beta]\n", ":2: [rpmafs] type: ");
	/* a bad address is reported as bad, not also as missing */
	assert_one_problem(fx, "[alpha]\naddress = a b\n", ":2: [alpha] address: \"a b\" is not");
}

static void test_addresses(void **state)
{
	static const char *const good[] = {
		"192.168.77.2",
		"0.0.0.0",
		"::1",
		"fe80::1%v0",
		"fd00:77::2",
		"localhost",
		"rdma-node_1.lab.example",
		"host.example.",
		"h",
		"\"10.0.0.1\"",
	};
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"10.0.0.1:7204", "looks like host:port; put the port in the port key"},
		{"host:7204", "looks like host:port"},
		{"[::1]", "has brackets"},
		{"fe80::1%", "is not a valid IPv6 address"},
		{"fe80::zz", "is not a valid IPv6 address"},
		{"10.0.0.256", "is not a valid IPv4 address"},
		{"1.2.3", "is not a valid IPv4 address"},
		{"bad host", "is not a valid host name or IP address"},
		{"-host", "is not a valid host name"},
		{"host-", "is not a valid host name"},
		{"a..b", "is not a valid host name"},
		{"h\xc3\xa9", "is not a valid host name"},
		{"\"\"", "is empty"},
	};
	struct fx *fx = *state;
	char line[400];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct rpmafs_cfg *cfg;
		char *text;

		assert_true(asprintf(&text, "[p]\naddress = %s\n", good[i]) > 0);
		cfg = load_ok(fx, text);
		free(text);
		assert_string_equal(
			cfg->peers[0].address, good[i][0] == '"' ? "10.0.0.1" : good[i]);
		rpmafs_cfg_delete(&cfg);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *text;

		assert_true(asprintf(&text, "[p]\naddress = %s\n", bad[i].text) > 0);
		assert_one_problem(fx, text, ":2: [p] address: ", bad[i].why);
		free(text);
	}

	/* length: a 253-character name is fine; 256 characters is too long */
	strcpy(line, "[p]\naddress = ");
	for (int i = 0; i < 4; i++)
		strcat(line,
			"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa."); /* 62 + 1 */
	strcat(line, "b\n"); /* 253 */
	{
		struct rpmafs_cfg *cfg = load_ok(fx, line);

		assert_int_equal(strlen(cfg->peers[0].address), 253);
		rpmafs_cfg_delete(&cfg);
	}
	line[strlen(line) - 1] = '\0';
	strcat(line, "bbb\n"); /* 256 */
	assert_one_problem(fx, line, ":2: [p] address: ", "is longer than 255 characters");
}

static void test_keys_in_wrong_section(void **state)
{
	struct fx *fx = *state;

	assert_one_problem(fx, "[rpmafs]\naddress = 10.0.0.1\n[a]\naddress = h\n",
		":2: [rpmafs] address: has no default; set it in each peer's section");
	peer_line_bad(fx, "log_level = debug", "log_level",
		"is a global setting, not a peer's; put it in [rpmafs]");
}

static void test_unknown_keys(void **state)
{
	struct fx *fx = *state;
	char *err;

	peer_line_bad(fx, "adress = 10.0.0.1", "adress",
		"unknown key (did you mean address?); a peer's keys are address, port, type, mode, framing, completion, confirm, close, max_message, send_timeout_ms, connect_timeout_ms, key and protect");
	peer_line_bad(
		fx, "max_mesage = 4K", "max_mesage", "unknown key (did you mean max_message?)");
	peer_line_bad(fx, "colour = blue", "colour", "unknown key; a peer's keys are");
	peer_line_bad(fx, "max message = 4K", "max message", "unknown key");
	assert_one_problem(fx, "[rpmafs]\nlog-level = info\n[a]\naddress = h\n",
		":2: [rpmafs] log-level: unknown key (did you mean log_level?); [rpmafs] takes log_level, max_message, slots, drafts, listen, allow, listen_keys, listen_protect, inbox_format, inbox_slots, inbox_max_message, metrics, metrics_interval_ms, and the peer defaults port, type, mode, framing, completion, confirm, close, send_timeout_ms and connect_timeout_ms");
	/* a key before any section */
	err = load_bad(fx, "port = 7204\n[a]\naddress = h\n");
	assert_int_equal(count_lines(err), 1);
	assert_problem(err, fx,
		":1: port: set outside any section; put it under [rpmafs] or under a peer's [name]");
	free(err);
}

static void test_peer_names(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;
	char name64[65], text[200];

	memset(name64, 'n', 64);
	name64[64] = '\0';
	snprintf(text, sizeof(text),
		"[%s]\ntype = null\n[a-B_9]\ntype = null\n[ spaced ]\ntype = null\n[7]\ntype = null\n",
		name64);
	cfg = load_ok(fx, text);
	assert_int_equal(cfg->npeers, 4);
	assert_string_equal(cfg->peers[0].name, name64);
	assert_string_equal(cfg->peers[1].name, "a-B_9");
	assert_string_equal(cfg->peers[2].name, "spaced"); /* blanks inside the brackets go */
	assert_string_equal(cfg->peers[3].name, "7");
	rpmafs_cfg_delete(&cfg);

	snprintf(text, sizeof(text), "[%sx]\ntype = null\n", name64);
	assert_one_problem(fx, text, ":1: [nnnn",
		"x]: invalid peer name: the name is longer than 64 characters");
	assert_one_problem(fx, "[my peer]\ntype = null\n",
		":1: [my peer]: invalid peer name: a name may only hold letters, digits, '_' and '-' (it becomes the spool file's name)");
	assert_one_problem(fx, "[a.b]\ntype = null\n", ":1: [a.b]: invalid peer name");
	assert_one_problem(fx, "[a/b]\ntype = null\n", ":1: [a/b]: invalid peer name");
	assert_one_problem(fx, "[a:b]\ntype = null\n", ":1: [a:b]: invalid peer name");
	assert_one_problem(fx, "[..]\ntype = null\n", ":1: [..]: invalid peer name");
	assert_one_problem(fx, "[]\ntype = null\n", ":1: []: invalid peer name: the name is empty");
	assert_one_problem(
		fx, "[  ]\ntype = null\n", ":1: []: invalid peer name: the name is empty");
	assert_one_problem(
		fx, "[caf\xc3\xa9]\ntype = null\n", ":1: [caf\\xc3\\xa9]: invalid peer name");
}

static void test_case_handling(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;
	char *err;

	/* peer names keep their case: they are file names */
	cfg = load_ok(fx,
		"[RPMAFS]\nLOG_LEVEL = info\nSlots = 4\n[Alpha]\nAddress = h\nPORT = 7300\n[beta]\ntype = null\n");
	assert_int_equal(cfg->log_level, LOG_INFO);
	assert_int_equal(cfg->slots, 4);
	assert_int_equal(cfg->npeers, 2); /* [RPMAFS] is the global section, not a peer */
	assert_string_equal(cfg->peers[0].name, "Alpha");
	assert_int_equal(cfg->peers[0].port, 7300);
	assert_ptr_equal(rpmafs_cfg_find_peer(cfg, "Alpha"), &cfg->peers[0]);
	assert_null(rpmafs_cfg_find_peer(cfg, "alpha"));
	assert_null(rpmafs_cfg_find_peer(cfg, "ALPHA"));
	assert_ptr_equal(rpmafs_cfg_find_peer(cfg, "beta"), &cfg->peers[1]);
	rpmafs_cfg_delete(&cfg);

	/* two sections that differ only in case are one section to iniparser: refused */
	err = load_bad(fx, "[alpha]\naddress = h\n[Alpha]\naddress = h2\n");
	assert_int_equal(count_lines(err), 2);
	assert_problem(err, fx,
		":3: [Alpha]: duplicate section: [alpha] at line 1 is the same section, because section names are not case-sensitive");
	assert_problem(err, fx,
		":4: [alpha] address: duplicate key: already set at line 2; each key may appear only once in a section");
	free(err);
	err = load_bad(fx, "[RpmaFS]\n[a]\naddress = h\n[rpmafs]\n");
	assert_problem(err, fx,
		":4: [rpmafs]: duplicate section: [RpmaFS] at line 1 is the same section, because section names are not case-sensitive");
	free(err);
}

static void test_duplicates(void **state)
{
	struct fx *fx = *state;
	char *err;

	err = load_bad(fx, "[alpha]\n"		  /* 1 */
			   "address = 10.0.0.1\n" /* 2 */
			   "[beta]\n"		  /* 3 */
			   "address = 10.0.0.2\n" /* 4 */
			   "[alpha]\n"		  /* 5 */
			   "port = 7300\n");	  /* 6 */
	assert_int_equal(count_lines(err), 1);
	assert_problem(err, fx,
		":5: [alpha]: duplicate section: already defined at line 1; each section may appear only once");
	free(err);

	err = load_bad(fx, "[alpha]\naddress = 10.0.0.1\nport = 1\n\nport = 2\nPort = 3\n");
	assert_int_equal(count_lines(err), 2);
	assert_problem(err, fx,
		":5: [alpha] port: duplicate key: already set at line 3; each key may appear only once in a section");
	assert_problem(err, fx,
		":6: [alpha] port: duplicate key: already set at line 5 (key names are not case-sensitive); each key may appear only once in a section");
	free(err);

	/* a key repeated through a repeated section is one problem, the section's */
	err = load_bad(fx, "[alpha]\naddress = a\n[alpha]\naddress = b\n");
	assert_problem(err, fx,
		":3: [alpha]: duplicate section: already defined at line 1; each section may appear only once");
	assert_problem(err, fx,
		":4: [alpha] address: duplicate key: already set at line 2; each key may appear only once in a section");
	free(err);

	/* duplicate [rpmafs] */
	err = load_bad(fx, "[rpmafs]\nslots = 4\n[a]\naddress = h\n[rpmafs]\nlog_level = info\n");
	assert_int_equal(count_lines(err), 1);
	assert_problem(err, fx,
		":5: [rpmafs]: duplicate section: already defined at line 1; each section may appear only once");
	free(err);
}

static void test_no_peers(void **state)
{
	static const char *const texts[] = {
		"",
		"\n\n   \n",
		"# just a comment\n; and another\n",
		"[rpmafs]\nlog_level = info\n",
		"[RPMAFS]\n",
	};
	struct fx *fx = *state;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char *err = load_bad(fx, texts[i]);
		char want[512];

		snprintf(want, sizeof(want),
			"rpmafs: %s: no peers: add a section such as [alpha] with address = "
			"192.168.77.2, or listen = ADDR in [rpmafs] for a mount that only receives",
			fx->path);
		assert_string_equal(err, want);
		free(err);
	}
}

static void test_unreadable(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg = NULL;
	char *err = NULL, want[256], missing[160];

	snprintf(missing, sizeof(missing), "%s/missing.ini", fx->dir);
	assert_int_equal(rpmafs_cfg_load(missing, &cfg, &err), -1);
	assert_null(cfg);
	snprintf(want, sizeof(want), "rpmafs: %s: cannot open: No such file or directory", missing);
	assert_string_equal(err, want);
	free(err);

	assert_int_equal(rpmafs_cfg_load(fx->dir, &cfg, &err), -1);
	snprintf(want, sizeof(want), "rpmafs: %s: cannot read: Is a directory", fx->dir);
	assert_string_equal(err, want);
	free(err);

	write_cfg(fx, "[a]\naddress = h\n");
	assert_int_equal(chmod(fx->path, 0), 0);
	snprintf(want, sizeof(want), "rpmafs: %s: cannot open: Permission denied", fx->path);
	if (geteuid() != 0) {
		assert_int_equal(rpmafs_cfg_load(fx->path, &cfg, &err), -1);
		assert_string_equal(err, want);
		free(err);
		return;
	}
	/* root reads anything: load as nobody, in a child, and bring the message back */
	{
		char got[256] = "";
		int fds[2];
		pid_t pid;
		int status;
		ssize_t n;

		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			if (setgid(65534) || setuid(65534))
				_exit(3);
			if (rpmafs_cfg_load(fx->path, &cfg, &err) == 0 || !err)
				_exit(4);
			n = write(fds[1], err, strlen(err));
			free(err);
			_exit(n < 0 ? 5 : 0);
		}
		close(fds[1]);
		n = read(fds[0], got, sizeof(got) - 1);
		close(fds[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_true(n > 0);
		assert_string_equal(got, want);
	}
}

static void test_too_large(void **state)
{
	struct fx *fx = *state;
	size_t len = RPMAFS_CFG_FILE_MAX + 1;
	char *big = malloc(len);
	struct rpmafs_cfg *cfg = NULL;
	char *err = NULL, want[256];

	assert_non_null(big);
	memset(big, '#', len);
	write_bytes(fx->path, big, len);
	free(big);
	assert_int_equal(rpmafs_cfg_load(fx->path, &cfg, &err), -1);
	snprintf(want, sizeof(want),
		"rpmafs: %s: is larger than 1MiB (1048576 bytes); this is not an rpmafs config",
		fx->path);
	assert_string_equal(err, want);
	free(err);
}

static void test_syntax_errors(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;
	char *err, text[CFG_LINE_MAX + 64];

	assert_one_problem(fx, "[alpha]\naddress = h\njunk\n",
		":3: [alpha]: syntax error: not a key = value line, a [section] header or a comment (# or ;): junk");
	assert_one_problem(fx, "[alpha]\naddress = h\n= 5\n",
		":3: [alpha]: syntax error: no key before '=': = 5");
	assert_one_problem(fx, "[alpha]\naddress = \"h\n",
		":2: [alpha]: unterminated quote (close it, or leave the quotes out): address = \"h");
	assert_one_problem(fx, "[alpha]\naddress = 'h\n", ":2: [alpha]: unterminated quote");
	assert_one_problem(fx, "[alpha]\naddress = \"\n", ":2: [alpha]: unterminated quote");
	assert_one_problem(fx, "[alpha]\naddress = \"h\" x\n",
		":2: [alpha]: text after the closing quote (start a comment with ';' or '#'): address = \"h\" x");
	assert_one_problem(
		fx, "[alpha]\naddress = \"\" x\n", ":2: [alpha]: text after the closing quote");
	/* iniparser would join line 3 to line 2 */
	assert_one_problem(fx, "[alpha]\naddress = h \\\nport = 1\n",
		":2: [alpha]: line ends with a backslash, which iniparser reads as \"continued on the next line\"; rpmafs does not accept continued lines: address = h \\");
	/* ... even to a comment, which would swallow the next line */
	assert_one_problem(
		fx, "[alpha]\n# C:\\  \naddress = h\n", ":2: [alpha]: line ends with a backslash");

	/* section headers; the keys after a refused one are not checked */
	assert_one_problem(fx, "[alpha\naddress = h\nbogus = 1\n",
		":1: syntax error: a section header is [name] alone on its line: [alpha");
	assert_one_problem(fx, "[alpha] ; the lab\naddress = h\n",
		":1: syntax error: a section header is [name] alone on its line: [alpha] ; the lab");
	assert_one_problem(fx, "[a]b]\naddress = h\n",
		":1: syntax error: a section header is [name] alone on its line: [a]b]");
	assert_one_problem(fx, "[[a]]\naddress = h\n", ":1: syntax error: a section header");
	assert_one_problem(fx, "[\naddress = h\n", ":1: syntax error: a section header");

	/* control characters are shown escaped */
	assert_one_problem(fx, "[alpha]\naddress = h\n\x01junk\n",
		":3: [alpha]: syntax error: not a key = value line, a [section] header or a comment (# or ;): \\x01junk");

	/* line length: 1000 characters is fine, 1001 is not */
	memset(text, 0, sizeof(text));
	strcpy(text, "[alpha]\naddress = h\n#");
	memset(text + strlen(text), 'x', CFG_LINE_MAX - 1);
	strcat(text, "\n");
	cfg = load_ok(fx, text);
	rpmafs_cfg_delete(&cfg);
	text[strlen(text) - 1] = 'x';
	strcat(text, "\n");
	assert_one_problem(
		fx, text, ":3: [alpha]: line is 1001 characters long; the limit is 1000");

	/* key names: 64 characters at most */
	strcpy(text, "[alpha]\naddress = h\n");
	memset(text + strlen(text), 'k', CFG_KEY_NAME_MAX + 1);
	text[strlen("[alpha]\naddress = h\n") + CFG_KEY_NAME_MAX + 1] = '\0';
	strcat(text, " = 1\n");
	assert_one_problem(fx, text, ":3: [alpha]: key name is longer than 64 characters: kkkk");

	/* a NUL byte: not a text file */
	write_bytes(fx->path, "[alpha]\naddress = h\nport = 1\0\n", 30);
	cfg = NULL;
	err = NULL;
	assert_int_equal(rpmafs_cfg_load(fx->path, &cfg, &err), -1);
	assert_problem(err, fx, ":3: contains a NUL byte; this is not a text file");
	assert_int_equal(count_lines(err), 1);
	free(err);

	/* several at once, each on its line */
	err = load_bad(fx, "[alpha]\naddress = h\njunk\nmore junk\n[beta\n");
	assert_int_equal(count_lines(err), 3);
	assert_problem(err, fx,
		":3: [alpha]: syntax error: not a key = value line, a [section] header or a comment (# or ;): junk");
	assert_problem(err, fx,
		":4: [alpha]: syntax error: not a key = value line, a [section] header or a comment (# or ;): more junk");
	assert_problem(
		err, fx, ":5: syntax error: a section header is [name] alone on its line: [beta");
	free(err);
}

static void test_quotes_and_comments(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg = load_ok(fx, "# comment\r\n"
					     "; another comment\r\n"
					     "   # indented comment\n"
					     "\t[alpha]   \r\n"
					     "address = \"10.0.0.1\"   ; quoted\n"
					     "  port=7300#no space before the comment\n"
					     "mode\t=\tsync\t\n"
					     "completion = 'on_error' # single quotes\n"
					     "[beta]\n"
					     "address = beta.lab ; comment\n"
					     "max_message = \"4K\"\n");

	assert_int_equal(cfg->npeers, 2);
	assert_string_equal(cfg->peers[0].name, "alpha");
	assert_string_equal(cfg->peers[0].address, "10.0.0.1");
	assert_int_equal(cfg->peers[0].port, 7300);
	assert_int_equal(cfg->peers[0].mode, RPMAFS_MODE_SYNC);
	assert_int_equal(cfg->peers[0].completion, RPMAFS_COMPLETION_ON_ERROR);
	assert_string_equal(cfg->peers[1].address, "beta.lab");
	assert_int_equal(cfg->peers[1].max_message, 4096);
	rpmafs_cfg_delete(&cfg);

	/* no final newline */
	cfg = load_ok(fx, "[alpha]\naddress = h");
	assert_string_equal(cfg->peers[0].address, "h");
	rpmafs_cfg_delete(&cfg);
}

static void test_many_problems(void **state)
{
	struct fx *fx = *state;
	char *text = NULL, *err;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fprintf(f, "[alpha]\naddress = h\n");
	for (int i = 0; i < 70; i++)
		fprintf(f, "bogus%d = 1\n", i);
	assert_int_equal(fclose(f), 0);
	err = load_bad(fx, text);
	free(text);
	assert_int_equal(count_lines(err), 51);
	assert_problem(err, fx,
		":3: [alpha] bogus0: unknown key; a peer's keys are address, port, type, mode, framing, completion, confirm, close, max_message, send_timeout_ms, connect_timeout_ms, key and protect");
	assert_problem(err, fx,
		":52: [alpha] bogus49: unknown key; a peer's keys are address, port, type, mode, framing, completion, confirm, close, max_message, send_timeout_ms, connect_timeout_ms, key and protect");
	assert_problem(err, fx, ": 20 more problems not shown");
	assert_null(strstr(err, "bogus50"));
	free(err);
}

/* Problems come in line order, whichever check found them. */
static void test_problem_order(void **state)
{
	struct fx *fx = *state;
	char *err = load_bad(fx, "[alpha]\n"	  /* 1: address missing */
				 "port = 0\n"	  /* 2: value */
				 "colour = red\n" /* 3: unknown key */
				 "junk\n"	  /* 4: syntax */
				 "[rpmafs]\n"	  /* 5 */
				 "slots = 0\n");  /* 6: value */
	const char *l1 = strstr(err, ":3: [alpha] colour");
	const char *l2 = strstr(err, ":4: [alpha]: syntax error");

	assert_non_null(l1);
	assert_non_null(l2);
	assert_true(l1 < l2);
	/* with a refused line, values are not looked at (iniparser would not load it) */
	assert_null(strstr(err, "] port:"));
	assert_int_equal(count_lines(err), 2);
	free(err);

	err = load_bad(fx, "[alpha]\n"	    /* 1: address missing */
			   "port = 0\n"	    /* 2 */
			   "colour = red\n" /* 3 */
			   "[rpmafs]\n"	    /* 4 */
			   "slots = 0\n");  /* 5 */
	assert_int_equal(count_lines(err), 4);
	l1 = strstr(err, ":1: [alpha] address: missing");
	l2 = strstr(err, ":2: [alpha] port:");
	assert_non_null(l1);
	assert_non_null(l2);
	assert_true(l1 < l2);
	assert_true(l2 < strstr(err, ":3: [alpha] colour:"));
	assert_true(strstr(err, ":3: [alpha] colour:") < strstr(err, ":5: [rpmafs] slots:"));
	free(err);
}

static void test_peers_in_file_order(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg = load_ok(
		fx, "[zulu]\ntype = null\n[rpmafs]\n[alpha]\ntype = null\n[mike]\ntype = null\n");

	assert_int_equal(cfg->npeers, 3);
	assert_string_equal(cfg->peers[0].name, "zulu");
	assert_string_equal(cfg->peers[1].name, "alpha");
	assert_string_equal(cfg->peers[2].name, "mike");
	assert_ptr_equal(rpmafs_cfg_find_peer(cfg, "mike"), &cfg->peers[2]);
	assert_null(rpmafs_cfg_find_peer(cfg, "rpmafs"));
	assert_null(rpmafs_cfg_find_peer(cfg, "mik"));
	assert_null(rpmafs_cfg_find_peer(cfg, ""));
	assert_null(rpmafs_cfg_find_peer(cfg, NULL));
	assert_null(rpmafs_cfg_find_peer(NULL, "mike"));
	rpmafs_cfg_delete(&cfg);
}

static void test_bad_args(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg = NULL;
	char *err = (char *)"untouched";

	(void)fx;
	errno = 0;
	assert_int_equal(rpmafs_cfg_load(NULL, &cfg, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(err);
	errno = 0;
	assert_int_equal(rpmafs_cfg_load(fx->path, NULL, &err), -1);
	assert_int_equal(errno, EINVAL);

	/* err may be NULL: the load still fails, and nothing leaks */
	write_cfg(fx, "[alpha]\nport = 0\n");
	assert_int_equal(rpmafs_cfg_load(fx->path, &cfg, NULL), -1);
	assert_null(cfg);
	/* and may be NULL on success */
	write_cfg(fx, "[alpha]\ntype = null\n");
	assert_int_equal(rpmafs_cfg_load(fx->path, &cfg, NULL), 0);
	assert_non_null(cfg);

	rpmafs_cfg_delete(&cfg);
	assert_null(cfg);
	rpmafs_cfg_delete(&cfg); /* NULL: nothing to do */
	rpmafs_cfg_delete(NULL);
}

/* stderr while fn runs, as a malloc'd string */
static char *stderr_of(void (*fn)(struct fx *), struct fx *fx)
{
	char path[160], *out;
	int saved = dup(2), fd;
	struct stat st;

	snprintf(path, sizeof(path), "%s/stderr", fx->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, 2), 2);
	close(fd);
	fn(fx);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_int_equal(stat(path, &st), 0);
	out = calloc(1, (size_t)st.st_size + 1);
	assert_non_null(out);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, out, (size_t)st.st_size), st.st_size);
	close(fd);
	return out;
}

static void load_bad_quietly(struct fx *fx)
{
	free(load_bad(fx, "[alpha]\nfoo\n= 1\nport = 0\n[a b]\n"));
}

/* iniparser prints its errors on stderr by default; the loader must not */
static void test_nothing_on_stderr(void **state)
{
	struct fx *fx = *state;
	char *out = stderr_of(load_bad_quietly, fx);

	assert_string_equal(out, "");
	free(out);
}

static void iniparser_direct(struct fx *fx)
{
	struct cfg_report rep;
	dictionary *d = (dictionary *)1;
	char *text;

	write_cfg(fx, "[alpha]\nthis is not ini\n");
	cfg_report_init(&rep, "shown.ini");
	assert_int_equal(cfg_ini_load_path(fx->path, "shown.ini", &d, &rep), -1);
	assert_ptr_equal(d, (dictionary *)1);
	assert_int_equal(rep.count, 1);
	text = cfg_report_take(&rep);
	assert_non_null(text);
	/* iniparser's own words, its path replaced by the file's name, on one line */
	assert_string_equal(text,
		"rpmafs: shown.ini: iniparser: syntax error in shown.ini (2): -> this is not ini");
	free(text);
}

/* What iniparser says goes into the report, not to stderr. */
static void test_iniparser_messages_captured(void **state)
{
	struct fx *fx = *state;
	char *out = stderr_of(iniparser_direct, fx);

	assert_string_equal(out, "");
	free(out);
}

/*
 * The guard against iniparser and the scan disagreeing really fires. It
 * compares sections and keys: values are iniparser's alone, the scan does
 * not read them.
 */
static void test_ini_disagreement_detected(void **state)
{
	static const char *const scanned[] = {
		"[a]\nj = 2\n",	       /* key name differs */
		"[a]\nk = 2\nj = 3\n", /* key count differs */
		"[a]\n[b]\nk = 2\n",   /* section count differs */
		"[c]\nk = 2\n",	       /* section name differs */
	};
	struct fx *fx = *state;

	write_cfg(fx, "[a]\nk = 2\n");
	for (size_t i = 0; i < sizeof(scanned) / sizeof(scanned[0]); i++) {
		struct cfg_report rep;
		struct cfg_scan scan;
		dictionary *d = NULL;
		char *text;

		cfg_report_init(&rep, "f.ini");
		assert_int_equal(cfg_scan(scanned[i], strlen(scanned[i]), &scan, &rep), 0);
		assert_int_equal(rep.count, 0);
		assert_int_equal(cfg_ini_load_path(fx->path, "f.ini", &d, &rep), 0);
		assert_int_equal(cfg_ini_agrees(d, &scan, &rep), -1);
		text = cfg_report_take(&rep);
		assert_non_null(strstr(text,
			"rpmafs: f.ini: internal error: iniparser read this file differently"));
		free(text);
		iniparser_freedict(d);
		cfg_scan_fini(&scan);
	}
}

/* What each kind of line is, and where its name is; values are not read. */
static void test_line_kinds(void **state)
{
	static const struct {
		const char *text;
		enum cfg_line_kind kind;
		const char *name; /* SECTION, KEY */
		const char *why;  /* REFUSED, BAD_HEADER: the start of the reason */
	} cases[] = {
		{"", CFG_LINE_NOTHING, NULL, NULL},
		{" \t\r", CFG_LINE_NOTHING, NULL, NULL},
		{"  # comment = [x]", CFG_LINE_NOTHING, NULL, NULL},
		{"; comment", CFG_LINE_NOTHING, NULL, NULL},
		{"[alpha]", CFG_LINE_SECTION, "alpha", NULL},
		{"\t[ Al pha ]  ", CFG_LINE_SECTION, "Al pha", NULL},
		{"[]", CFG_LINE_SECTION, "", NULL},
		{"[", CFG_LINE_BAD_HEADER, NULL, "syntax error: a section header"},
		{"[alpha", CFG_LINE_BAD_HEADER, NULL, "syntax error: a section header"},
		{"[a]b]", CFG_LINE_BAD_HEADER, NULL, "syntax error: a section header"},
		{"[a] ; c", CFG_LINE_BAD_HEADER, NULL, "syntax error: a section header"},
		{"Port = 7", CFG_LINE_KEY, "Port", NULL},
		{"  k\t=", CFG_LINE_KEY, "k", NULL},
		{"k = \"a;b\" ; c", CFG_LINE_KEY, "k", NULL},
		{"k = 'a' # c", CFG_LINE_KEY, "k", NULL},
		{"k = a \"b", CFG_LINE_KEY, "k", NULL}, /* a quote inside an unquoted value */
		{"k == v", CFG_LINE_KEY, "k", NULL},
		{"junk", CFG_LINE_REFUSED, NULL, "syntax error: not a key = value line"},
		{" = 5", CFG_LINE_REFUSED, NULL, "syntax error: no key before '='"},
		{"k = \"v", CFG_LINE_REFUSED, NULL, "unterminated quote"},
		{"k = \"v\" x", CFG_LINE_REFUSED, NULL, "text after the closing quote"},
		{"k = v \\", CFG_LINE_REFUSED, NULL, "line ends with a backslash"},
		{"# c:\\", CFG_LINE_REFUSED, NULL, "line ends with a backslash"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *text = cases[i].text;
		struct cfg_line l;

		cfg_line_read(text, strlen(text), &l);
		if (l.kind != cases[i].kind)
			fail_msg("\"%s\": kind %d, want %d", text, l.kind, cases[i].kind);
		if (cases[i].name) {
			assert_int_equal(l.name_len, strlen(cases[i].name));
			assert_memory_equal(l.name, cases[i].name, l.name_len);
		}
		if (cases[i].why) {
			assert_non_null(l.why);
			if (strncmp(l.why, cases[i].why, strlen(cases[i].why)) != 0)
				fail_msg("\"%s\": %s", text, l.why);
		} else {
			assert_null(l.why);
		}
		/* the text for messages: the line without the blanks around it */
		assert_true(l.text >= text && l.text + l.text_len <= text + strlen(text));
		assert_true(l.text_len == 0 || (l.text[0] != ' ' && l.text[0] != '\t'));
	}
}

/* The scan locates sections and keys: names as written, lines, lower-case lookups. */
static void test_scan_locations(void **state)
{
	static const char text[] = "# a comment\n"	 /* 1 */
				   "[Alpha]\n"		 /* 2 */
				   "Address = h\n"	 /* 3 */
				   "\n"			 /* 4 */
				   "[beta]\n"		 /* 5 */
				   "type = null ; dry\n" /* 6 */
				   "[alpha]\n"		 /* 7: the same section */
				   "port = 7300\n"	 /* 8 */
				   "ADDRESS = \"h2\"\n"; /* 9: the same key */
	const struct cfg_section *a, *b;
	struct cfg_report rep;
	struct cfg_scan scan;
	char *problems;

	(void)state;
	cfg_report_init(&rep, "f.ini");
	assert_int_equal(cfg_scan(text, strlen(text), &scan, &rep), 0);
	assert_true(scan.ini_safe);
	assert_int_equal(scan.nsections, 2);
	a = cfg_scan_section(&scan, "alpha");
	b = cfg_scan_section(&scan, "beta");
	assert_ptr_equal(a, &scan.sections[0]);
	assert_ptr_equal(b, &scan.sections[1]);
	assert_null(cfg_scan_section(&scan, "Alpha")); /* lookups are by iniparser's name */
	assert_string_equal(a->name, "Alpha");
	assert_string_equal(a->lname, "alpha");
	assert_int_equal(a->line, 2);
	assert_int_equal(a->nkeys, 2);
	assert_string_equal(a->keys[0].key, "address");
	assert_string_equal(a->keys[1].key, "port");
	/* a key set twice is where it was set last: iniparser keeps that value */
	assert_int_equal(cfg_scan_key_line(a, "address"), 9);
	assert_int_equal(cfg_scan_key_line(a, "port"), 8);
	assert_int_equal(cfg_scan_key_line(a, "type"), 0);
	assert_int_equal(cfg_scan_key_line(b, "type"), 6);
	assert_int_equal(rep.count, 2);
	problems = cfg_report_take(&rep);
	assert_string_equal(problems,
		"rpmafs: f.ini:7: [alpha]: duplicate section: [Alpha] at line 2 is the same section, because section names are not case-sensitive\n"
		"rpmafs: f.ini:9: [Alpha] address: duplicate key: already set at line 3 (key names are not case-sensitive); each key may appear only once in a section");
	free(problems);
	cfg_scan_fini(&scan);
}

/* Values are iniparser's, exactly: quoted blanks are kept, and checked as they are. */
static void test_values_are_iniparsers(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;

	assert_one_problem(fx, "[alpha]\naddress = h\nmode = \" sync \"\n",
		":3: [alpha] mode: \" sync \" is not valid; use async or sync");
	assert_one_problem(fx, "[alpha]\naddress = h\nmode = ''\n",
		":3: [alpha] mode: \"\" is not valid; use async or sync");
	assert_one_problem(fx, "[alpha]\naddress = h\nmode =\n",
		":3: [alpha] mode: \"\" is not valid; use async or sync");
	assert_one_problem(fx, "[alpha]\naddress = h\nport = 7 # 8\nslots = 2\n",
		":4: [alpha] slots: is a global setting, not a peer's; put it in [rpmafs]");
	cfg = load_ok(fx, "[alpha]\naddress = \"h\"\nmax_message = '4K' ; four\nport = 7 # 8\n");
	assert_string_equal(cfg->peers[0].address, "h");
	assert_int_equal(cfg->peers[0].max_message, 4096);
	assert_int_equal(cfg->peers[0].port, 7);
	rpmafs_cfg_delete(&cfg);
}

/* A section reopened later: its keys' values and lines are still found, in its name as first written. */
static void test_reopened_section_lines(void **state)
{
	struct fx *fx = *state;
	char *err = load_bad(fx, "[Alpha]\n"	 /* 1 */
				 "address = h\n" /* 2 */
				 "[beta]\n"	 /* 3 */
				 "type = null\n" /* 4 */
				 "[alpha]\n"	 /* 5 */
				 "port = 0\n"	 /* 6 */
				 "[rpmafs]\n"	 /* 7 */
				 "slots = 1\n"); /* 8 */

	assert_int_equal(count_lines(err), 3);
	assert_problem(err, fx,
		":5: [alpha]: duplicate section: [Alpha] at line 1 is the same section, because section names are not case-sensitive");
	assert_problem(err, fx,
		":6: [Alpha] port: \"0\" is out of range; expected a whole number from 1 to 65535");
	assert_problem(err, fx,
		":8: [rpmafs] slots: \"1\" is out of range; expected a whole number from 2 to 1024");
	free(err);
}

struct fifo_writer {
	const char *path;
	const char *text;
};

static void *write_fifo(void *arg)
{
	struct fifo_writer *w = arg;
	int fd = open(w->path, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, w->text, strlen(w->text)) < 0)
			perror("write");
		close(fd);
	}
	return NULL;
}

/* A pipe can be read only once: iniparser gets the bytes the scan read. */
static void test_fifo(void **state)
{
	struct fx *fx = *state;
	struct fifo_writer w = {NULL, "[alpha]\naddress = 10.0.0.9\nport = 9\n"};
	struct rpmafs_cfg *cfg = NULL;
	char path[160], *err = NULL;
	pthread_t t;

	snprintf(path, sizeof(path), "%s/fifo", fx->dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	w.path = path;
	assert_int_equal(pthread_create(&t, NULL, write_fifo, &w), 0);
	if (rpmafs_cfg_load(path, &cfg, &err) != 0)
		fail_msg("%s", err);
	pthread_join(t, NULL);
	assert_string_equal(cfg->peers[0].address, "10.0.0.9");
	assert_int_equal(cfg->peers[0].port, 9);
	rpmafs_cfg_delete(&cfg);
}

struct loader {
	const char *good, *bad;
	int failures;
};

static void *load_many(void *arg)
{
	struct loader *l = arg;

	for (int i = 0; i < 40; i++) {
		struct rpmafs_cfg *cfg = NULL;
		char *err = NULL;

		if (rpmafs_cfg_load(l->good, &cfg, &err) != 0 || cfg->peers[0].port != 7300)
			l->failures++;
		rpmafs_cfg_delete(&cfg);
		free(err);
		err = NULL;
		/* the bad file's problems, and only those, each time */
		if (rpmafs_cfg_load(l->bad, &cfg, &err) == 0 || !err ||
			!strstr(err, "syntax error") || !strstr(err, l->bad) || strchr(err, '\n'))
			l->failures++;
		free(err);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct fx *fx = *state;
	char good[160], bad[4][160];
	struct loader loaders[4];
	pthread_t t[4];

	snprintf(good, sizeof(good), "%s/good.ini", fx->dir);
	write_bytes(good, "[alpha]\naddress = h\nport = 7300\n", 32);
	for (int i = 0; i < 4; i++) {
		snprintf(bad[i], sizeof(bad[i]), "%s/bad%d.ini", fx->dir, i);
		write_bytes(bad[i], "[alpha]\naddress = h\njunk\n", 25);
		loaders[i] = (struct loader){good, bad[i], 0};
		assert_int_equal(pthread_create(&t[i], NULL, load_many, &loaders[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(loaders[i].failures, 0);
	}
}

/* tools/rpmafs.ini.example loads, with the values its comments promise. */
/* [rpmafs] listen alone is a valid mount: it only receives */
static void test_inbox_defaults_and_listen_only(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg = NULL;
	char *err = NULL;

	write_cfg(fx, "[rpmafs]\nlisten = 192.168.77.1\n");
	if (rpmafs_cfg_load(fx->path, &cfg, &err) != 0)
		fail_msg("%s", err);
	assert_int_equal(cfg->npeers, 0);
	assert_true(cfg->inbox.enabled);
	assert_string_equal(cfg->inbox.address, "192.168.77.1");
	assert_int_equal(cfg->inbox.port, 7204);
	assert_int_equal(cfg->inbox.format, RPMAFS_INBOX_LINES);
	assert_int_equal(cfg->inbox.slots, 64);
	assert_int_equal(cfg->inbox.max_message, 16384);
	assert_int_equal(cfg->inbox.nallow, 0);
	rpmafs_cfg_delete(&cfg);

	/* without listen there is no inbox */
	cfg = load_ok(fx, "[alpha]\naddress = 192.168.77.2\n");
	assert_false(cfg->inbox.enabled);
	rpmafs_cfg_delete(&cfg);
}

static void test_inbox_keys(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;

	cfg = load_ok(fx, "[rpmafs]\nlisten = host-a:7300\nallow = 192.168.77.0/24, fd00::/8 "
			  "10.1.2.3\ninbox_format = LEN\ninbox_slots = 8\n"
			  "inbox_max_message = 4KiB\n[b]\naddress = 192.168.77.2\n");
	assert_true(cfg->inbox.enabled);
	assert_string_equal(cfg->inbox.address, "host-a");
	assert_int_equal(cfg->inbox.port, 7300);
	assert_int_equal(cfg->inbox.format, RPMAFS_INBOX_LEN);
	assert_int_equal(cfg->inbox.slots, 8);
	assert_int_equal(cfg->inbox.max_message, 4096);
	assert_int_equal(cfg->inbox.nallow, 3);
	assert_string_equal(cfg->inbox.allow[0], "192.168.77.0/24");
	assert_string_equal(cfg->inbox.allow[1], "fd00::/8");
	assert_string_equal(cfg->inbox.allow[2], "10.1.2.3");
	/* the listen port is not the peers' default port */
	assert_int_equal(cfg->peers[0].port, 7204);
	rpmafs_cfg_delete(&cfg);

	cfg = load_ok(fx, "[rpmafs]\nlisten = [fd00::1]:7205\ninbox_format = raw\n"
			  "[b]\naddress = 192.168.77.2\n");
	assert_string_equal(cfg->inbox.address, "fd00::1");
	assert_int_equal(cfg->inbox.port, 7205);
	assert_int_equal(cfg->inbox.format, RPMAFS_INBOX_RAW);
	rpmafs_cfg_delete(&cfg);

	cfg = load_ok(fx, "[rpmafs]\nlisten = fd00::1\n[b]\naddress = 192.168.77.2\n");
	assert_string_equal(cfg->inbox.address, "fd00::1");
	assert_int_equal(cfg->inbox.port, 7204);
	rpmafs_cfg_delete(&cfg);
}

static void test_inbox_bad_values(void **state)
{
	struct fx *fx = *state;

	assert_one_problem(fx, "[rpmafs]\nlisten = 192.168.77.1:0\n",
		":2: [rpmafs] listen: \"0\" is out of range", "(the port after the colon)");
	assert_one_problem(
		fx, "[rpmafs]\nlisten = :7204\n", ":2: [rpmafs] listen: ", "has no address");
	assert_one_problem(fx, "[rpmafs]\nlisten = [fd00::1\n",
		":2: [rpmafs] listen: ", "is not [IPV6-ADDRESS]");
	assert_one_problem(fx, "[rpmafs]\nlisten = 10.0.0.1\nallow = 10.0.0.0/33\n",
		":3: [rpmafs] allow: \"10.0.0.0/33\"", "expected ADDR/PREFIX");
	assert_one_problem(fx, "[rpmafs]\nlisten = 10.0.0.1\nallow = , ,\n",
		":3: [rpmafs] allow: ", "is empty");
	assert_one_problem(fx,
		"[rpmafs]\nlisten = 10.0.0.1\nallow = 10.0.0.0/8\nallow = fd00::/8\n",
		":4: [rpmafs] allow: duplicate key", "list several networks in one line");
	assert_one_problem(fx, "[rpmafs]\nlisten = 10.0.0.1\ninbox_format = json\n",
		":3: [rpmafs] inbox_format: \"json\" is not valid; use lines, len or raw");
	assert_one_problem(fx, "[rpmafs]\nlisten = 10.0.0.1\ninbox_slots = 0\n",
		":3: [rpmafs] inbox_slots: \"0\" is out of range");
	assert_one_problem(fx, "[rpmafs]\nlisten = 10.0.0.1\ninbox_max_message = 2MiB\n",
		":3: [rpmafs] inbox_max_message: \"2MiB\" is over the limit");
	assert_one_problem(fx, "[rpmafs]\nlisten = 10.0.0.1\n[inbox]\naddress = 10.0.0.2\n",
		":3: [inbox]: a peer may not be called inbox");
	/* the inbox keys belong to [rpmafs] */
	assert_one_problem(fx, "[alpha]\naddress = 10.0.0.2\nlisten = 10.0.0.1\n",
		":3: [alpha] listen: is a global setting");
}

/* [rpmafs] metrics and metrics_interval_ms: the file and how often it is written */
static void test_metrics(void **state)
{
	struct fx *fx = *state;
	struct rpmafs_cfg *cfg;

	cfg = load_ok(fx, "[alpha]\naddress = 192.168.77.2\n");
	assert_string_equal(cfg->metrics, "");
	assert_int_equal(cfg->metrics_interval_ms, 10000);
	rpmafs_cfg_delete(&cfg);
	cfg = load_ok(fx, "[rpmafs]\nmetrics = /var/lib/node/rpmafs.prom\n"
			  "metrics_interval_ms = 100\n[alpha]\naddress = 192.168.77.2\n");
	assert_string_equal(cfg->metrics, "/var/lib/node/rpmafs.prom");
	assert_int_equal(cfg->metrics_interval_ms, 100);
	rpmafs_cfg_delete(&cfg);
	cfg = load_ok(fx, "[rpmafs]\nmetrics_interval_ms = 3600000\n[alpha]\naddress = 10.0.0.2\n");
	assert_int_equal(cfg->metrics_interval_ms, 3600000);
	rpmafs_cfg_delete(&cfg);

	assert_one_problem(fx, "[rpmafs]\nmetrics_interval_ms = 99\n[alpha]\naddress = 10.0.0.2\n",
		":2: [rpmafs] metrics_interval_ms: \"99\" is out of range",
		"from 100 to 3600000 (milliseconds)");
	assert_one_problem(fx,
		"[rpmafs]\nmetrics_interval_ms = 3600001\n[alpha]\naddress = 10.0.0.2\n",
		":2: [rpmafs] metrics_interval_ms: \"3600001\" is out of range");
	assert_one_problem(fx, "[rpmafs]\nmetrics_interval_ms = 1s\n[alpha]\naddress = 10.0.0.2\n",
		":2: [rpmafs] metrics_interval_ms: \"1s\"");
	assert_one_problem(fx, "[rpmafs]\nmetrics = rpmafs.prom\n[alpha]\naddress = 10.0.0.2\n",
		":2: [rpmafs] metrics: \"rpmafs.prom\" is not an absolute path");
	assert_one_problem(fx, "[rpmafs]\nmetrics = /var/lib/\n[alpha]\naddress = 10.0.0.2\n",
		":2: [rpmafs] metrics: \"/var/lib/\" names a directory");
	/* the daemon's, not a peer's */
	assert_one_problem(fx, "[alpha]\naddress = 10.0.0.2\nmetrics = /tmp/m.prom\n",
		":3: [alpha] metrics: is a global setting");
}

/* key = PATH and protect (issue 25): the key file is read at load, refused with its path */
static void write_key(
	const struct fx *fx, const char *name, size_t len, mode_t mode, char *path, size_t plen)
{
	char bytes[64];

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (char)(i * 7 + 1);
	snprintf(path, plen, "%s/%s", fx->dir, name);
	write_bytes(path, bytes, len);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_peer_key(void **state)
{
	struct fx *fx = *state;
	char key[256], loose[256], big[256], text[1024], want[1024];
	struct rpmafs_cfg *cfg;
	char *err;

	write_key(fx, "alpha.key", 32, 0600, key, sizeof(key));
	write_key(fx, "loose.key", 32, 0644, loose, sizeof(loose));
	write_key(fx, "big.key", 33, 0600, big, sizeof(big));

	/* no key: none loaded, protect mac */
	cfg = load_ok(fx, "[alpha]\naddress = 10.0.0.2\n");
	assert_null(cfg->peers[0].key);
	assert_string_equal(cfg->peers[0].key_path, "");
	rpmafs_cfg_delete(&cfg);

	/* key, default mac; a second peer without one */
	snprintf(text, sizeof(text),
		"[alpha]\naddress = 10.0.0.2\nkey = %s\n[beta]\naddress = 10.0.0.3\n", key);
	cfg = load_ok(fx, text);
	assert_non_null(cfg->peers[0].key);
	assert_string_equal(cfg->peers[0].key_path, key);
	assert_string_equal(rpmafs_key_name(cfg->peers[0].key), "alpha");
	assert_int_equal(cfg->peers[0].protect, RPMAFS_PROTECT_MAC);
	assert_null(cfg->peers[1].key);
	rpmafs_cfg_delete(&cfg);

	snprintf(text, sizeof(text), "[alpha]\naddress = 10.0.0.2\nkey = %s\nprotect = Encrypt\n",
		key);
	cfg = load_ok(fx, text);
	assert_non_null(cfg->peers[0].key);
	assert_int_equal(cfg->peers[0].protect, RPMAFS_PROTECT_ENCRYPT);
	rpmafs_cfg_delete(&cfg);
	snprintf(text, sizeof(text), "[alpha]\naddress = 10.0.0.2\nprotect = mac\nkey = %s\n", key);
	cfg = load_ok(fx, text);
	assert_int_equal(cfg->peers[0].protect, RPMAFS_PROTECT_MAC);
	rpmafs_cfg_delete(&cfg);

	/* a key file group or others may read: refused with file, line, section, key, path */
	snprintf(text, sizeof(text), "[alpha]\naddress = 10.0.0.2\nkey = %s\n", loose);
	err = load_bad(fx, text);
	snprintf(want, sizeof(want),
		":3: [alpha] key: %s: key file is readable or writable by group or others "
		"(mode 0644): chmod 600 %s",
		loose, loose);
	assert_problem(err, fx, want);
	assert_int_equal(count_lines(err), 1);
	free(err);

	snprintf(text, sizeof(text), "[alpha]\naddress = 10.0.0.2\nkey = %s\n", big);
	snprintf(want, sizeof(want), ":3: [alpha] key: %s: a key file holds 32 bytes, this one 33",
		big);
	err = load_bad(fx, text);
	assert_problem(err, fx, want);
	free(err);

	snprintf(text, sizeof(text), "[alpha]\naddress = 10.0.0.2\nkey = %s/none.key\n", fx->dir);
	err = load_bad(fx, text);
	assert_has(err, ":3: [alpha] key: ", "/none.key");
	free(err);

	snprintf(text, sizeof(text), "[alpha]\naddress = 10.0.0.2\nkey = %s\n", fx->dir);
	err = load_bad(fx, text);
	assert_has(err, ":3: [alpha] key: ", "not a regular file");
	free(err);

	/* every problem listed: two peers' bad keys, each at its line */
	snprintf(text, sizeof(text),
		"[alpha]\naddress = 10.0.0.2\nkey = %s\n[beta]\naddress = 10.0.0.3\nkey = %s\n",
		loose, big);
	err = load_bad(fx, text);
	assert_int_equal(count_lines(err), 2);
	assert_has(err, ":3: [alpha] key: ", ":6: [beta] key: ");
	free(err);

	peer_line_bad(fx, "key = alpha.key", "key", "\"alpha.key\" is not an absolute path");
	peer_line_bad(fx, "protect = sign", "protect", "\"sign\" is not valid; use mac or encrypt");
	peer_line_bad(fx, "protect = encrypt", "protect", "needs key = PATH in the same section");
	assert_one_problem(fx, "[rpmafs]\nkey = /k\n[alpha]\naddress = 10.0.0.2\n",
		":2: [rpmafs] key: has no default; set it in each peer's section (the inbox's keys: "
		"listen_keys = DIR)");
	assert_one_problem(fx, "[rpmafs]\nprotect = mac\n[alpha]\naddress = 10.0.0.2\n",
		":2: [rpmafs] protect: has no default; set it in each peer's section (the inbox's: "
		"listen_protect)");
}

/* [rpmafs] listen_keys = DIR and listen_protect (issue 25): DIR's keys read at load */
static void test_listen_keys(void **state)
{
	struct fx *fx = *state;
	char dir[256], path[300], text[1024], want[1024];
	struct rpmafs_cfg *cfg;
	char *err;
	int fd;

	snprintf(dir, sizeof(dir), "%s/keys", fx->dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_key(fx, "keys/alpha.key", 32, 0600, path, sizeof(path));
	write_key(fx, "keys/beta.key", 32, 0600, path, sizeof(path));

	/* two keys (rotation), default mac */
	snprintf(text, sizeof(text),
		"[rpmafs]\nlisten = 10.0.0.1\nlisten_keys = %s\n[alpha]\naddress = 10.0.0.2\n",
		dir);
	cfg = load_ok(fx, text);
	assert_non_null(cfg->inbox.keys);
	assert_int_equal(rpmafs_keyring_count(cfg->inbox.keys), 2);
	assert_string_equal(rpmafs_key_name(rpmafs_keyring_key(cfg->inbox.keys, 1)), "beta");
	assert_string_equal(cfg->inbox.keys_dir, dir);
	assert_int_equal(cfg->inbox.protect, RPMAFS_PROTECT_MAC);
	rpmafs_cfg_delete(&cfg);
	snprintf(text, sizeof(text),
		"[rpmafs]\nlisten = 10.0.0.1\nlisten_protect = encrypt\nlisten_keys = %s\n[alpha]\naddress = 10.0.0.2\n",
		dir);
	cfg = load_ok(fx, text);
	assert_int_equal(cfg->inbox.protect, RPMAFS_PROTECT_ENCRYPT);
	rpmafs_cfg_delete(&cfg);
	/* without listen_keys: none */
	cfg = load_ok(fx, "[rpmafs]\nlisten = 10.0.0.1\n[alpha]\naddress = 10.0.0.2\n");
	assert_null(cfg->inbox.keys);
	rpmafs_cfg_delete(&cfg);

	/* a key of DIR that group or others may read: refused with its path */
	write_key(fx, "keys/loose.key", 32, 0644, path, sizeof(path));
	snprintf(text, sizeof(text), "[rpmafs]\nlisten = 10.0.0.1\nlisten_keys = %s\n", dir);
	err = load_bad(fx, text);
	snprintf(want, sizeof(want),
		":3: [rpmafs] listen_keys: %s: key file is readable or writable by group or others "
		"(mode 0644): chmod 600 %s",
		path, path);
	assert_problem(err, fx, want);
	free(err);
	assert_int_equal(unlink(path), 0);

	/* a directory without keys */
	snprintf(path, sizeof(path), "%s/empty", fx->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	fd = open(strcat(path, "/readme"), O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(text, sizeof(text), "[rpmafs]\nlisten = 10.0.0.1\nlisten_keys = %s/empty\n",
		fx->dir);
	err = load_bad(fx, text);
	assert_has(err, ":3: [rpmafs] listen_keys: ", "no *.key file");
	free(err);

	/* what goes with it */
	snprintf(text, sizeof(text), "[rpmafs]\nlisten_keys = %s\n[alpha]\naddress = 10.0.0.2\n",
		dir);
	assert_one_problem(fx, text,
		":2: [rpmafs] listen_keys: needs listen = ADDR: the keys are the inbox's");
	assert_one_problem(fx, "[rpmafs]\nlisten = 10.0.0.1\nlisten_protect = mac\n",
		":3: [rpmafs] listen_protect: needs listen_keys = DIR");
	assert_one_problem(fx, "[rpmafs]\nlisten = 10.0.0.1\nlisten_keys = keys\n",
		":3: [rpmafs] listen_keys: \"keys\" is not an absolute path");
	snprintf(text, sizeof(text),
		"[rpmafs]\nlisten = 10.0.0.1\nlisten_keys = %s\nlisten_protect = sign\n", dir);
	assert_one_problem(
		fx, text, ":4: [rpmafs] listen_protect: \"sign\" is not valid; use mac or encrypt");
	assert_one_problem(fx, "[alpha]\naddress = 10.0.0.2\nlisten_keys = /k\n",
		":3: [alpha] listen_keys: is a global setting");
}

static void test_example_config(void **state)
{
	const char *path = getenv("RPMAFS_EXAMPLE_CONFIG");
	const struct rpmafs_peer_cfg *p;
	struct rpmafs_cfg *cfg = NULL;
	char *err = NULL;

	(void)state;
	if (!path)
		skip(); /* meson test sets it */
	if (rpmafs_cfg_load(path, &cfg, &err) != 0)
		fail_msg("%s", err);
	assert_int_equal(cfg->log_level, LOG_NOTICE);
	assert_int_equal(cfg->slots, 16);
	assert_int_equal(cfg->npeers, 4);
	p = rpmafs_cfg_find_peer(cfg, "alpha");
	assert_non_null(p);
	assert_string_equal(p->address, "192.168.77.2");
	p = rpmafs_cfg_find_peer(cfg, "beta");
	assert_non_null(p);
	assert_int_equal(p->mode, RPMAFS_MODE_SYNC);
	assert_int_equal(p->max_message, 65536);
	assert_int_equal(p->send_timeout_ms, 0);
	p = rpmafs_cfg_find_peer(cfg, "gamma");
	assert_non_null(p);
	assert_string_equal(p->address, "fe80::2%v1");
	assert_int_equal(p->completion, RPMAFS_COMPLETION_ON_ERROR);
	p = rpmafs_cfg_find_peer(cfg, "dry-run");
	assert_non_null(p);
	assert_int_equal(p->type, RPMAFS_PEER_NULL);
	rpmafs_cfg_delete(&cfg);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_minimal_defaults),
		T(test_every_peer_key),
		T(test_global_keys_and_peer_defaults),
		T(test_log_levels),
		T(test_max_message_bounds),
		T(test_error_format_exact),
		T(test_size_syntax),
		T(test_slots_bounds),
		T(test_port_bounds),
		T(test_timeouts_bounds),
		T(test_enums),
		T(test_null_peer),
		T(test_missing_address),
		T(test_addresses),
		T(test_keys_in_wrong_section),
		T(test_unknown_keys),
		T(test_peer_names),
		T(test_case_handling),
		T(test_duplicates),
		T(test_no_peers),
		T(test_unreadable),
		T(test_too_large),
		T(test_syntax_errors),
		T(test_quotes_and_comments),
		T(test_many_problems),
		T(test_problem_order),
		T(test_peers_in_file_order),
		T(test_bad_args),
		T(test_nothing_on_stderr),
		T(test_iniparser_messages_captured),
		T(test_ini_disagreement_detected),
		T(test_line_kinds),
		T(test_scan_locations),
		T(test_values_are_iniparsers),
		T(test_reopened_section_lines),
		T(test_fifo),
		T(test_threads),
		T(test_inbox_defaults_and_listen_only),
		T(test_inbox_keys),
		T(test_inbox_bad_values),
		T(test_metrics),
		T(test_peer_key),
		T(test_listen_keys),
		T(test_example_config),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
