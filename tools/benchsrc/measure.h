/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * measure.h -- what the bench programs share: the clock, latency summaries,
 * and dying with a message
 *
 * Figures are printed as one line of key=value pairs so that tools/bench
 * can collect them without parsing prose.
 */
#ifndef BENCH_MEASURE_H
#define BENCH_MEASURE_H

#include <stddef.h>

/* seconds on the monotonic clock */
double measure_now(void);

/* seconds of CPU time (user + system) of the whole process, all its threads */
double measure_cpu(void);

/* a summary of latency samples, in microseconds */
struct measure_summary {
	double median, p99, mean, min, max;
};

/*
 * measure_summarize -- sort the n samples (seconds) in place and summarize
 * them; p99 is the smallest sample that at least 99 % of the samples do not
 * exceed (nearest rank)
 */
void measure_summarize(double *samples, size_t n, struct measure_summary *s);

/* measure_parse_size -- "64", "4K", "4KiB", "1M", "1MiB", "1020K"; exits on a bad value */
size_t measure_parse_size(const char *prog, const char *what, const char *text);

/* measure_parse_count -- a positive decimal number; exits on a bad value */
long measure_parse_count(const char *prog, const char *what, const char *text);

/* measure_die -- print "prog: message" and exit 1 */
__attribute__((noreturn, format(printf, 2, 3))) void measure_die(
	const char *prog, const char *fmt, ...);

#endif /* BENCH_MEASURE_H */
