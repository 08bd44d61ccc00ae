// SPDX-License-Identifier: BSD-3-Clause
/*
 * writer.c -- bench-writer: what an application does with a spool file
 *
 *   bench-writer [--latency] [--sync] [--fsync] [--per-file] [--warmup N] FILE SIZE COUNT
 *
 * Opens FILE once (O_WRONLY; O_DSYNC with --sync, which makes every write
 * wait for its message's completion) and writes COUNT times SIZE bytes, one
 * write(2) per message, from one page-aligned buffer. The first --warmup N
 * writes are not timed.
 *
 *   --per-file      each message is a file of its own: open (O_WRONLY |
 *                   O_TRUNC, as cp opens), one write(2) of SIZE bytes,
 *                   close(2), whose error is fatal; what cp does for one
 *                   file, without starting a process per file. On a
 *                   file-framed spool with close = wait each close returns
 *                   once its message is confirmed (docs/design.md §4.6).
 *
 *   rate (default)  prints count size seconds msg_s mib_s; with --fsync the
 *                   time includes a final fsync(2), which returns once every
 *                   message written is confirmed delivered
 *   --latency       times each write(2) on its own and prints the median,
 *                   p99, mean, min and max in microseconds
 *
 * The same program runs against a null peer (FUSE's own cost) and against a
 * real one, so the difference is what RDMA adds.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure.h"

#define PROG "bench-writer"

static void usage(void)
{
	fprintf(stderr, "usage: " PROG
			" [--latency] [--sync] [--fsync] [--per-file] [--warmup N] FILE SIZE "
			"COUNT\n");
	exit(2);
}

static void write_one(int fd, const char *file, const char *buf, size_t size, long i)
{
	ssize_t n = write(fd, buf, size);

	if (n < 0)
		measure_die(
			PROG, "%s: write %ld of %zu bytes: %s", file, i + 1, size, strerror(errno));
	if ((size_t)n != size)
		measure_die(PROG, "%s: write %ld: %zd of %zu bytes written", file, i + 1, n, size);
}

static int open_one(const char *file, int flags)
{
	int fd = open(file, flags);

	if (fd < 0)
		measure_die(PROG, "cannot open %s: %s", file, strerror(errno));
	return fd;
}

/*
 * Message i: one write(2) to the open fd, or with fd < 0 (--per-file) a
 * file of its own, as cp makes each file it copies: open, write, close.
 */
static void message_one(int fd, const char *file, int flags, const char *buf, size_t size, long i)
{
	if (fd >= 0) {
		write_one(fd, file, buf, size, i);
		return;
	}
	fd = open_one(file, flags | O_TRUNC);
	write_one(fd, file, buf, size, i);
	if (close(fd))
		measure_die(PROG, "%s: close %ld: %s", file, i + 1, strerror(errno));
}

int main(int argc, char **argv)
{
	bool latency = false, sync = false, do_fsync = false, per_file = false;
	long warmup = 0, count;
	const char *file;
	double *samples = NULL, t0, t1;
	size_t size;
	void *buf;
	int i, fd, flags;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--latency") == 0)
			latency = true;
		else if (strcmp(argv[i], "--sync") == 0)
			sync = true;
		else if (strcmp(argv[i], "--fsync") == 0)
			do_fsync = true;
		else if (strcmp(argv[i], "--per-file") == 0)
			per_file = true;
		else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
			warmup = measure_parse_count(PROG, "--warmup", argv[++i]);
		else
			usage();
	}
	if (argc - i != 3 || (per_file && do_fsync))
		usage();
	file = argv[i];
	size = measure_parse_size(PROG, "SIZE", argv[i + 1]);
	count = measure_parse_count(PROG, "COUNT", argv[i + 2]);

	if (posix_memalign(&buf, 4096, size ? size : 1))
		measure_die(PROG, "cannot allocate %zu bytes", size);
	/* printable, so that a receiver writing lines shows something sensible */
	for (size_t k = 0; k < size; k++)
		((char *)buf)[k] = (char)('a' + k % 26);
	if (latency) {
		samples = calloc((size_t)count, sizeof(*samples));
		if (!samples)
			measure_die(PROG, "cannot allocate %ld samples", count);
	}

	flags = O_WRONLY | (sync ? O_DSYNC : 0);
	fd = per_file ? -1 : open_one(file, flags);
	for (long k = 0; k < warmup; k++)
		message_one(fd, file, flags, buf, size, k);
	if (warmup && do_fsync && fsync(fd))
		measure_die(PROG, "%s: fsync after the warm-up: %s", file, strerror(errno));

	t0 = measure_now();
	for (long k = 0; k < count; k++) {
		double w0 = latency ? measure_now() : 0;

		message_one(fd, file, flags, buf, size, warmup + k);
		if (latency)
			samples[k] = measure_now() - w0;
	}
	if (do_fsync && fsync(fd))
		measure_die(PROG, "%s: fsync: %s", file, strerror(errno));
	t1 = measure_now();
	if (!per_file && close(fd))
		measure_die(PROG, "%s: close: %s", file, strerror(errno));

	if (latency) {
		struct measure_summary s;

		measure_summarize(samples, (size_t)count, &s);
		printf("count=%ld size=%zu median_us=%.2f p99_us=%.2f mean_us=%.2f min_us=%.2f "
		       "max_us=%.2f\n",
			count, size, s.median, s.p99, s.mean, s.min, s.max);
	} else {
		double secs = t1 - t0;

		printf("count=%ld size=%zu seconds=%.6f msg_s=%.1f mib_s=%.3f\n", count, size, secs,
			(double)count / secs, (double)count * (double)size / secs / 1048576.0);
	}
	free(samples);
	free(buf);
	return 0;
}
