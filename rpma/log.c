// SPDX-License-Identifier: BSD-3-Clause
/*
 * log.c -- thresholds, the logging function pointer and the default logging function
 *
 * Both thresholds and the function pointer are C11 atomics: any thread may log while another
 * changes them, and a change is never lost (unlike librpma, no RPMA_E_AGAIN is needed).
 *
 * The default function writes to syslog(3) without calling openlog(3): a library must not take
 * over the program's syslog identity or facility, so messages carry whatever the program set.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

static _Atomic int Threshold[RPMA_LOG_THRESHOLD_MAX] = {
	[RPMA_LOG_THRESHOLD] = RPMA_LOG_LEVEL_WARNING,
	[RPMA_LOG_THRESHOLD_AUX] = RPMA_LOG_DISABLED,
};

static void log_default_function(enum rpma_log_level level, const char *file_name,
	const int line_no, const char *function_name, const char *message_format, ...)
	__attribute__((format(printf, 5, 6)));

static _Atomic(rpma_log_function *) Log_function = log_default_function;

static const char *const Level_names[] = {
	[RPMA_LOG_LEVEL_FATAL] = "*FATAL*",
	[RPMA_LOG_LEVEL_ERROR] = "*ERROR*",
	[RPMA_LOG_LEVEL_WARNING] = "*WARN*",
	[RPMA_LOG_LEVEL_NOTICE] = "*NOTE*",
	[RPMA_LOG_LEVEL_INFO] = "*INFO*",
	[RPMA_LOG_LEVEL_DEBUG] = "*DEBUG*",
};

static const int Syslog_priorities[] = {
	[RPMA_LOG_LEVEL_FATAL] = LOG_CRIT,
	[RPMA_LOG_LEVEL_ERROR] = LOG_ERR,
	[RPMA_LOG_LEVEL_WARNING] = LOG_WARNING,
	[RPMA_LOG_LEVEL_NOTICE] = LOG_NOTICE,
	[RPMA_LOG_LEVEL_INFO] = LOG_INFO,
	[RPMA_LOG_LEVEL_DEBUG] = LOG_DEBUG,
};

static int level_is_valid(int level)
{
	return level >= RPMA_LOG_DISABLED && level <= RPMA_LOG_LEVEL_DEBUG;
}

static int threshold_is_valid(int threshold)
{
	return threshold == RPMA_LOG_THRESHOLD || threshold == RPMA_LOG_THRESHOLD_AUX;
}

/* internal API */

int rpma_log_enabled(enum rpma_log_level level)
{
	return (int)level <=
	       atomic_load_explicit(&Threshold[RPMA_LOG_THRESHOLD], memory_order_relaxed);
}

rpma_log_function *rpma_log_get_function(void)
{
	return atomic_load_explicit(&Log_function, memory_order_acquire);
}

const char *rpma_log_errstr(int errnum, char *buf, size_t size)
{
	/* GNU strerror_r: returns either a static string or buf */
	return strerror_r(errnum, buf, size);
}

/*
 * log_default_function -- syslog(3) for every message that passed RPMA_LOG_THRESHOLD, and a
 * timestamped copy on stderr for those also at or below RPMA_LOG_THRESHOLD_AUX
 */
static void log_default_function(enum rpma_log_level level, const char *file_name,
	const int line_no, const char *function_name, const char *message_format, ...)
{
	if (level < RPMA_LOG_LEVEL_FATAL || level > RPMA_LOG_LEVEL_DEBUG)
		return;

	char message[1024];
	va_list ap;
	va_start(ap, message_format);
	int ret = vsnprintf(message, sizeof(message), message_format, ap);
	va_end(ap);
	if (ret < 0)
		return;

	char where[256] = "";
	if (file_name != NULL) {
		const char *base = strrchr(file_name, '/');
		base = base ? base + 1 : file_name;
		(void)snprintf(where, sizeof(where), "%s:%d %s(): ", base, line_no,
			function_name ? function_name : "?");
	}

	syslog(Syslog_priorities[level], "%s %s%s", Level_names[level], where, message);

	if ((int)level > atomic_load(&Threshold[RPMA_LOG_THRESHOLD_AUX]))
		return;

	char stamp[64] = "";
	struct timespec ts;
	struct tm tm;
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && localtime_r(&ts.tv_sec, &tm) != NULL) {
		char date[32];
		if (strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm) > 0)
			(void)snprintf(
				stamp, sizeof(stamp), "[%s.%06ld] ", date, ts.tv_nsec / 1000);
	}
	(void)fprintf(stderr, "%s%s %s%s\n", stamp, Level_names[level], where, message);
}

/* public API */

int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level)
{
	if (!threshold_is_valid((int)threshold) || !level_is_valid((int)level))
		return RPMA_E_INVAL;

	atomic_store(&Threshold[threshold], (int)level);
	return 0;
}

int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level)
{
	if (!threshold_is_valid((int)threshold) || level == NULL)
		return RPMA_E_INVAL;

	*level = (enum rpma_log_level)atomic_load(&Threshold[threshold]);
	return 0;
}

int rpma_log_set_function(rpma_log_function *log_function)
{
	if (log_function == RPMA_LOG_USE_DEFAULT_FUNCTION)
		log_function = log_default_function;

	atomic_store_explicit(&Log_function, log_function, memory_order_release);
	return 0;
}
