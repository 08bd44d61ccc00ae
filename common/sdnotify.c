// SPDX-License-Identifier: BSD-3-Clause
/* sdnotify.c -- the sd_notify(3) datagram and the watchdog's schedule (see sdnotify.h) */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdnotify.h"

int sdnotify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	ssize_t n;
	int fd, err = 0;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

size_t sdnotify_state(char *buf, size_t size, const char *head, const char *status)
{
	static const char key[] = "\nSTATUS=";
	size_t len = 0;

	for (const char *s = head; *s && len + 1 < size; s++)
		buf[len++] = *s;
	for (const char *s = key; *s && len + 1 < size; s++)
		buf[len++] = *s;
	/* the manager reads one assignment a line: a line break would end it */
	for (const char *s = status; *s && len + 1 < size; s++)
		buf[len++] = (*s == '\n' || *s == '\r') ? ' ' : *s;
	buf[len] = '\0';
	return len;
}

/* a positive decimal, nothing else; 0 when it is not one */
static unsigned long long parse_positive(const char *s)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return 0;
	return v;
}

uint64_t sdnotify_watchdog_init(struct sdnotify_watchdog *wd, uint64_t now_ms)
{
	const char *pid = getenv("WATCHDOG_PID");
	unsigned long long usec = parse_positive(getenv("WATCHDOG_USEC"));

	*wd = (struct sdnotify_watchdog){0};
	/* set for another process (a parent that forked us): not ours to feed */
	if (pid && parse_positive(pid) != (unsigned long long)getpid())
		return 0;
	if (!usec)
		return 0;
	wd->interval_ms = usec / 2000 ? usec / 2000 : 1;
	wd->next_ms = now_ms + wd->interval_ms;
	return wd->interval_ms;
}

bool sdnotify_watchdog_due(struct sdnotify_watchdog *wd, uint64_t now_ms)
{
	if (!wd->interval_ms || now_ms < wd->next_ms)
		return false;
	wd->next_ms = now_ms + wd->interval_ms;
	return true;
}

uint64_t sdnotify_watchdog_next(const struct sdnotify_watchdog *wd)
{
	return wd->interval_ms ? wd->next_ms : 0;
}
