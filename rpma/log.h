/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- how the library writes to its log (private)
 *
 * Every message goes through RPMA_LOG(): the level is compared with RPMA_LOG_THRESHOLD first,
 * so a message that would be dropped costs one atomic load and its arguments are not
 * evaluated. The format is checked by the compiler (rpma_log_check_format()), because the
 * user's logging function type carries no format attribute.
 */
#ifndef RPMA_LOG_H
#define RPMA_LOG_H

#include <stddef.h>

#include "librpma.h"

/* true when a message of this level passes RPMA_LOG_THRESHOLD */
int rpma_log_enabled(enum rpma_log_level level);

/* the logging function in use (never NULL) */
rpma_log_function *rpma_log_get_function(void);

/*
 * rpma_log_errstr -- the text of an errno value, thread-safe (buf holds it when glibc needs a
 * buffer)
 */
const char *rpma_log_errstr(int errnum, char *buf, size_t size);

static inline __attribute__((format(printf, 1, 2))) void rpma_log_check_format(const char *fmt, ...)
{
	(void)fmt;
}

#define RPMA_LOG(level, fmt, ...)                                                         \
	do {                                                                              \
		if (0)                                                                    \
			rpma_log_check_format(fmt, ##__VA_ARGS__);                        \
		if (rpma_log_enabled(level))                                              \
			rpma_log_get_function()(                                          \
				level, __FILE__, __LINE__, __func__, fmt, ##__VA_ARGS__); \
	} while (0)

#define RPMA_LOG_FATAL(fmt, ...) RPMA_LOG(RPMA_LOG_LEVEL_FATAL, fmt, ##__VA_ARGS__)
#define RPMA_LOG_ERROR(fmt, ...) RPMA_LOG(RPMA_LOG_LEVEL_ERROR, fmt, ##__VA_ARGS__)
#define RPMA_LOG_WARNING(fmt, ...) RPMA_LOG(RPMA_LOG_LEVEL_WARNING, fmt, ##__VA_ARGS__)
#define RPMA_LOG_NOTICE(fmt, ...) RPMA_LOG(RPMA_LOG_LEVEL_NOTICE, fmt, ##__VA_ARGS__)
#define RPMA_LOG_INFO(fmt, ...) RPMA_LOG(RPMA_LOG_LEVEL_INFO, fmt, ##__VA_ARGS__)
#define RPMA_LOG_DEBUG(fmt, ...) RPMA_LOG(RPMA_LOG_LEVEL_DEBUG, fmt, ##__VA_ARGS__)

/*
 * log "<message>: <strerror(err)> (errno <err>)" at the given level; err is evaluated once,
 * before anything that could change errno
 */
#define RPMA_LOG_WITH_ERRNO(level, err, fmt, ...)                                              \
	do {                                                                                   \
		int rpma_log_errnum_ = (err);                                                  \
		char rpma_log_errbuf_[128];                                                    \
		RPMA_LOG(level, fmt ": %s (errno %d)", ##__VA_ARGS__,                          \
			rpma_log_errstr(                                                       \
				rpma_log_errnum_, rpma_log_errbuf_, sizeof(rpma_log_errbuf_)), \
			rpma_log_errnum_);                                                     \
	} while (0)

#define RPMA_LOG_ERROR_WITH_ERRNO(err, fmt, ...) \
	RPMA_LOG_WITH_ERRNO(RPMA_LOG_LEVEL_ERROR, err, fmt, ##__VA_ARGS__)
#define RPMA_LOG_WARNING_WITH_ERRNO(err, fmt, ...) \
	RPMA_LOG_WITH_ERRNO(RPMA_LOG_LEVEL_WARNING, err, fmt, ##__VA_ARGS__)
#define RPMA_LOG_DEBUG_WITH_ERRNO(err, fmt, ...) \
	RPMA_LOG_WITH_ERRNO(RPMA_LOG_LEVEL_DEBUG, err, fmt, ##__VA_ARGS__)

#endif /* RPMA_LOG_H */
