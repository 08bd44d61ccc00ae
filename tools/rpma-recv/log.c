// SPDX-License-Identifier: BSD-3-Clause
/* log.c -- rpma-recv's lines on standard error */

#include <librpma.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static enum recv_log_level shown = RECV_LOG_NOTICE;

void recv_log_init(enum recv_verbosity verbosity)
{
	switch (verbosity) {
	case RECV_QUIET:
		shown = RECV_LOG_REJECT;
		break;
	case RECV_VERBOSE:
		shown = RECV_LOG_DEBUG;
		break;
	default:
		shown = RECV_LOG_NOTICE;
		break;
	}
}

void recv_log(enum recv_log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (level > shown)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one write per line, so lines of concurrent writers do not mix */
	fprintf(stderr, "rpma-recv: %s\n", line);
}

static void rpma_log_to_stderr(enum rpma_log_level level, const char *file_name, const int line_no,
	const char *function_name, const char *message_format, ...)
{
	char msg[512];
	size_t len;
	va_list ap;

	(void)level;
	va_start(ap, message_format);
	vsnprintf(msg, sizeof(msg), message_format, ap);
	va_end(ap);
	len = strlen(msg);
	while (len > 0 && msg[len - 1] == '\n')
		msg[--len] = '\0'; /* librpma ends its messages with one */
	recv_log(RECV_LOG_DEBUG, "librpma: %s:%d %s(): %s", file_name ? file_name : "?", line_no,
		function_name ? function_name : "?", msg);
}

void recv_log_route_rpma(void)
{
	if (shown < RECV_LOG_DEBUG)
		return;
	(void)rpma_log_set_function(rpma_log_to_stderr);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE);
}
