// SPDX-License-Identifier: BSD-3-Clause
/* options.c -- parse and check rpma-recv's command line */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "size.h"
#include "pdata.h"
#include "sessions.h"

#define PROG "rpma-recv"

static const char usage_text[] =
	"Usage: " PROG " --listen ADDR[:PORT] [OPTION]...\n"
	"Receive RDMA messages (SEND) on reliable connections and write them out.\n"
	"\n"
	"  -l, --listen ADDR[:PORT]  address of a local RDMA device to listen on\n"
	"                            (port " RECV_DEFAULT_PORT " by default; IPv6 as [ADDR]:PORT)\n"
	"  -m, --max-message SIZE    largest message accepted (default 64KiB, at most 1GiB)\n"
	"  -s, --slots N             receives kept posted, shared by all connections\n"
	"                            (default 256; with --no-srq per connection, default 64)\n"
	"      --no-srq              one receive queue per connection, not one shared\n"
	"      --max-connections N   connections open at once (default 4096)\n"
	"  -f, --format FORMAT       raw, lines, len or dir (default raw)\n"
	"  -o, --output PATH         file (or directory, for dir) instead of standard output\n"
	"      --fresh               start the output empty: truncate FILE and forget the\n"
	"                            state file (default: continue what is there)\n"
	"      --max-sessions N      sender sessions remembered for duplicates\n"
	"                            (default 4096, at most 16777216)\n"
	"      --session-ttl-ms MS   forget a session unseen for MS (default 86400000)\n"
	"  -c, --count N             exit after writing N messages in all\n"
	"      --fsync               acknowledge a message to its sender only once it is\n"
	"                            synced to disk (fdatasync; dir: each file, then the\n"
	"                            directory), not once it is written\n"
	"  -a, --allow ADDR/PREFIX   accept only peers from this network (repeatable)\n"
	"      --keys DIR            accept only senders that prove one of the keys in\n"
	"                            DIR (its *.key files, 32 bytes each, mode 0600);\n"
	"                            every message is checked (MAC) before it is written\n"
	"      --protect MODE        with --keys: mac (default) or encrypt (the payload\n"
	"                            is also hidden on the wire)\n"
	"      --metrics PATH        write the receiver's counters to PATH, in the\n"
	"                            Prometheus text format (node_exporter's textfile\n"
	"                            collector), replaced whole each time\n"
	"      --metrics-interval-ms N  how often: 100 to 3600000 (default 10000)\n"
	"  -q, --quiet               print only errors and rejected connections\n"
	"  -v, --verbose             print more about each connection\n"
	"  -h, --help                show this help and exit\n"
	"  -V, --version             show the version and exit\n"
	"\n"
	"SIZE is a number of bytes with an optional K, KiB, M, MiB, G or GiB.\n"
	"See rpma-recv(1) for the formats and the private data.\n";

/* the same sizes as rpmafs.ini: common/size.c */
int recv_parse_size(const char *text, uint64_t max, uint64_t *size)
{
	uint64_t v;

	if (rpmafs_parse_size(text, &v, NULL) || v > max)
		return -1;
	*size = v;
	return 0;
}

static int parse_port(const char *text, char port[6])
{
	unsigned long v = 0;
	size_t len = strlen(text);

	if (len == 0 || len > 5 || strspn(text, "0123456789") != len)
		return -1;
	v = strtoul(text, NULL, 10);
	if (v == 0 || v > 65535)
		return -1;
	snprintf(port, 6, "%lu", v);
	return 0;
}

int recv_parse_listen(
	const char *text, char *addr, size_t addr_size, char port[6], const char **why)
{
	const char *end, *port_text = NULL;
	size_t len;

	if (text[0] == '[') {
		end = strchr(text, ']');
		if (!end) {
			*why = "missing ']' after the IPv6 address";
			return -1;
		}
		if (end[1] == ':')
			port_text = end + 2;
		else if (end[1] != '\0') {
			*why = "expected ':PORT' after ']'";
			return -1;
		}
		text++;
	} else {
		const char *colon = strchr(text, ':');

		/* one colon separates a port; more make an IPv6 address */
		if (colon && !strchr(colon + 1, ':')) {
			end = colon;
			port_text = colon + 1;
		} else {
			end = text + strlen(text);
		}
	}

	len = (size_t)(end - text);
	if (len == 0) {
		*why = "the address is empty";
		return -1;
	}
	if (len >= addr_size) {
		*why = "the address is too long";
		return -1;
	}
	if (port_text && parse_port(port_text, port)) {
		*why = "the port must be a number from 1 to 65535";
		return -1;
	}
	memcpy(addr, text, len);
	addr[len] = '\0';
	*why = "ok";
	return 0;
}

static int bad_value(const char *option, const char *value, const char *why)
{
	fprintf(stderr, PROG ": --%s '%s': %s\n", option, value, why);
	return -1;
}

/* option_number -- a plain count from 1 to max */
static int option_number(const char *option, const char *value, uint64_t max, uint64_t *v)
{
	char *end;
	unsigned long long n;

	if (value[0] < '0' || value[0] > '9')
		return bad_value(option, value, "not a number");
	errno = 0;
	n = strtoull(value, &end, 10);
	if (*end != '\0')
		return bad_value(option, value, "not a number");
	if (n == 0 || n > max || errno == ERANGE) {
		char why[64];

		snprintf(why, sizeof(why), "must be from 1 to %llu", (unsigned long long)max);
		return bad_value(option, value, why);
	}
	*v = n;
	return 0;
}

static int apply_option(
	int opt, const char *arg, bool have_allow, bool *protect, struct recv_options *opts)
{
	const char *why;
	uint64_t v;

	switch (opt) {
	case 'l':
		strcpy(opts->port, RECV_DEFAULT_PORT); /* a later --listen starts afresh */
		if (recv_parse_listen(arg, opts->addr, sizeof(opts->addr), opts->port, &why))
			return bad_value("listen", arg, why);
		return 0;
	case 'm':
		if (recv_parse_size(arg, RPMAFS_PDATA_MAX_MESSAGE, &v) || v == 0)
			return bad_value("max-message", arg,
				"expected a size from 1 byte to 1GiB, like 4096, 64K or 1MiB");
		opts->max_message = (uint32_t)v;
		return 0;
	case 's':
		if (option_number("slots", arg, RECV_MAX_SLOTS, &v))
			return -1;
		opts->slots = (uint32_t)v;
		return 0;
	case 'S':
		opts->srq = false;
		return 0;
	case 'F':
		opts->fsync = true;
		return 0;
	case 'M':
		if (option_number("max-connections", arg, RECV_MAX_CONNS, &v))
			return -1;
		opts->max_conns = (uint32_t)v;
		return 0;
	case 'f':
		if (recv_format_parse(arg, &opts->format))
			return bad_value("format", arg, "expected raw, lines, len or dir");
		return 0;
	case 'o':
		if (!*arg)
			return bad_value("output", arg, "the path is empty");
		opts->output = arg;
		return 0;
	case 'c':
		return option_number("count", arg, UINT64_MAX, &opts->count);
	case 'R':
		opts->fresh = true;
		return 0;
	case 'X':
		if (option_number("max-sessions", arg, RPMAFS_SESSIONS_MAX_LIMIT, &v))
			return -1;
		opts->max_sessions = (unsigned)v;
		return 0;
	case 'T':
		return option_number("session-ttl-ms", arg, UINT64_MAX / 2, &opts->session_ttl_ms);
	case 'a':
		if (!have_allow) {
			fprintf(stderr, PROG
				": --allow is not available: this rpma-recv is built against a "
				"librpma that cannot tell a peer's address; build it against "
				"the project's rpma library to filter peers\n");
			return -1;
		}
		if (recv_allow_add(opts->allow, arg, &why))
			return bad_value("allow", arg, why);
		return 0;
	case 'P':
		if (!*arg)
			return bad_value("metrics", arg, "the path is empty");
		if (arg[strlen(arg) - 1] == '/')
			return bad_value("metrics", arg, "names a directory; name the file");
		opts->metrics = arg;
		return 0;
	case 'I':
		if (option_number("metrics-interval-ms", arg, RECV_METRICS_INTERVAL_MS_MAX, &v))
			return -1;
		if (v < RECV_METRICS_INTERVAL_MS_MIN)
			return bad_value("metrics-interval-ms", arg, "must be from 100 to 3600000");
		opts->metrics_interval_ms = (uint32_t)v;
		return 0;
	case 'K':
		if (!*arg)
			return bad_value("keys", arg, "the path is empty");
		opts->keys = arg;
		return 0;
	case 'E':
		if (strcmp(arg, "mac") == 0)
			opts->encrypt = false;
		else if (strcmp(arg, "encrypt") == 0)
			opts->encrypt = true;
		else
			return bad_value("protect", arg, "expected mac or encrypt");
		*protect = true;
		return 0;
	case 'q':
	case 'v':
		if (opts->verbosity != RECV_NORMAL &&
			opts->verbosity != (opt == 'q' ? RECV_QUIET : RECV_VERBOSE)) {
			fprintf(stderr, PROG ": --quiet and --verbose cannot be used together\n");
			return -1;
		}
		opts->verbosity = opt == 'q' ? RECV_QUIET : RECV_VERBOSE;
		return 0;
	default:
		return -1;
	}
}

enum recv_parse_result recv_options_parse(
	int argc, char *argv[], bool have_allow, struct recv_options *opts)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"max-message", required_argument, NULL, 'm'},
		{"slots", required_argument, NULL, 's'},
		{"no-srq", no_argument, NULL, 'S'},
		{"max-connections", required_argument, NULL, 'M'},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"count", required_argument, NULL, 'c'},
		{"fsync", no_argument, NULL, 'F'},
		{"fresh", no_argument, NULL, 'R'},
		{"max-sessions", required_argument, NULL, 'X'},
		{"session-ttl-ms", required_argument, NULL, 'T'},
		{"allow", required_argument, NULL, 'a'},
		{"metrics", required_argument, NULL, 'P'},
		{"metrics-interval-ms", required_argument, NULL, 'I'},
		{"keys", required_argument, NULL, 'K'},
		{"protect", required_argument, NULL, 'E'},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	bool protect = false;
	int opt;

	memset(opts, 0, sizeof(*opts));
	strcpy(opts->port, RECV_DEFAULT_PORT);
	opts->max_message = RECV_DEFAULT_MAX_MESSAGE;
	opts->slots = 0; /* the default depends on --no-srq */
	opts->srq = true;
	opts->max_conns = RECV_DEFAULT_MAX_CONNS;
	opts->format = RECV_FORMAT_RAW;
	opts->verbosity = RECV_NORMAL;
	opts->metrics_interval_ms = RECV_DEFAULT_METRICS_INTERVAL_MS;
	opts->max_sessions = RPMAFS_SESSIONS_MAX_DEFAULT;
	opts->session_ttl_ms = RPMAFS_SESSIONS_TTL_DEFAULT_MS;
	if (recv_allow_new(&opts->allow)) {
		fprintf(stderr, PROG ": out of memory\n");
		return RECV_PARSE_ERROR;
	}

	optind = 0; /* glibc: start over, also when parsed before (tests) */
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "l:m:s:f:o:c:a:qvhV", longopts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return RECV_PARSE_EXIT;
		}
		if (opt == 'V') {
			printf(PROG " " RPMA_RECV_VERSION "\n");
			return RECV_PARSE_EXIT;
		}
		if (opt == '?' || apply_option(opt, optarg, have_allow, &protect, opts)) {
			fprintf(stderr, "Try '" PROG " --help' for more information.\n");
			return RECV_PARSE_ERROR;
		}
	}

	if (!opts->slots)
		opts->slots = opts->srq ? RECV_DEFAULT_SRQ_SLOTS : RECV_DEFAULT_SLOTS;

	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return RECV_PARSE_ERROR;
	}
	if (!opts->addr[0]) {
		fprintf(stderr, PROG ": --listen ADDR[:PORT] is required\n");
		return RECV_PARSE_ERROR;
	}
	if (protect && !opts->keys) {
		fprintf(stderr, PROG ": --protect needs --keys DIR (it protects authenticated "
				     "connections)\n");
		return RECV_PARSE_ERROR;
	}
	if (opts->format == RECV_FORMAT_DIR && !opts->output) {
		fprintf(stderr, PROG ": --format dir needs --output DIRECTORY\n");
		return RECV_PARSE_ERROR;
	}
	if ((uint64_t)opts->max_message * opts->slots > SIZE_MAX / 2) {
		fprintf(stderr, PROG ": --slots %u of --max-message %u bytes is too much memory\n",
			opts->slots, opts->max_message);
		return RECV_PARSE_ERROR;
	}
	return RECV_PARSE_OK;
}

void recv_options_fini(struct recv_options *opts)
{
	recv_allow_delete(&opts->allow);
}
