/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- rpma-recv's lines on standard error
 *
 * Every line starts with "rpma-recv: ". Errors and rejected connections are
 * always printed; --quiet hides the notices (connections accepted and closed,
 * the summary); --verbose adds details.
 */
#ifndef RPMA_RECV_LOG_H
#define RPMA_RECV_LOG_H

#include "options.h"

enum recv_log_level {
	RECV_LOG_ERROR,	 /* something failed */
	RECV_LOG_REJECT, /* a peer was turned away: shown even with --quiet */
	RECV_LOG_NOTICE, /* normal life: accepted, closed, summary */
	RECV_LOG_DEBUG,	 /* --verbose */
};

/* recv_log_init -- choose what is printed from here on */
void recv_log_init(enum recv_verbosity verbosity);

/* recv_log -- print one line at level (a newline is added) */
void recv_log(enum recv_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* recv_log_route_rpma -- with --verbose, show librpma's own log on stderr too */
void recv_log_route_rpma(void);

#endif /* RPMA_RECV_LOG_H */
