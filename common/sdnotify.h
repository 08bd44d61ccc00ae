/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdnotify.h -- telling the service manager how a daemon is doing
 *
 * The sd_notify(3) protocol, without libsystemd: one datagram to the
 * AF_UNIX socket named by $NOTIFY_SOCKET (a path, or '@' for the abstract
 * namespace). The units are Type=notify: units ordered after one start
 * once the daemon is ready (rpmafs: the spool directory is mounted and
 * takes writes; rpma-recv: it listens), not when the process merely exists.
 *
 * With WatchdogSec= the manager sets $WATCHDOG_USEC and restarts the
 * service when no WATCHDOG=1 comes within it. Each daemon pings from its
 * event loop thread, at half the interval, so that a loop that is stuck
 * (not a process that merely lives) is what gets restarted; the ping
 * carries STATUS=, a one-line summary systemctl status shows.
 */
#ifndef RPMAFS_SDNOTIFY_H
#define RPMAFS_SDNOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * sdnotify_send -- send state ("READY=1\nSTATUS=...", "STOPPING=1") to the
 * service manager; nothing when $NOTIFY_SOCKET is unset. Returns 0, or a
 * negative errno when the datagram could not be sent.
 */
int sdnotify_send(const char *state);

/*
 * sdnotify_state -- "<head>\nSTATUS=<status>" into buf (size > 0), always
 * terminated: the status is cut to fit and its line breaks become spaces,
 * so that it stays one line. Returns the length written.
 */
size_t sdnotify_state(char *buf, size_t size, const char *head, const char *status);

/* the watchdog's schedule; zeroed: no watchdog */
struct sdnotify_watchdog {
	uint64_t interval_ms; /* between pings: half of $WATCHDOG_USEC; 0: none */
	uint64_t next_ms;     /* when the next ping is due (monotonic ms) */
};

/*
 * sdnotify_watchdog_init -- read $WATCHDOG_USEC (a positive decimal) and
 * $WATCHDOG_PID (when set, it must name this process); the first ping is
 * due one interval after now_ms. Returns the interval in ms, 0 when the
 * manager asks for no watchdog (then the pings never fall due).
 */
uint64_t sdnotify_watchdog_init(struct sdnotify_watchdog *wd, uint64_t now_ms);

/*
 * sdnotify_watchdog_due -- whether a ping is due at now_ms; when it is, the
 * next one is scheduled an interval after now_ms (a late ping does not make
 * a burst of them)
 */
bool sdnotify_watchdog_due(struct sdnotify_watchdog *wd, uint64_t now_ms);

/* sdnotify_watchdog_next -- when the next ping is due (monotonic ms), 0: never */
uint64_t sdnotify_watchdog_next(const struct sdnotify_watchdog *wd);

#endif /* RPMAFS_SDNOTIFY_H */
