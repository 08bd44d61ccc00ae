/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * notify.h -- telling the service manager how the mount is doing
 *
 * The sd_notify(3) protocol, without libsystemd: one datagram to the
 * AF_UNIX socket named by $NOTIFY_SOCKET (a path, or '@' for the abstract
 * namespace). tools/rpmafs.service is Type=notify, so units ordered after
 * it start once the spool directory is mounted and takes writes, not when
 * the process merely exists (docs/design.md §4.5).
 */
#ifndef RPMAFS_NOTIFY_H
#define RPMAFS_NOTIFY_H

/*
 * notify_service -- send state ("READY=1\nSTATUS=...", "STOPPING=1") to
 * the service manager; nothing when $NOTIFY_SOCKET is unset. Returns 0, or
 * a negative errno when the datagram could not be sent.
 */
int notify_service(const char *state);

#endif /* RPMAFS_NOTIFY_H */
