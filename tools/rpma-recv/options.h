/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options.h -- rpma-recv's command line
 */
#ifndef RPMA_RECV_OPTIONS_H
#define RPMA_RECV_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allow.h"
#include "output.h"

#define RECV_DEFAULT_PORT "7204"
#define RECV_DEFAULT_MAX_MESSAGE (64u << 10)
#define RECV_DEFAULT_SLOTS 64u	     /* --no-srq: receives of each connection */
#define RECV_DEFAULT_SRQ_SLOTS 256u  /* the shared receive queue's, for all connections */
#define RECV_DEFAULT_MAX_CONNS 4096u /* connections open at once */
#define RECV_MAX_CONNS 1000000u
#define RECV_MAX_SLOTS 65535u /* what the private data can advertise */
#define RECV_DEFAULT_METRICS_INTERVAL_MS 10000u
#define RECV_METRICS_INTERVAL_MS_MIN 100u
#define RECV_METRICS_INTERVAL_MS_MAX 3600000u

enum recv_verbosity { RECV_QUIET, RECV_NORMAL, RECV_VERBOSE };

struct recv_options {
	char addr[256]; /* --listen address, without brackets */
	char port[6];
	uint32_t max_message;
	uint32_t slots;	    /* with srq: in all; without: per connection */
	bool srq;	    /* one shared receive queue (default) or one per connection */
	uint32_t max_conns; /* --max-connections */
	enum recv_format format;
	const char *output; /* NULL: standard output */
	uint64_t count;	    /* 0: no limit */
	struct recv_allow *allow;
	enum recv_verbosity verbosity;
	bool fsync;		      /* --fsync: acknowledge only what is synced to disk */
	bool fresh;		      /* --fresh: truncate the output, forget the state file */
	unsigned max_sessions;	      /* --max-sessions: 1 .. RPMAFS_SESSIONS_MAX_LIMIT */
	uint64_t session_ttl_ms;      /* --session-ttl-ms */
	const char *metrics;	      /* --metrics PATH: the Prometheus text file; NULL: none */
	uint32_t metrics_interval_ms; /* --metrics-interval-ms: 100 .. 3600000 */
	const char *keys; /* --keys DIR: accept only senders that prove one; NULL: none */
	bool encrypt;	  /* --protect encrypt (only with --keys); default mac */
};

/* what recv_options_parse() found */
enum recv_parse_result {
	RECV_PARSE_OK,
	RECV_PARSE_EXIT, /* --help or --version was printed: exit 0 */
	RECV_PARSE_ERROR /* the error was printed to stderr: exit 2 */
};

/*
 * recv_options_parse -- fill *opts from argv. have_allow tells whether this
 * build can learn the peer's address (without it --allow is refused).
 * Errors are printed to stderr naming the option and value.
 */
enum recv_parse_result recv_options_parse(
	int argc, char *argv[], bool have_allow, struct recv_options *opts);

/* recv_options_fini -- free what recv_options_parse() allocated */
void recv_options_fini(struct recv_options *opts);

/*
 * recv_parse_size -- parse a size: digits with an optional binary suffix
 * K, KiB, M, MiB, G, GiB (any letter case): "64", "4K", "1MiB". Returns 0 and
 * sets *size, or -1 when the text is not a size or it exceeds max.
 */
int recv_parse_size(const char *text, uint64_t max, uint64_t *size);

/*
 * recv_parse_listen -- split "ADDR", "ADDR:PORT", "[IPV6]" or "[IPV6]:PORT"
 * (a bare IPv6 address, having several colons, has no port) into addr and
 * port; port keeps what it holds when the text names none. Returns 0, or -1
 * with *why set.
 */
int recv_parse_listen(
	const char *text, char *addr, size_t addr_size, char port[6], const char **why);

#endif /* RPMA_RECV_OPTIONS_H */
