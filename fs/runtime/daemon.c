// SPDX-License-Identifier: BSD-3-Clause
/* daemon.c -- becoming a daemon, with the terminal kept until it is ready */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"

/* the parent: 0 once the child is ready, else the child's own exit status */
static void __attribute__((noreturn)) wait_ready(int fd, pid_t child)
{
	char ready;
	ssize_t n;
	int status;

	do
		n = read(fd, &ready, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0);
	/* the write end closed unwritten: the child ended before it was ready */
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			_exit(1);
	_exit(WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : 1);
}

int daemon_fork(bool foreground, int *ready_fd)
{
	int p[2];
	pid_t pid;

	*ready_fd = -1;
	if (foreground)
		return 0;
	/* close-on-exec: a helper the child runs (fusermount3) must not hold it open */
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(p[0]);
		close(p[1]);
		errno = err;
		return -1;
	}
	if (pid > 0) {
		close(p[1]);
		wait_ready(p[0], pid);
	}
	close(p[0]);
	/* off the caller's terminal and process group: its signals are not ours */
	(void)setsid();
	*ready_fd = p[1];
	return 0;
}

void daemon_ready(int *ready_fd)
{
	char ready = 1;
	int null;

	/* the mount point may have been relative: nothing else looks at the cwd */
	if (chdir("/"))
		(void)0;
	if (*ready_fd < 0)
		return;
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		(void)dup2(null, STDIN_FILENO);
		(void)dup2(null, STDOUT_FILENO);
		(void)dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	while (write(*ready_fd, &ready, 1) < 0 && errno == EINTR)
		;
	close(*ready_fd);
	*ready_fd = -1;
}
