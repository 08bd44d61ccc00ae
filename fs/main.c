// SPDX-License-Identifier: BSD-3-Clause
/*
 * main.c -- rpmafs: mount a spool directory whose files send RDMA messages
 *
 *	rpmafs [--config FILE] [-f] [-d] [-o OPTIONS] MOUNTPOINT
 *	rpmafs CONFIG MOUNTPOINT [-o OPTIONS]	(the form mount.fuse3 uses)
 *
 * Start-up: load and check the config (exit 2 on any error, nothing
 * mounted), map the request pool, mount, start the completion thread and
 * the FUSE workers. Shut-down (fusermount3 -u, SIGTERM, SIGINT): stop the
 * workers, let what is in flight complete, disconnect, exit.
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

#include "clock.h"
#include "devices.h"
#include "engine.h"
#include "log.h"
#include "mount.h"
#include "ops.h"
#include "pool.h"
#include "workers.h"

#define DEFAULT_CONFIG "/etc/rpmafs.ini"
#define DEFAULT_WORKERS 4
#define MAX_WORKERS 64
/*
 * libfuse reads each request with one read(2) of its bufsize: 256 pages for
 * the largest write plus a page for the headers (libfuse 3.14). Every pool
 * buffer must hold that much.
 */
#define FUSE_READ_SIZE (256 * 4096 + 4096)
/* the longest we wait at unmount for queued and in-flight messages */
#define DRAIN_CAP_MS 30000

struct options {
	char *config;
	char *positional[2];
	int npositional;
	int foreground;
	int debug;
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
		o->debug = 1;
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

/* wait for queued and in-flight messages, as long as send_timeout allows */
static void drain(struct mount *m)
{
	uint64_t cap = 0, deadline;

	for (unsigned i = 0; i < m->nspools; i++)
		if (m->spools[i].cfg->send_timeout_ms > cap)
			cap = m->spools[i].cfg->send_timeout_ms;
	cap += 2000;
	if (cap > DRAIN_CAP_MS)
		cap = DRAIN_CAP_MS;
	deadline = now_ms() + cap;
	for (;;) {
		unsigned busy = 0;

		for (unsigned i = 0; i < m->nspools; i++)
			busy += spool_busy(&m->spools[i]);
		if (!busy)
			return;
		if (now_ms() >= deadline) {
			log_warn("unmount: %u messages not settled after %llu ms: counted failed",
				busy, (unsigned long long)cap);
			return;
		}
		poll(NULL, 0, 10);
	}
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
	int sfd = -1, done_fd = -1, ret = 1;

	m->se = fuse_session_new(args, &rpmafs_ops, sizeof(rpmafs_ops), m);
	if (!m->se)
		return 1;
	if (fuse_session_mount(m->se, m->mountpoint) != 0)
		goto out_session;
	if (fuse_daemonize(o->foreground) != 0)
		goto out_unmount;
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
		goto out_unmount;
	}

	if (engine_start(m->engine)) {
		log_err("cannot start the completion thread");
		goto out_unmount;
	}
	for (unsigned i = 0; i < m->nspools; i++)
		engine_arm(m->engine, 1);
	if (workers_start(m, done_fd)) {
		log_err("cannot start the FUSE workers");
		workers_stop(m);
		goto out_engine;
	}
	log_notice("mounted %s: %u peers, %u request buffers of %zu KiB", m->mountpoint,
		m->nspools, pool_nslots(m->pool), pool_slot_size(m->pool) / 1024);

	wait_for_end(sfd, done_fd, m);
	workers_stop(m);
	ret = 0;
out_engine:
	fuse_session_unmount(m->se);
	drain(m);
	m->stopping = true;
	engine_stop(m->engine);
	goto out_session;
out_unmount:
	fuse_session_unmount(m->se);
out_session:
	fuse_session_destroy(m->se);
	m->se = NULL;
	if (sfd >= 0)
		close(sfd);
	if (done_fd >= 0)
		close(done_fd);
	return ret;
}

static int setup(struct mount *m, const struct options *o)
{
	unsigned nbuf;
	int ret;

	m->uid = getuid();
	m->gid = getgid();
	m->allow_other = o->allow_other;
	now_coarse(&m->mounted_at); /* the same clock as the message times */
	pthread_mutex_init(&m->turn, NULL);
	m->nworkers = o->workers ? o->workers : DEFAULT_WORKERS;

	/* slots buffers for messages, plus one for each worker to read into */
	nbuf = m->cfg->slots + m->nworkers;
	ret = pool_new(nbuf, FUSE_READ_SIZE, &m->pool);
	if (ret) {
		fprintf(stderr, "rpmafs: cannot map %u request buffers: %s\n", nbuf,
			strerror(-ret));
		return 1;
	}
	ret = memlock_check(pool_bytes(m->pool));
	if (ret)
		return 1;
	if (devices_new(m->pool, &m->devices) || engine_new(m, &m->engine)) {
		fprintf(stderr, "rpmafs: out of memory\n");
		return 1;
	}
	m->nspools = (unsigned)m->cfg->npeers;
	m->spools = calloc(m->nspools, sizeof(*m->spools));
	if (!m->spools) {
		fprintf(stderr, "rpmafs: out of memory\n");
		return 1;
	}
	for (unsigned i = 0; i < m->nspools; i++)
		spool_init(&m->spools[i], m, i, &m->cfg->peers[i]);
	return 0;
}

static void teardown(struct mount *m)
{
	for (unsigned i = 0; m->spools && i < m->nspools; i++)
		spool_fini(&m->spools[i]);
	free(m->spools);
	engine_delete(&m->engine);
	devices_delete(&m->devices);
	pool_delete(&m->pool);
	rpmafs_cfg_delete(&m->cfg);
	pthread_mutex_destroy(&m->turn);
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

	ret = setup(&m, &o);
	if (ret == 0)
		ret = run(&m, &args, &o);
	teardown(&m);
out:
	fuse_opt_free_args(&args);
	free(o.positional[0]);
	free(o.positional[1]);
	free(o.config);
	free(mount_opts);
	return ret;
}
