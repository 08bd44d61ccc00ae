/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h -- the rpmafs configuration file (rpmafs.ini(5))
 *
 * An INI file read with iniparser. [rpmafs] holds the global settings and
 * the defaults for peers; every other section is a peer, and its name is
 * the name of the peer's spool file. Everything is checked before anything
 * is used: a file with any problem is rejected as a whole, with one line
 * per problem.
 *
 * Thread safety: rpmafs_cfg_load() keeps no global state of its own and may
 * run in several threads at once. iniparser 4.1 can only report errors
 * through one process-wide callback, so the first load installs one (once,
 * with pthread_once) that hands iniparser's messages to the load running in
 * the calling thread, or prints them to stderr as iniparser would when no
 * load is running. Nothing else in rpmafs uses iniparser.
 */
#ifndef RPMAFS_CONFIG_H
#define RPMAFS_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest peer (section) name; it is the spool file's name. */
#define RPMAFS_PEER_NAME_MAX 64

/* Largest message, and the default max_message. */
#define RPMAFS_CFG_MAX_MESSAGE_LIMIT (1u << 20)

#define RPMAFS_CFG_DEFAULT_PORT 7204
#define RPMAFS_CFG_DEFAULT_SLOTS 16
#define RPMAFS_CFG_SLOTS_MIN 2
#define RPMAFS_CFG_SLOTS_MAX 1024
#define RPMAFS_CFG_DEFAULT_DRAFTS 64
#define RPMAFS_CFG_DRAFTS_MAX 4096
#define RPMAFS_CFG_DEFAULT_SEND_TIMEOUT_MS 5000
#define RPMAFS_CFG_SEND_TIMEOUT_MS_MAX 3600000
#define RPMAFS_CFG_DEFAULT_CONNECT_TIMEOUT_MS 1000
#define RPMAFS_CFG_CONNECT_TIMEOUT_MS_MAX 600000

#define RPMAFS_CFG_DEFAULT_INBOX_SLOTS 64
#define RPMAFS_CFG_INBOX_SLOTS_MIN 1
#define RPMAFS_CFG_INBOX_SLOTS_MAX 4096
/*
 * The inbox's receive buffers are registered (pinned) like the send pool:
 * 64 slots x 16 KiB = 1 MiB leaves the rest of an ordinary user's 8 MiB
 * RLIMIT_MEMLOCK to the send pool (docs/design.md §13.2).
 */
#define RPMAFS_CFG_DEFAULT_INBOX_MAX_MESSAGE (16u << 10)
/* [rpmafs] metrics_interval_ms: how often the metrics file is written */
#define RPMAFS_CFG_DEFAULT_METRICS_INTERVAL_MS 10000
#define RPMAFS_CFG_METRICS_INTERVAL_MS_MIN 100
#define RPMAFS_CFG_METRICS_INTERVAL_MS_MAX 3600000
/* networks in [rpmafs] allow */
#define RPMAFS_CFG_ALLOW_MAX 64

/* The file is read whole; anything larger is not an rpmafs config. */
#define RPMAFS_CFG_FILE_MAX (1u << 20)

enum rpmafs_mode {
	RPMAFS_MODE_ASYNC, /* write returns once the message is posted */
	RPMAFS_MODE_SYNC,  /* write returns after the send's completion */
};

enum rpmafs_framing {
	RPMAFS_FRAMING_WRITE, /* each write(2) is one message */
	RPMAFS_FRAMING_FILE,  /* what one open file gets up to close(2) is one message */
};

enum rpmafs_peer_type {
	RPMAFS_PEER_RDMA, /* a real peer: RDMA CM + RC SEND */
	RPMAFS_PEER_NULL, /* completes every message without sending (dry run, benchmark floor) */
};

enum rpmafs_completion {
	RPMAFS_COMPLETION_ALWAYS,   /* RPMA_F_COMPLETION_ALWAYS for async writes */
	RPMAFS_COMPLETION_ON_ERROR, /* RPMA_F_COMPLETION_ON_ERROR for async writes */
};

enum rpmafs_confirm {
	RPMAFS_CONFIRM_AUTO,	 /* not set: receiver when the receiver offers it, else transport */
	RPMAFS_CONFIRM_RECEIVER, /* delivered = acknowledged by the receiving program */
	RPMAFS_CONFIRM_TRANSPORT, /* delivered = the RDMA completion (the receiving NIC) */
};

/* protect = (issue 25, §11.2): what the key does to every SEND on the connection */
enum rpmafs_protect {
	RPMAFS_PROTECT_MAC,	/* a tag after the payload (the default with a key) */
	RPMAFS_PROTECT_ENCRYPT, /* the payload encrypted in place, and the tag */
};

enum rpmafs_close {
	RPMAFS_CLOSE_WAIT,   /* close(2) returns once the descriptor's messages are confirmed */
	RPMAFS_CLOSE_RETURN, /* close(2) returns at once */
};

/* How `inbox` encodes each received message (rpmafs.ini(5)). */
enum rpmafs_inbox_format {
	RPMAFS_INBOX_LINES, /* rpma-recv's lines: escaped, one line per message */
	RPMAFS_INBOX_LEN,   /* a 4-byte little-endian length, then the payload (as rpma-recv) */
	RPMAFS_INBOX_RAW,   /* the payload as it came, nothing between messages */
};

/* [rpmafs] listen and what goes with it: the mount's inbox. */
struct rpmafs_inbox_cfg {
	/* listen was set: the mount accepts connections and has an inbox */
	bool enabled;
	/* the address to listen on, as written (IP literal or host name) */
	char address[256];
	/* 1 .. 65535, default 7204 */
	uint16_t port;
	/* default lines */
	enum rpmafs_inbox_format format;
	/* receive buffers posted to the shared receive queue: 1 .. 4096, default 64 */
	uint32_t slots;
	/* largest message a sender may send: 1 .. 1 MiB, default 16 KiB */
	uint32_t max_message;
	/* [rpmafs] allow, one network (ADDR[/PREFIX]) each; none: everyone may connect */
	size_t nallow;
	char allow[RPMAFS_CFG_ALLOW_MAX][64];
	/* [rpmafs] listen_keys = DIR: an absolute path; "": every sender is accepted as today */
	char keys_dir[PATH_MAX];
	/* DIR's *.key files, loaded by rpmafs_cfg_load (wiped at rpmafs_cfg_delete); NULL without */
	struct rpmafs_keyring *keys;
	/* [rpmafs] listen_protect: default mac; encrypt makes every connection encrypt */
	enum rpmafs_protect protect;
};

/* One peer: a section other than [rpmafs]. */
struct rpmafs_peer_cfg {
	/* the section name as written: the spool file's name */
	char name[RPMAFS_PEER_NAME_MAX + 1];
	/* host name or IP literal; "" for a null peer that has none */
	char address[256];
	/* 1 .. 65535, default 7204 */
	uint16_t port;
	/* default rdma */
	enum rpmafs_peer_type type;
	/* default async */
	enum rpmafs_mode mode;
	/* default write */
	enum rpmafs_framing framing;
	/* default always */
	enum rpmafs_completion completion;
	/* default auto (the key not given) */
	enum rpmafs_confirm confirm;
	/* default wait */
	enum rpmafs_close close;
	/* 1 .. 1 MiB, default [rpmafs] max_message */
	uint32_t max_message;
	/* 0 .. 3600000, default 5000; 0: writes fail at once while disconnected */
	uint32_t send_timeout_ms;
	/* 1 .. 600000, default 1000 */
	uint32_t connect_timeout_ms;
	/* key = PATH: an absolute path; "": no key (the peer is sent to as today) */
	char key_path[PATH_MAX];
	/* the key file's contents, loaded by rpmafs_cfg_load (wiped at rpmafs_cfg_delete); NULL without key */
	struct rpmafs_key *key;
	/* default mac; only with key */
	enum rpmafs_protect protect;
};

struct rpmafs_cfg {
	/* the file it was loaded from */
	char *path;
	/* syslog priority LOG_ERR .. LOG_DEBUG, default LOG_NOTICE */
	int log_level;
	/* [rpmafs] max_message: 1 .. 1 MiB, default 1 MiB (also every peer's default) */
	uint32_t max_message;
	/* registered request buffers in the pool shared by all peers: 2 .. 1024, default 16 */
	uint32_t slots;
	/* slots was set in the file (else rpmafs may size the pool to RLIMIT_MEMLOCK) */
	bool slots_set;
	/* drafts (write-then-rename files) at once: 0 .. 4096, default 64; 0: none */
	uint32_t drafts;
	/* the inbox, when [rpmafs] listen is set */
	struct rpmafs_inbox_cfg inbox;
	/* [rpmafs] metrics: an absolute path; "": no metrics file */
	char metrics[PATH_MAX];
	/* [rpmafs] metrics_interval_ms: 100 .. 3600000, default 10000 */
	uint32_t metrics_interval_ms;
	/* at least 1, unless the inbox is enabled */
	size_t npeers;
	/* in file order */
	struct rpmafs_peer_cfg *peers;
};

/*
 * rpmafs_cfg_load -- read and check the config file at path; on success
 * store a new configuration in *cfg_ptr and return 0.
 *
 * On failure return -1 and leave *cfg_ptr untouched. When err is not NULL,
 * *err is set to a malloc'd text the caller frees: one line per problem, in
 * line order, separated by '\n' with no newline after the last, each one
 * of these forms:
 *
 *	rpmafs: FILE: PROBLEM				(the file as a whole)
 *	rpmafs: FILE:LINE: PROBLEM: LINE-TEXT		(a line that does not parse)
 *	rpmafs: FILE:LINE: [SECTION]: PROBLEM		(a section header)
 *	rpmafs: FILE:LINE: [SECTION] KEY: PROBLEM	(a key or its value)
 *
 * e.g. rpmafs: /etc/rpmafs.ini:12: [alpha] max_message: "2MiB" is over the
 * limit of 1MiB (1048576 bytes). At most 50 problems are listed, then a
 * line saying how many more there are. *err is NULL (and errno ENOMEM) only
 * when memory ran out; with invalid arguments it is NULL and errno EINVAL.
 */
int rpmafs_cfg_load(const char *path, struct rpmafs_cfg **cfg_ptr, char **err);

/* rpmafs_cfg_delete -- free *cfg_ptr (which may be NULL) and set it to NULL */
void rpmafs_cfg_delete(struct rpmafs_cfg **cfg_ptr);

/*
 * rpmafs_cfg_find_peer -- the peer whose spool file is called name, or
 * NULL. The match is exact (case-sensitive), like a file name lookup.
 */
const struct rpmafs_peer_cfg *rpmafs_cfg_find_peer(const struct rpmafs_cfg *cfg, const char *name);

/* rpmafs_log_level_name -- "error" .. "debug" for a syslog priority, or NULL */
const char *rpmafs_log_level_name(int log_level);

#endif /* RPMAFS_CONFIG_H */
