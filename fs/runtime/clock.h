/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clock.h -- the clocks rpmafs reads, as static inline helpers
 *
 * now_ms() is monotonic milliseconds, for deadlines and the loop's timer
 * (timerfd on CLOCK_MONOTONIC uses the same clock). now_ms_coarse() is the
 * same as of the last clock tick (up to one tick behind, 4 ms at HZ=250),
 * and now_coarse() the wall clock as of the last tick. They are for the
 * per-message readings: the coarse clocks are always answered in the vDSO,
 * while the precise ones make a system call where the clock source cannot
 * be read from user space (in the lab VM, 3 of them per message). File
 * timestamps in the kernel are tick-coarse too.
 *
 * Depends on nothing but <time.h>.
 */
#ifndef RPMAFS_CLOCK_H
#define RPMAFS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ms_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000 + (uint64_t)ts->tv_nsec / 1000000;
}

/* now_ms -- monotonic milliseconds */
static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return clock_ms_of(&ts);
}

/* now_ns -- monotonic nanoseconds (a spin's budget: fs/spool/await.c) */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* now_ms_coarse -- monotonic milliseconds as of the last clock tick */
static inline uint64_t now_ms_coarse(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return clock_ms_of(&ts);
}

/* now_coarse -- the wall clock as of the last clock tick */
static inline void now_coarse(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME_COARSE, ts);
}

#endif /* RPMAFS_CLOCK_H */
