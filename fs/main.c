// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c -- rpmafs: mount a spool directory whose files send RDMA messages
 *
 *	rpmafs [--config FILE] [-f] [-d] [-o OPTIONS] MOUNTPOINT
 *	rpmafs CONFIG MOUNTPOINT [-o OPTIONS]	(the form mount.fuse3 uses)
 *
 * Start-up: load and check the config (exit 2 on any error, nothing
 * mounted), then mount.c: check the limits and map the request pool; fork
 * (unless -f: runtime/daemon.h), make the RDMA resources, mount, release
 * the caller (exit 1 when any of it failed, said on stderr); start the
 * loop thread and the FUSE workers. Shut-down (fusermount3 -u, SIGTERM, SIGINT):
 * stop the workers, let what is in flight complete, disconnect, exit.
 */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "mount.h"
#include "fuse/ops.h"
#include "runtime/daemon.h"
#include "runtime/log.h"

#define DEFAULT_CONFIG "/etc/rpmafs.ini"
#define DEFAULT_WORKERS 4
#define MAX_WORKERS 64
struct options {
	char *config;
	char *positional[2];
	int npositional;
	int foreground;
	int help;
	int version;
	int allow_other;
	unsigned workers;
};

enum { KEY_HELP, KEY_VERSION, KEY_FOREGROUND, KEY_DEBUG, KEY_ALLOW_OTHER };

#define OPT(t, p) { t, offsetof(struct options, p), 1 }
static const struct fuse_opt option_spec[] = {
	OPT("--config=%s", config),
	OPT("--config %s", config),
	OPT("-c %s", config),
	OPT("config=%s", config),
	OPT("workers=%u", workers),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("-f", KEY_FOREGROUND),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_KEY("debug", KEY_DEBUG),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_END
};

static int option_key(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct options *o = data;

	(void)outargs;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (o->npositional == 2) {
			fprintf(stderr, "rpmafs: too many arguments: '%s'\n", arg);
			return -1;
		}
		o->positional[o->npositional++] = strdup(arg);
		return 0;
	case KEY_HELP:
		o->help = 1;
		return 0;
	case KEY_VERSION:
		o->version = 1;
		return 0;
	case KEY_FOREGROUND:
		o->foreground = 1;
		return 0;
	case KEY_DEBUG:
		o->foreground = 1;
		return 1; /* libfuse prints its debug output too */
	case KEY_ALLOW_OTHER:
		o->allow_other = 1;
		return 1;
	}
	return 1;
}

static void usage(const char *prog)
{
	printf("usage: %s [--config FILE] [-f] [-d] [-o OPTIONS] MOUNTPOINT\n"
	       "       %s CONFIG MOUNTPOINT [-o OPTIONS]\n\n"
	       "Each peer of the config appears as a file; every write(2) to it is one\n"
	       "RDMA message. See rpmafs(8) and rpmafs.ini(5).\n\n"
	       "options:\n"
	       "    --config FILE, -c FILE, -o config=FILE   config (default " DEFAULT_CONFIG ")\n"
	       "    -f                   stay in the foreground, log to stderr\n"
	       "    -d                   FUSE debug output (implies -f)\n"
	       "    -o workers=N         FUSE request readers (default %d)\n"
	       "    -o allow_other       let other users use the spool\n"
	       "    -o OPTION            other FUSE mount options\n"
	       "    -h, --help           this text\n"
	       "    -V, --version        the version\n",
		prog, prog, DEFAULT_WORKERS);
}

/* sleep until a signal asks us to stop or the workers end (unmounted) */
static void wait_for_end(int sfd, int done_fd, struct mount *m)
{
	struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN}, {.fd = done_fd, .events = POLLIN}};

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				log_notice("signal %u: unmounting %s", si.ssi_signo, m->mountpoint);
			return;
		}
		if (pfd[1].revents)
			return; /* a worker ended: the file system is unmounted */
	}
}

static int run(struct mount *m, struct fuse_args *args, const struct options *o)
{
	sigset_t stop_signals;
	int sfd = -1, done_fd = -1, ready_fd, ret = 1;

	/*
	 * Fork first, then make every RDMA resource (the kernel refuses the
	 * daemon descriptors opened before it forked) and mount; until
	 * daemon_ready() errors still go to the caller's stderr and the
	 * caller's exit status is ours.
	 */
	if (daemon_fork(o->foreground, &ready_fd)) {
		fprintf(stderr, "rpmafs: cannot become a daemon: %s\n", strerror(errno));
		return 1;
	}
	if (mount_rdma(m))
		return 1;
	if (mount_fuse(m, args, &rpmafs_ops))
		return 1;
	daemon_ready(&ready_fd);
	log_setup(m->cfg->log_level, !o->foreground);

	/* SIGINT, SIGTERM, SIGHUP go to the signalfd, never to a thread */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
	done_fd = eventfd(0, EFD_CLOEXEC);
	if (sfd < 0 || done_fd < 0) {
		log_err("cannot set up signal handling: %s", strerror(errno));
		goto out;
	}

	if (mount_start(m, done_fd) == 0) {
		wait_for_end(sfd, done_fd, m);
		ret = 0;
	}
	mount_stop(m);
out:
	mount_close(m);
	if (sfd >= 0)
		close(sfd);
	if (done_fd >= 0)
		close(done_fd);
	return ret;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct options o = {0};
	struct mount m = {0};
	char *err = NULL, *mount_opts = NULL, fsname[PATH_MAX + 16];
	const char *config;
	int ret = 1;

	if (fuse_opt_parse(&args, &o, option_spec, option_key) != 0)
		return 2;
	if (o.help) {
		usage(argv[0]);
		ret = 0;
		goto out;
	}
	if (o.version) {
		printf("rpmafs %s (libfuse %s)\n", RPMAFS_VERSION, fuse_pkgversion());
		ret = 0;
		goto out;
	}
	/* `rpmafs CONFIG MOUNTPOINT`: how mount.fuse3 passes an fstab source */
	if (o.npositional == 2 && !o.config) {
		config = o.positional[0];
		m.mountpoint = o.positional[1];
	} else if (o.npositional == 1) {
		config = o.config ? o.config : DEFAULT_CONFIG;
		m.mountpoint = o.positional[0];
	} else {
		fprintf(stderr, o.npositional ? "rpmafs: a config given twice\n" :
			"rpmafs: no mount point given (see rpmafs --help)\n");
		ret = 2;
		goto out;
	}
	if (o.workers > MAX_WORKERS) {
		fprintf(stderr, "rpmafs: -o workers=%u: at most %d\n", o.workers, MAX_WORKERS);
		ret = 2;
		goto out;
	}

	if (rpmafs_cfg_load(config, &m.cfg, &err) != 0) {
		fprintf(stderr, "%s\n", err ? err : "rpmafs: cannot load the config: out of memory");
		free(err);
		ret = 2;
		goto out;
	}

	/* `mount` shows rpmafs:CONFIG on MOUNTPOINT type fuse.rpmafs */
	snprintf(fsname, sizeof(fsname), "fsname=rpmafs:%s", config);
	if (fuse_opt_add_opt_escaped(&mount_opts, fsname) || fuse_opt_add_opt(&mount_opts, "subtype=rpmafs") ||
		fuse_opt_add_arg(&args, "-o") || fuse_opt_add_arg(&args, mount_opts))
		goto out;

	ret = mount_setup(&m, o.workers ? o.workers : DEFAULT_WORKERS, o.allow_other);
	if (ret == 0)
		ret = run(&m, &args, &o);
	mount_teardown(&m);
out:
	fuse_opt_free_args(&args);
	free(o.positional[0]);
	free(o.positional[1]);
	free(o.config);
	free(mount_opts);
	return ret;
}
