// SPDX-License-Identifier: BSD-3-Clause
/* measure.c -- the clock, latency summaries, argument parsing (see measure.h) */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "measure.h"

double measure_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double measure_cpu(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the sample of rank ceil(p * n), 1-based: the nearest-rank percentile */
static double nearest_rank(const double *sorted, size_t n, double p)
{
	size_t rank = (size_t)(p * (double)n);

	if ((double)rank < p * (double)n)
		rank++;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

void measure_summarize(double *samples, size_t n, struct measure_summary *s)
{
	double sum = 0;

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return;
	qsort(samples, n, sizeof(*samples), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += samples[i];
	/* the median of an even count is the mean of the two middle samples */
	s->median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	s->p99 = nearest_rank(samples, n, 0.99);
	s->mean = sum / (double)n;
	s->min = samples[0];
	s->max = samples[n - 1];
	s->median *= 1e6;
	s->p99 *= 1e6;
	s->mean *= 1e6;
	s->min *= 1e6;
	s->max *= 1e6;
}

size_t measure_parse_size(const char *prog, const char *what, const char *text)
{
	unsigned long long v, mult = 1;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || text[0] == '-')
		measure_die(prog, "%s: \"%s\" is not a size (64, 4K, 1MiB)", what, text);
	if (*end == 'K' || *end == 'k')
		mult = 1024;
	else if (*end == 'M' || *end == 'm')
		mult = 1024 * 1024;
	if (mult != 1) {
		end++;
		if (strcmp(end, "iB") == 0)
			end += 2;
	}
	if (*end != '\0')
		measure_die(prog, "%s: \"%s\" is not a size (64, 4K, 1MiB)", what, text);
	if (v > (1ULL << 32) / mult)
		measure_die(prog, "%s: %s is too large", what, text);
	return (size_t)(v * mult);
}

long measure_parse_count(const char *prog, const char *what, const char *text)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end != '\0' || v < 1)
		measure_die(prog, "%s: \"%s\" is not a positive number", what, text);
	return v;
}

void measure_die(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}
