// SPDX-License-Identifier: BSD-3-Clause
/* log.c -- the daemon's log: stderr in the foreground, syslog once daemonized */

#include <stdarg.h>
#include <stdio.h>

#include <librpma.h>

#include "log.h"

static int log_level = LOG_NOTICE;
static bool log_syslog;

/* rpma's own messages go through the same channel */
static void rpma_to_log(enum rpma_log_level level, const char *file, int line, const char *func,
	const char *fmt, ...)
{
	static const int prio[] = {LOG_CRIT, LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG};
	char text[512];
	va_list ap;

	(void)file;
	(void)line;
	if (level < RPMA_LOG_LEVEL_FATAL || level > RPMA_LOG_LEVEL_DEBUG)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_msg(prio[level], "rpma: %s: %s", func, text);
}

void log_setup(int level, bool to_syslog)
{
	log_level = level;
	log_syslog = to_syslog;
	if (to_syslog)
		openlog("rpmafs", LOG_PID, LOG_DAEMON);
	rpma_log_set_function(rpma_to_log);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
		level >= LOG_DEBUG ? RPMA_LOG_LEVEL_DEBUG :
		level >= LOG_INFO ? RPMA_LOG_LEVEL_INFO : RPMA_LOG_LEVEL_WARNING);
}

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	if (prio > log_level)
		return;
	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		char line[1024];

		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "rpmafs: %s\n", line);
	}
	va_end(ap);
}
