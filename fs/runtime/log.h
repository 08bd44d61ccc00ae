/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- the daemon's log: stderr in the foreground, syslog once daemonized
 */
#ifndef RPMAFS_LOG_H
#define RPMAFS_LOG_H

#include <stdbool.h>
#include <syslog.h>

/* log_setup -- messages above level (a syslog priority) are dropped */
void log_setup(int level, bool to_syslog);

void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* RPMAFS_LOG_H */
