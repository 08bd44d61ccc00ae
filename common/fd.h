/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd.h -- small helpers for the file descriptors an event loop watches
 * (librpma's event channels and completion channels), for rpma-recv and
 * the mount's inbox alike
 */
#ifndef RPMAFS_FD_H
#define RPMAFS_FD_H

#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>

/* fd_set_nonblock -- make reads on fd fail with EAGAIN instead of waiting */
static inline int fd_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -1;
	return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/*
 * fd_readable -- true when a read on fd would not wait. librpma 1.2 reports
 * an empty non-blocking event channel as a provider error (and logs it)
 * rather than RPMA_E_NO_EVENT, so the drain loops ask the fd first and
 * call into the library only when an event is there.
 */
static inline bool fd_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

#endif /* RPMAFS_FD_H */
