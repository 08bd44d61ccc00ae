// SPDX-License-Identifier: BSD-3-Clause
/* keys.c -- the keys of rpmafs.ini and the values they take */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "address.h"
#include "allow.h"
#include "keys.h"
#include "size.h"

enum key_id {
	KEY_LOG_LEVEL,
	KEY_MAX_MESSAGE,
	KEY_SLOTS,
	KEY_DRAFTS,
	KEY_ADDRESS,
	KEY_PORT,
	KEY_TYPE,
	KEY_MODE,
	KEY_COMPLETION,
	KEY_SEND_TIMEOUT_MS,
	KEY_CONNECT_TIMEOUT_MS,
	KEY_CONFIRM,
	KEY_CLOSE,
	KEY_FRAMING,
	KEY_LISTEN,
	KEY_ALLOW,
	KEY_INBOX_FORMAT,
	KEY_INBOX_SLOTS,
	KEY_INBOX_MAX_MESSAGE,
	KEY_METRICS,
	KEY_METRICS_INTERVAL_MS,
	KEY_LISTEN_KEYS,
	KEY_LISTEN_PROTECT,
	KEY_KEY,
	KEY_PROTECT,
	KEY_COUNT,
};

#define IN_GLOBAL 1u
#define IN_PEER 2u

/* A key allowed in both places is, in [rpmafs], the default for every peer. */
static const struct key_def {
	const char *name;
	unsigned where;
} key_defs[KEY_COUNT] = {
	[KEY_LOG_LEVEL] = {"log_level", IN_GLOBAL},
	[KEY_MAX_MESSAGE] = {"max_message", IN_GLOBAL | IN_PEER},
	[KEY_SLOTS] = {"slots", IN_GLOBAL},
	[KEY_DRAFTS] = {"drafts", IN_GLOBAL},
	[KEY_ADDRESS] = {"address", IN_PEER},
	[KEY_PORT] = {"port", IN_GLOBAL | IN_PEER},
	[KEY_TYPE] = {"type", IN_GLOBAL | IN_PEER},
	[KEY_MODE] = {"mode", IN_GLOBAL | IN_PEER},
	[KEY_COMPLETION] = {"completion", IN_GLOBAL | IN_PEER},
	[KEY_SEND_TIMEOUT_MS] = {"send_timeout_ms", IN_GLOBAL | IN_PEER},
	[KEY_CONNECT_TIMEOUT_MS] = {"connect_timeout_ms", IN_GLOBAL | IN_PEER},
	[KEY_CONFIRM] = {"confirm", IN_GLOBAL | IN_PEER},
	[KEY_CLOSE] = {"close", IN_GLOBAL | IN_PEER},
	[KEY_FRAMING] = {"framing", IN_GLOBAL | IN_PEER},
	[KEY_LISTEN] = {"listen", IN_GLOBAL},
	[KEY_ALLOW] = {"allow", IN_GLOBAL},
	[KEY_INBOX_FORMAT] = {"inbox_format", IN_GLOBAL},
	[KEY_INBOX_SLOTS] = {"inbox_slots", IN_GLOBAL},
	[KEY_INBOX_MAX_MESSAGE] = {"inbox_max_message", IN_GLOBAL},
	[KEY_METRICS] = {"metrics", IN_GLOBAL},
	[KEY_METRICS_INTERVAL_MS] = {"metrics_interval_ms", IN_GLOBAL},
	[KEY_LISTEN_KEYS] = {"listen_keys", IN_GLOBAL},
	[KEY_LISTEN_PROTECT] = {"listen_protect", IN_GLOBAL},
	[KEY_KEY] = {"key", IN_PEER},
	[KEY_PROTECT] = {"protect", IN_PEER},
};

#define PEER_KEYS                                                                       \
	"address, port, type, mode, framing, completion, confirm, close, max_message, " \
	"send_timeout_ms, connect_timeout_ms, key and protect"
#define GLOBAL_KEYS                                                               \
	"log_level, max_message, slots, drafts, listen, allow, listen_keys, "     \
	"listen_protect, inbox_format, inbox_slots, inbox_max_message, metrics, " \
	"metrics_interval_ms, and the peer defaults port, "                       \
	"type, mode, framing, completion, confirm, close, send_timeout_ms and "   \
	"connect_timeout_ms"

struct choice {
	const char *name;
	int value;
};

static const struct choice log_levels[] = {
	{"error", LOG_ERR},
	{"warning", LOG_WARNING},
	{"notice", LOG_NOTICE},
	{"info", LOG_INFO},
	{"debug", LOG_DEBUG},
	{NULL, 0},
};

static const struct choice peer_types[] = {
	{"rdma", RPMAFS_PEER_RDMA},
	{"null", RPMAFS_PEER_NULL},
	{NULL, 0},
};

static const struct choice modes[] = {
	{"async", RPMAFS_MODE_ASYNC},
	{"sync", RPMAFS_MODE_SYNC},
	{NULL, 0},
};

static const struct choice framings[] = {
	{"write", RPMAFS_FRAMING_WRITE},
	{"file", RPMAFS_FRAMING_FILE},
	{NULL, 0},
};

static const struct choice inbox_formats[] = {
	{"lines", RPMAFS_INBOX_LINES},
	{"len", RPMAFS_INBOX_LEN},
	{"raw", RPMAFS_INBOX_RAW},
	{NULL, 0},
};

static const struct choice completions[] = {
	{"always", RPMAFS_COMPLETION_ALWAYS},
	{"on_error", RPMAFS_COMPLETION_ON_ERROR},
	{NULL, 0},
};

static const struct choice confirms[] = {
	{"receiver", RPMAFS_CONFIRM_RECEIVER},
	{"transport", RPMAFS_CONFIRM_TRANSPORT},
	{NULL, 0},
};

static const struct choice protects[] = {
	{"mac", RPMAFS_PROTECT_MAC},
	{"encrypt", RPMAFS_PROTECT_ENCRYPT},
	{NULL, 0},
};

static const struct choice closes[] = {
	{"wait", RPMAFS_CLOSE_WAIT},
	{"return", RPMAFS_CLOSE_RETURN},
	{NULL, 0},
};

const char *rpmafs_log_level_name(int log_level)
{
	for (const struct choice *c = log_levels; c->name; c++)
		if (c->value == log_level)
			return c->name;
	return NULL;
}

bool cfg_is_global(const struct cfg_section *sec)
{
	return strcmp(sec->lname, CFG_GLOBAL_SECTION) == 0;
}

static int key_lookup(const char *name)
{
	for (int i = 0; i < KEY_COUNT; i++)
		if (strcmp(key_defs[i].name, name) == 0)
			return i;
	return -1;
}

/* Edit distance between two short strings (key names are at most 64 characters). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[CFG_KEY_NAME_MAX + 1];

	if (la > CFG_KEY_NAME_MAX || lb > CFG_KEY_NAME_MAX)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* The key a typo most likely meant, among those allowed in where, or NULL. */
static const char *suggest(const char *key, unsigned where)
{
	const char *best = NULL;
	size_t best_d = 3; /* at most two edits away */

	for (int i = 0; i < KEY_COUNT; i++) {
		size_t d;

		if (!(key_defs[i].where & where))
			continue;
		d = distance(key, key_defs[i].name);
		if (d < best_d && d < strlen(key)) {
			best_d = d;
			best = key_defs[i].name;
		}
	}
	return best;
}

void cfg_check_keys(const struct cfg_scan *scan, struct cfg_report *rep)
{
	for (size_t i = 0; i < scan->nsections; i++) {
		const struct cfg_section *sec = &scan->sections[i];
		unsigned where = cfg_is_global(sec) ? IN_GLOBAL : IN_PEER;

		for (size_t j = 0; j < sec->nkeys; j++) {
			const struct cfg_key_line *e = &sec->keys[j];
			int id = key_lookup(e->key);
			const char *hint;
			char mean[CFG_KEY_NAME_MAX + 32] = "";

			if (id >= 0 && (key_defs[id].where & where))
				continue;
			/* address, key, protect: a peer's own, no default in [rpmafs] */
			if (id >= 0 && where == IN_GLOBAL) {
				cfg_problem(rep, e->line, sec->name, e->key,
					"has no default; set it in each peer's section%s",
					id == KEY_KEY ? " (the inbox's keys: listen_keys = DIR)"
					: id == KEY_PROTECT ? " (the inbox's: listen_protect)"
							    : "");
				continue;
			}
			if (id >= 0) {
				cfg_problem(rep, e->line, sec->name, e->key,
					"is a global setting, not a peer's; put it in [rpmafs]");
				continue;
			}
			hint = suggest(e->key, where);
			if (hint)
				snprintf(mean, sizeof(mean), " (did you mean %s?)", hint);
			if (where == IN_GLOBAL)
				cfg_problem(rep, e->line, sec->name, e->key,
					"unknown key%s; [rpmafs] takes " GLOBAL_KEYS, mean);
			else
				cfg_problem(rep, e->line, sec->name, e->key,
					"unknown key%s; a peer's keys are " PEER_KEYS, mean);
		}
	}
}

/* Where a value came from, for the messages about it. */
struct where {
	struct cfg_report *rep;
	const char *section;
	const char *key;
	unsigned line;
};

#define PROBLEM(w, ...) cfg_problem((w)->rep, (w)->line, (w)->section, (w)->key, __VA_ARGS__)

static int get_choice(const struct where *w, const char *v, const struct choice *choices, int *out)
{
	char q[CFG_QUOTE_MAX];
	char list[128] = "";
	size_t n = 0;

	for (const struct choice *c = choices; c->name; c++, n++) {
		if (strcasecmp(v, c->name) == 0) {
			*out = c->value;
			return 0;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";

		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", sep,
			choices[i].name);
	}
	PROBLEM(w, "%s is not valid; use %s", cfg_quote(q, v), list);
	return -1;
}

static int get_number(const struct where *w, const char *v, uint32_t min, uint32_t max,
	const char *unit, uint32_t *out)
{
	char q[CFG_QUOTE_MAX];
	const char *why;
	uint64_t n;

	if (rpmafs_parse_decimal(v, &n, &why)) {
		PROBLEM(w, "%s %s; expected a whole number from %u to %u%s", cfg_quote(q, v), why,
			min, max, unit);
		return -1;
	}
	if (n < min || n > max) {
		PROBLEM(w, "%s is out of range; expected a whole number from %u to %u%s",
			cfg_quote(q, v), min, max, unit);
		return -1;
	}
	*out = (uint32_t)n;
	return 0;
}

static int get_message_size(const struct where *w, const char *v, uint32_t *out)
{
	char q[CFG_QUOTE_MAX], limit[RPMAFS_SIZE_STR_MAX];
	const char *why;
	uint64_t n;

	rpmafs_format_size(RPMAFS_CFG_MAX_MESSAGE_LIMIT, limit, sizeof(limit));
	if (rpmafs_parse_size(v, &n, &why)) {
		PROBLEM(w, "%s %s; expected 1 to %s, written as " RPMAFS_SIZE_SYNTAX,
			cfg_quote(q, v), why, limit);
		return -1;
	}
	if (n == 0) {
		PROBLEM(w, "%s is too small; the minimum is 1 byte", cfg_quote(q, v));
		return -1;
	}
	if (n > RPMAFS_CFG_MAX_MESSAGE_LIMIT) {
		PROBLEM(w, "%s is over the limit of %s (%u bytes)", cfg_quote(q, v), limit,
			RPMAFS_CFG_MAX_MESSAGE_LIMIT);
		return -1;
	}
	*out = (uint32_t)n;
	return 0;
}

/*
 * listen = ADDR[:PORT]: an IPv4 literal or host name with an optional
 * :PORT, or an IPv6 literal in brackets ([fd00::1]:7204) or bare.
 */
static void apply_listen(const struct where *w, const char *v, struct rpmafs_inbox_cfg *in)
{
	char q[CFG_QUOTE_MAX], host[sizeof(in->address)];
	const char *colon = strrchr(v, ':'), *port = NULL, *why;
	size_t hlen = strlen(v);
	uint32_t n = RPMAFS_CFG_DEFAULT_PORT;

	if (v[0] == '[') {
		const char *end = strchr(v, ']');

		if (!end || (end[1] && end[1] != ':')) {
			PROBLEM(w, "%s is not [IPV6-ADDRESS] or [IPV6-ADDRESS]:PORT",
				cfg_quote(q, v));
			return;
		}
		v++;
		hlen = (size_t)(end - v);
		port = end[1] ? end + 2 : NULL;
	} else if (colon && strchr(v, ':') == colon) {
		/* one colon: ADDR:PORT (a bare IPv6 literal has several) */
		hlen = (size_t)(colon - v);
		port = colon + 1;
	}
	if (hlen == 0 || hlen >= sizeof(host)) {
		PROBLEM(w, "%s has no address; write ADDR or ADDR:PORT (e.g. 192.168.77.1:7204)",
			cfg_quote(q, v));
		return;
	}
	memcpy(host, v, hlen);
	host[hlen] = '\0';
	why = cfg_address_problem(host);
	if (why) {
		PROBLEM(w, "%s %s", cfg_quote(q, host), why);
		return;
	}
	if (port && get_number(w, port, 1, 65535, " (the port after the colon)", &n))
		return;
	in->enabled = true;
	snprintf(in->address, sizeof(in->address), "%s", host);
	in->port = (uint16_t)n;
}

/* allow = NET[, NET ...]: networks as rpma-recv --allow takes them */
static void apply_allow(const struct where *w, const char *v, struct rpmafs_inbox_cfg *in)
{
	char q[CFG_QUOTE_MAX], net[sizeof(in->allow[0])];
	struct recv_allow *check = NULL;
	const char *p = v;
	bool bad = false;

	if (recv_allow_new(&check)) {
		w->rep->oom = true;
		return;
	}
	while (*p) {
		size_t len;
		const char *why;

		p += strspn(p, ", \t");
		len = strcspn(p, ", \t");
		if (len == 0)
			break;
		if (len >= sizeof(net)) {
			PROBLEM(w, "a network is too long (at most %zu characters)",
				sizeof(net) - 1);
			bad = true;
			break;
		}
		memcpy(net, p, len);
		net[len] = '\0';
		p += len;
		if (recv_allow_add(check, net, &why)) {
			PROBLEM(w,
				"%s %s; expected ADDR/PREFIX such as 192.168.77.0/24 or fd00::/8",
				cfg_quote(q, net), why);
			bad = true;
			continue;
		}
		if (in->nallow == RPMAFS_CFG_ALLOW_MAX) {
			PROBLEM(w, "more than %d networks", RPMAFS_CFG_ALLOW_MAX);
			bad = true;
			break;
		}
		memcpy(in->allow[in->nallow++], net, len + 1);
	}
	if (in->nallow == 0 && !bad)
		PROBLEM(w, "is empty; list networks such as 192.168.77.0/24, or leave allow out to "
			   "let everyone connect");
	recv_allow_delete(&check);
}

/* What one peer's section said, beyond the values themselves. */
struct peer_state {
	bool address_given;
	bool type_bad;
	unsigned protect_line; /* a valid protect given, at this line; 0: not */
};

static void apply_entry(const struct where *w, int id, const char *v, struct rpmafs_cfg *cfg,
	struct rpmafs_peer_cfg *peer, bool global, struct peer_state *st)
{
	char q[CFG_QUOTE_MAX];
	const char *why;
	uint32_t n;
	int c;

	switch (id) {
	case KEY_LOG_LEVEL:
		if (get_choice(w, v, log_levels, &c) == 0)
			cfg->log_level = c;
		break;
	case KEY_SLOTS:
		if (get_number(w, v, RPMAFS_CFG_SLOTS_MIN, RPMAFS_CFG_SLOTS_MAX, "", &cfg->slots) ==
			0)
			cfg->slots_set = true;
		break;
	case KEY_DRAFTS:
		get_number(w, v, 0, RPMAFS_CFG_DRAFTS_MAX, "", &cfg->drafts);
		break;
	case KEY_MAX_MESSAGE:
		if (get_message_size(w, v, &peer->max_message) == 0 && global)
			cfg->max_message = peer->max_message;
		break;
	case KEY_ADDRESS:
		/* given, even if bad: that is reported here, not as missing */
		st->address_given = true;
		why = cfg_address_problem(v);
		if (why)
			PROBLEM(w, "%s %s", cfg_quote(q, v), why);
		else
			snprintf(peer->address, sizeof(peer->address), "%s", v);
		break;
	case KEY_PORT:
		if (get_number(w, v, 1, 65535, "", &n) == 0)
			peer->port = (uint16_t)n;
		break;
	case KEY_TYPE:
		st->type_bad = get_choice(w, v, peer_types, &c) != 0;
		if (!st->type_bad)
			peer->type = (enum rpmafs_peer_type)c;
		break;
	case KEY_MODE:
		if (get_choice(w, v, modes, &c) == 0)
			peer->mode = (enum rpmafs_mode)c;
		break;
	case KEY_FRAMING:
		if (get_choice(w, v, framings, &c) == 0)
			peer->framing = (enum rpmafs_framing)c;
		break;
	case KEY_COMPLETION:
		if (get_choice(w, v, completions, &c) == 0)
			peer->completion = (enum rpmafs_completion)c;
		break;
	case KEY_CONFIRM:
		if (get_choice(w, v, confirms, &c) == 0)
			peer->confirm = (enum rpmafs_confirm)c;
		break;
	case KEY_CLOSE:
		if (get_choice(w, v, closes, &c) == 0)
			peer->close = (enum rpmafs_close)c;
		break;
	case KEY_KEY:
		/* loaded by rpmafs_cfg_load once every value is read (config.c) */
		if (v[0] != '/')
			PROBLEM(w, "%s is not an absolute path; the daemon runs in /",
				cfg_quote(q, v));
		else if (strlen(v) >= sizeof(peer->key_path))
			PROBLEM(w, "is longer than %zu characters", sizeof(peer->key_path) - 1);
		else
			snprintf(peer->key_path, sizeof(peer->key_path), "%s", v);
		break;
	case KEY_PROTECT:
		if (get_choice(w, v, protects, &c) == 0) {
			peer->protect = (enum rpmafs_protect)c;
			st->protect_line = w->line;
		}
		break;
	case KEY_LISTEN:
		apply_listen(w, v, &cfg->inbox);
		break;
	case KEY_ALLOW:
		apply_allow(w, v, &cfg->inbox);
		break;
	case KEY_LISTEN_KEYS:
		/* loaded by rpmafs_cfg_load once every value is read (config.c) */
		if (v[0] != '/')
			PROBLEM(w, "%s is not an absolute path; the daemon runs in /",
				cfg_quote(q, v));
		else if (strlen(v) >= sizeof(cfg->inbox.keys_dir))
			PROBLEM(w, "is longer than %zu characters",
				sizeof(cfg->inbox.keys_dir) - 1);
		else
			snprintf(cfg->inbox.keys_dir, sizeof(cfg->inbox.keys_dir), "%s", v);
		break;
	case KEY_LISTEN_PROTECT:
		if (get_choice(w, v, protects, &c) == 0)
			cfg->inbox.protect = (enum rpmafs_protect)c;
		break;
	case KEY_INBOX_FORMAT:
		if (get_choice(w, v, inbox_formats, &c) == 0)
			cfg->inbox.format = (enum rpmafs_inbox_format)c;
		break;
	case KEY_INBOX_SLOTS:
		get_number(w, v, RPMAFS_CFG_INBOX_SLOTS_MIN, RPMAFS_CFG_INBOX_SLOTS_MAX, "",
			&cfg->inbox.slots);
		break;
	case KEY_INBOX_MAX_MESSAGE:
		get_message_size(w, v, &cfg->inbox.max_message);
		break;
	case KEY_METRICS:
		/* a file for node_exporter's textfile collector, and PATH.tmp beside it */
		if (v[0] != '/')
			PROBLEM(w, "%s is not an absolute path; the daemon runs in /",
				cfg_quote(q, v));
		else if (strlen(v) + sizeof(".tmp") > sizeof(cfg->metrics))
			PROBLEM(w, "is longer than %zu characters",
				sizeof(cfg->metrics) - sizeof(".tmp"));
		else if (v[strlen(v) - 1] == '/')
			PROBLEM(w,
				"%s names a directory; name the file, e.g. "
				"/var/lib/prometheus/node-exporter/rpmafs.prom",
				cfg_quote(q, v));
		else
			snprintf(cfg->metrics, sizeof(cfg->metrics), "%s", v);
		break;
	case KEY_METRICS_INTERVAL_MS:
		get_number(w, v, RPMAFS_CFG_METRICS_INTERVAL_MS_MIN,
			RPMAFS_CFG_METRICS_INTERVAL_MS_MAX, " (milliseconds)",
			&cfg->metrics_interval_ms);
		break;
	case KEY_SEND_TIMEOUT_MS:
		get_number(w, v, 0, RPMAFS_CFG_SEND_TIMEOUT_MS_MAX, " (milliseconds)",
			&peer->send_timeout_ms);
		break;
	case KEY_CONNECT_TIMEOUT_MS:
		get_number(w, v, 1, RPMAFS_CFG_CONNECT_TIMEOUT_MS_MAX, " (milliseconds)",
			&peer->connect_timeout_ms);
		break;
	}
}

/*
 * Apply what iniparser read for the section the scan located as sec, keys
 * in d's order (that of their first definition). Keys that do not belong
 * there are cfg_check_keys()'s to report.
 */
static void apply_section(const dictionary *d, const struct cfg_section *sec,
	struct rpmafs_cfg *cfg, struct rpmafs_peer_cfg *peer, bool global, struct cfg_report *rep,
	struct peer_state *st)
{
	unsigned where = global ? IN_GLOBAL : IN_PEER;
	size_t prefix = strlen(sec->lname) + 1; /* entries are "section:key" */
	int n = iniparser_getsecnkeys(d, sec->lname);
	const char **entries;

	if (n <= 0)
		return;
	entries = calloc((size_t)n, sizeof(*entries));
	if (!entries) {
		rep->oom = true;
		return;
	}
	iniparser_getseckeys(d, sec->lname, entries);
	for (int j = 0; j < n; j++) {
		const char *key = entries[j] + prefix;
		struct where w = {rep, sec->name, key, cfg_scan_key_line(sec, key)};
		int id = key_lookup(key);
		const char *v;

		if (id < 0 || !(key_defs[id].where & where))
			continue;
		v = iniparser_getstring(d, entries[j], NULL);
		if (v)
			apply_entry(&w, id, v, cfg, peer, global, st);
	}
	free(entries);
}

void cfg_apply_keys(const struct cfg_scan *scan, const dictionary *d, struct rpmafs_cfg *cfg,
	struct cfg_report *rep)
{
	struct rpmafs_peer_cfg defaults = {
		.port = RPMAFS_CFG_DEFAULT_PORT,
		.type = RPMAFS_PEER_RDMA,
		.mode = RPMAFS_MODE_ASYNC,
		.framing = RPMAFS_FRAMING_WRITE,
		.completion = RPMAFS_COMPLETION_ALWAYS,
		.confirm = RPMAFS_CONFIRM_AUTO,
		.close = RPMAFS_CLOSE_WAIT,
		.max_message = RPMAFS_CFG_MAX_MESSAGE_LIMIT,
		.send_timeout_ms = RPMAFS_CFG_DEFAULT_SEND_TIMEOUT_MS,
		.connect_timeout_ms = RPMAFS_CFG_DEFAULT_CONNECT_TIMEOUT_MS,
	};
	/* a bad type in [rpmafs] is reported once, not as a missing address in every peer */
	struct peer_state global_st = {false, false, 0};
	const struct cfg_section *global;
	int nsec = iniparser_getnsec(d);
	size_t n = 0;

	cfg->log_level = LOG_NOTICE;
	cfg->max_message = RPMAFS_CFG_MAX_MESSAGE_LIMIT;
	cfg->slots = RPMAFS_CFG_DEFAULT_SLOTS;
	cfg->drafts = RPMAFS_CFG_DEFAULT_DRAFTS;
	cfg->metrics_interval_ms = RPMAFS_CFG_DEFAULT_METRICS_INTERVAL_MS;
	cfg->inbox.port = RPMAFS_CFG_DEFAULT_PORT;
	cfg->inbox.format = RPMAFS_INBOX_LINES;
	cfg->inbox.slots = RPMAFS_CFG_DEFAULT_INBOX_SLOTS;
	cfg->inbox.max_message = RPMAFS_CFG_DEFAULT_INBOX_MAX_MESSAGE;

	/* [rpmafs] first, wherever it is: it holds the defaults of every peer */
	global = cfg_scan_section(scan, CFG_GLOBAL_SECTION);
	if (global)
		apply_section(d, global, cfg, &defaults, true, rep, &global_st);

	/* the peers in d's order, which is the file's (first headers) */
	for (int i = 0; i < nsec && n < cfg->npeers; i++) {
		const char *lname = iniparser_getsecname(d, i);
		const struct cfg_section *sec = lname ? cfg_scan_section(scan, lname) : NULL;
		struct peer_state st = global_st;
		struct rpmafs_peer_cfg *peer;

		/* a section the scan did not locate: cfg_ini_agrees() rules it out */
		if (!sec || cfg_is_global(sec))
			continue;
		peer = &cfg->peers[n++];
		*peer = defaults;
		snprintf(peer->name, sizeof(peer->name), "%s", sec->name);
		st.address_given = false;
		apply_section(d, sec, cfg, peer, false, rep, &st);
		if (st.protect_line && !peer->key_path[0] && !cfg_scan_key_line(sec, "key"))
			cfg_problem(rep, st.protect_line, sec->name, "protect",
				"needs key = PATH in the same section: protect says what the key does");
		if (!st.address_given && !st.type_bad && peer->type == RPMAFS_PEER_RDMA)
			cfg_problem(rep, sec->line, sec->name, "address",
				"missing; an rdma peer needs its receiver's host name or IP address (or set type = null for a peer that sends nothing)");
	}
}
