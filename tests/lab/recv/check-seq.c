// SPDX-License-Identifier: BSD-3-Clause
/*
 * check-seq.c -- check what rpma-recv wrote against what send-seq sent
 *
 * check-seq --format raw|lines|len|dir --input PATH MODE
 *
 * MODE is either
 *   --expect ID:COUNT:SIZES ...  the output must be exactly these senders'
 *                                messages, one sender after the other, byte
 *                                for byte in the format (rebuilt here from the
 *                                format's definition, independently of
 *                                rpma-recv's code)
 * or
 *   --senders N --count C [--count-of ID:C]... [--partial ID]... [--sizes SIZES]
 *                                records of senders 0..N-1 interleaved: each
 *                                sender's C messages (--count-of: another C
 *                                for that sender) exactly once and in order,
 *                                every byte checked; a --partial sender may
 *                                stop early (it was killed)
 */

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seq.h"

#define MAX_SENDERS 65536 /* fan-in's thousands of connections */
#define MAX_EXPECT 16

enum format { RAW, LINES, LEN, DIR_ };

struct expect {
	uint32_t id;
	uint64_t count;
	size_t sizes[SEQ_MAX_SIZES];
	int nsizes;
};

static enum format fmt;
static const char *input;
static uint8_t *msg; /* one expected message */
static uint8_t *rec; /* one record read back */
static size_t cap;

static void fail(const char *f, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *f, ...)
{
	va_list ap;

	fprintf(stderr, "check-seq: FAIL: ");
	va_start(ap, f);
	vfprintf(stderr, f, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void reserve(size_t n)
{
	if (n <= cap)
		return;
	cap = n * 2 + 16;
	msg = realloc(msg, cap);
	rec = realloc(rec, cap);
	if (!msg || !rec)
		fail("out of memory");
}

/*
 * The stream formats, read one record at a time. A lines record is decoded
 * here; *trimmed tells that the encoding may have dropped a final '\n'.
 */
static int read_record(FILE *f, size_t *len, bool *trimmed)
{
	*trimmed = false;
	if (fmt == LEN) {
		uint8_t hdr[4];
		size_t n = fread(hdr, 1, 4, f);

		if (n == 0)
			return 0;
		if (n != 4)
			fail("len: truncated length prefix");
		*len = (size_t)seq_get_le(hdr, 4);
		reserve(*len);
		if (fread(rec, 1, *len, f) != *len)
			fail("len: record of %zu bytes truncated", *len);
		return 1;
	}
	/* LINES */
	size_t n = 0;
	int c = fgetc(f);

	if (c == EOF)
		return 0;
	for (; c != '\n'; c = fgetc(f)) {
		if (c == EOF)
			fail("lines: last line has no newline");
		if (c == '\\') {
			c = fgetc(f);
			if (c == 'n')
				c = '\n';
			else if (c != '\\')
				fail("lines: bad escape \\%c", c);
		}
		reserve(n + 1);
		rec[n++] = (uint8_t)c;
	}
	*len = n;
	*trimmed = true;
	return 1;
}

/* ---- exact mode: rebuild the expected bytes and compare ---- */

static void expect_bytes(
	FILE *f, const uint8_t *want, size_t n, const char *what, uint32_t id, uint64_t seq)
{
	reserve(n);
	if (fread(rec, 1, n, f) != n)
		fail("output ends early in %s of sender %u message %" PRIu64, what, id, seq);
	for (size_t i = 0; i < n; i++)
		if (rec[i] != want[i])
			fail("%s of sender %u message %" PRIu64 " differs at byte %zu: %02x, want "
			     "%02x",
				what, id, seq, i, rec[i], want[i]);
}

static void encode_and_compare(FILE *f, const uint8_t *m, size_t len, uint32_t id, uint64_t seq)
{
	uint8_t hdr[4];

	switch (fmt) {
	case RAW:
		expect_bytes(f, m, len, "payload", id, seq);
		break;
	case LEN:
		seq_put_le(hdr, len, 4);
		expect_bytes(f, hdr, 4, "length prefix", id, seq);
		expect_bytes(f, m, len, "payload", id, seq);
		break;
	case LINES: {
		/* one final '\n' dropped, '\' and '\n' escaped, '\n' appended */
		size_t body = len && m[len - 1] == '\n' ? len - 1 : len;
		uint8_t *line = malloc(body * 2 + 1);
		size_t n = 0;

		if (!line)
			fail("out of memory");
		for (size_t i = 0; i < body; i++) {
			if (m[i] == '\\' || m[i] == '\n') {
				line[n++] = '\\';
				line[n++] = m[i] == '\\' ? '\\' : 'n';
			} else {
				line[n++] = m[i];
			}
		}
		line[n++] = '\n';
		expect_bytes(f, line, n, "line", id, seq);
		free(line);
		break;
	}
	default:
		break;
	}
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the files of the dir output, sorted by name; temporary files are an error */
static char **dir_files(size_t *count)
{
	DIR *d = opendir(input);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if (!d)
		fail("cannot open directory %s: %s", input, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		/* rpma-recv's state file (tools/rpma-recv/state.h) lives there too */
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			!strcmp(de->d_name, ".rpma-recv-state"))
			continue;
		if (strlen(de->d_name) != 20 || strspn(de->d_name, "0123456789") != 20)
			fail("unexpected file in %s: '%s'", input, de->d_name);
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	*count = n;
	return names;
}

static size_t read_file(const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	size_t n = 0, got;

	snprintf(path, sizeof(path), "%s/%s", input, name);
	f = fopen(path, "rb");
	if (!f)
		fail("cannot open %s: %s", path, strerror(errno));
	do {
		reserve(n + 65536);
		got = fread(rec + n, 1, 65536, f);
		n += got;
	} while (got > 0);
	fclose(f);
	*len = n;
	return n;
}

static void check_exact(struct expect *ex, int nex)
{
	uint64_t total = 0;
	size_t nfiles = 0, fi = 0;
	char **files = NULL;
	FILE *f = NULL;

	if (fmt == DIR_)
		files = dir_files(&nfiles);
	else if (!(f = fopen(input, "rb")))
		fail("cannot open %s: %s", input, strerror(errno));

	for (int e = 0; e < nex; e++) {
		for (uint64_t seq = 0; seq < ex[e].count; seq++) {
			size_t len = ex[e].sizes[seq % (uint64_t)ex[e].nsizes], got;

			reserve(len);
			seq_fill(msg, ex[e].id, seq, len);
			if (fmt != DIR_) {
				encode_and_compare(f, msg, len, ex[e].id, seq);
			} else {
				if (fi == nfiles)
					fail("only %zu files, sender %u message %" PRIu64
					     " missing",
						nfiles, ex[e].id, seq);
				read_file(files[fi], &got);
				if (got != len || memcmp(rec, msg, len))
					fail("file %s is not sender %u message %" PRIu64
					     " (%zu bytes, want %zu)",
						files[fi], ex[e].id, seq, got, len);
				fi++;
			}
			total++;
		}
	}
	if (f) {
		if (fgetc(f) != EOF)
			fail("output has more than the %" PRIu64 " expected messages", total);
		fclose(f);
	}
	if (fmt == DIR_ && fi != nfiles)
		fail("%zu files, want %" PRIu64, nfiles, total);
	printf("check-seq: %s: %" PRIu64 " messages exactly as sent\n", input, total);
}

/* ---- interleaved mode ---- */

static uint64_t next_seq[MAX_SENDERS];
static uint64_t want_count[MAX_SENDERS];
static bool want_set[MAX_SENDERS];

static void check_record(const uint8_t *r, size_t len, bool trimmed, uint32_t nsenders,
	const size_t *sizes, int nsizes, uint64_t index)
{
	uint32_t id;
	uint64_t seq;
	size_t size;

	if (len < SEQ_HDR_LEN)
		fail("record %" PRIu64 ": %zu bytes, too short for a header", index, len);
	id = (uint32_t)seq_get_le(r, 4);
	seq = seq_get_le(r + 4, 8);
	size = (size_t)seq_get_le(r + 12, 4);
	if (id >= nsenders)
		fail("record %" PRIu64 ": sender id %u out of range", index, id);
	if (seq != next_seq[id])
		fail("record %" PRIu64 ": sender %u message %" PRIu64 ", want %" PRIu64
		     " (lost, duplicated or out of order)",
			index, id, seq, next_seq[id]);
	if (nsizes && size != sizes[seq % (uint64_t)nsizes])
		fail("record %" PRIu64 ": sender %u message %" PRIu64 " says %zu bytes, sent %zu",
			index, id, seq, size, sizes[seq % (uint64_t)nsizes]);
	/* lines drops one final '\n': accept exactly that */
	if (len != size && !(trimmed && len + 1 == size && seq_byte(id, seq, size - 1) == '\n'))
		fail("record %" PRIu64 ": sender %u message %" PRIu64 " is %zu bytes, want %zu",
			index, id, seq, len, size);
	if (!seq_body_ok(r, SEQ_HDR_LEN, len, id, seq))
		fail("record %" PRIu64 ": sender %u message %" PRIu64 " content differs", index, id,
			seq);
	next_seq[id]++;
}

static void check_interleaved(
	uint32_t nsenders, uint64_t count, const bool *partial, const size_t *sizes, int nsizes)
{
	uint64_t index = 0;
	size_t len;
	bool trimmed = false;

	if (fmt == DIR_) {
		size_t nfiles;
		char **files = dir_files(&nfiles);

		for (size_t i = 0; i < nfiles; i++) {
			read_file(files[i], &len);
			check_record(rec, len, false, nsenders, sizes, nsizes, index++);
		}
	} else if (fmt == RAW) {
		fail("raw output has no record boundaries: use --expect with one sender");
	} else {
		FILE *f = fopen(input, "rb");

		if (!f)
			fail("cannot open %s: %s", input, strerror(errno));
		while (read_record(f, &len, &trimmed))
			check_record(rec, len, trimmed, nsenders, sizes, nsizes, index++);
		fclose(f);
	}
	for (uint32_t id = 0; id < nsenders; id++) {
		uint64_t want = want_set[id] ? want_count[id] : count;

		if (next_seq[id] == want)
			continue;
		if (partial[id] && next_seq[id] < want)
			continue;
		fail("sender %u: %" PRIu64 " messages, want %" PRIu64, id, next_seq[id], want);
	}
	printf("check-seq: %s: %" PRIu64 " messages from %u senders, each exactly once and in "
	       "order",
		input, index, nsenders);
	for (uint32_t id = 0; id < nsenders; id++)
		if (partial[id])
			printf("; sender %u stopped after %" PRIu64, id, next_seq[id]);
	printf("\n");
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"input", required_argument, NULL, 'i'},
		{"expect", required_argument, NULL, 'e'},
		{"senders", required_argument, NULL, 'S'},
		{"count", required_argument, NULL, 'n'},
		{"partial", required_argument, NULL, 'P'},
		{"count-of", required_argument, NULL, 'C'},
		{"sizes", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	static struct expect ex[MAX_EXPECT];
	static bool partial[MAX_SENDERS];
	size_t sizes[SEQ_MAX_SIZES];
	int nex = 0, nsizes = 0, opt;
	uint32_t nsenders = 0;
	uint64_t count = 0;
	char *p;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			fmt = !strcmp(optarg, "raw")	 ? RAW
			      : !strcmp(optarg, "lines") ? LINES
			      : !strcmp(optarg, "len")	 ? LEN
			      : !strcmp(optarg, "dir")	 ? DIR_
							 : (fail("bad --format %s", optarg), RAW);
			break;
		case 'i':
			input = optarg;
			break;
		case 'e':
			if (nex == MAX_EXPECT)
				fail("too many --expect");
			ex[nex].id = (uint32_t)strtoul(optarg, &p, 10);
			if (*p != ':')
				fail("--expect ID:COUNT:SIZES");
			ex[nex].count = strtoull(p + 1, &p, 10);
			if (*p != ':' ||
				(ex[nex].nsizes = seq_parse_sizes(p + 1, ex[nex].sizes)) <= 0)
				fail("--expect ID:COUNT:SIZES");
			nex++;
			break;
		case 'S':
			nsenders = (uint32_t)strtoul(optarg, NULL, 10);
			if (nsenders == 0 || nsenders > MAX_SENDERS)
				fail("--senders 1..%d", MAX_SENDERS);
			break;
		case 'n':
			count = strtoull(optarg, NULL, 10);
			break;
		case 'C': {
			unsigned long id = strtoul(optarg, &p, 10);

			if (*p != ':' || id >= MAX_SENDERS)
				fail("--count-of ID:COUNT");
			want_count[id] = strtoull(p + 1, NULL, 10);
			want_set[id] = true;
			break;
		}
		case 'P':
			partial[strtoul(optarg, NULL, 10) % MAX_SENDERS] = true;
			break;
		case 's':
			nsizes = seq_parse_sizes(optarg, sizes);
			if (nsizes <= 0)
				fail("bad --sizes");
			break;
		default:
			return 2;
		}
	}
	if (!input || (nex == 0) == (nsenders == 0))
		fail("usage: check-seq --format F --input PATH (--expect ID:COUNT:SIZES... | "
		     "--senders N --count C [--partial ID]... [--sizes S])");
	if (nex)
		check_exact(ex, nex);
	else
		check_interleaved(nsenders, count, partial, sizes, nsizes);
	return 0;
}
