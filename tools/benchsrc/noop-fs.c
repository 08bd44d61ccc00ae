// SPDX-License-Identifier: BSD-3-Clause
/*
 * noop-fs.c -- the true FUSE floor: a file system that does nothing
 *
 *	bench-noop-fs [-d] MOUNTPOINT
 *
 * One write-only, direct-I/O, non-seekable file `f` in the root; every
 * WRITE is answered at once with its size, FLUSH, FSYNC and RELEASE with 0.
 * And one read-only, direct-I/O file `r` (seekable, as an inbox is): every
 * READ is answered at once with one 65-byte line of 64 'x' and '\n' (less
 * only when the read asks for less), whatever its offset, and never EOF, as
 * an inbox with a message always waiting answers each read with one record
 * (docs/design.md §13.3): the FUSE floor of inbox_cpu_per_msg_over_floor.
 * It runs FUSE as rpmafs does (fs/fuse/ops.c op_init, fs/runtime/workers.c): the same
 * capabilities and max_write, the same attribute timeout, and four threads
 * with one read buffer each and one turn to read /dev/fuse, which the
 * thread holding it keeps, so that
 * tools/bench can divide rpmafs's null peer by what FUSE alone costs
 * (null_over_noop). It counts the requests it serves by opcode and prints
 * them at exit, which is how the bench counts FUSE requests per message.
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <fuse_lowlevel.h>

#define WORKERS 4			     /* fs/main.c DEFAULT_WORKERS */
#define MAX_WRITE (256u * 4096u - 4096u + 1) /* fs/fuse/ops.c op_init */
#define ATTR_TIMEOUT 86400.0		     /* fs/fuse/spoolfile.c SPOOL_ATTR_TIMEOUT */
#define FILE_INO 2
#define READ_INO 3
#define LINE_LEN 65 /* a 64 B message as an inbox_format lines record */

enum {
	N_LOOKUP,
	N_GETATTR,
	N_SETATTR,
	N_OPEN,
	N_READ,
	N_WRITE,
	N_FLUSH,
	N_FSYNC,
	N_RELEASE,
	N_OPS
};
static const char *const names[N_OPS] = {
	"lookup", "getattr", "setattr", "open", "read", "write", "flush", "fsync", "release"};
static atomic_ulong counts[N_OPS];
static char line[LINE_LEN];

static void attr_of(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = S_IFREG | (ino == READ_INO ? 0444 : 0222);
	if (ino == FUSE_ROOT_ID)
		st->st_mode = S_IFDIR | 0755;
	st->st_nlink = ino == FUSE_ROOT_ID ? 2 : 1;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE |
			FUSE_CAP_ASYNC_DIO | FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_AUTO_INVAL_DATA |
			FUSE_CAP_READDIRPLUS | FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
	conn->max_write = MAX_WRITE;
	conn->max_background = 64;
	conn->time_gran = 1;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = {.attr_timeout = ATTR_TIMEOUT, .entry_timeout = ATTR_TIMEOUT};

	counts[N_LOOKUP]++;
	if (parent == FUSE_ROOT_ID && !strcmp(name, "f"))
		e.ino = FILE_INO;
	else if (parent == FUSE_ROOT_ID && !strcmp(name, "r"))
		e.ino = READ_INO;
	if (!e.ino) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	attr_of(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	counts[N_GETATTR]++;
	attr_of(ino, &st);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void op_setattr(
	fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	(void)attr, (void)to_set;
	counts[N_SETATTR]++;
	op_getattr(req, ino, fi);
	counts[N_GETATTR]--;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	counts[N_OPEN]++;
	if (ino == READ_INO && (fi->flags & O_ACCMODE) == O_RDONLY) {
		fi->direct_io = 1; /* seekable, as the inbox (fs/fuse/inboxfile.c) */
		fuse_reply_open(req, fi);
		return;
	}
	if (ino != FILE_INO || (fi->flags & O_ACCMODE) != O_WRONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fuse_reply_open(req, fi);
}

static void op_read(
	fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino, (void)off, (void)fi;
	counts[N_READ]++;
	fuse_reply_buf(req, line, size < LINE_LEN ? size : LINE_LEN);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	(void)ino, (void)buf, (void)off, (void)fi;
	counts[N_WRITE]++;
	fuse_reply_write(req, size);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino, (void)fi;
	counts[N_FLUSH]++;
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino, (void)datasync, (void)fi;
	counts[N_FSYNC]++;
	fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino, (void)fi;
	counts[N_RELEASE]++;
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.fsync = op_fsync,
	.release = op_release,
};

static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;

/*
 * as fs/runtime/workers.c: take the turn, then read a request and handle it,
 * again and again; rpmafs's worker hands the turn on only to wait for a
 * pool buffer, which this one never does
 */
static void *worker(void *arg)
{
	struct fuse_session *se = arg;
	struct fuse_buf fbuf = {.size = MAX_WRITE - 1 + 4096};

	fbuf.mem = malloc(fbuf.size);
	if (!fbuf.mem)
		return NULL;
	pthread_mutex_lock(&turn);
	for (;;) {
		void *mem = fbuf.mem;
		size_t size = fbuf.size;
		int res;

		if (fuse_session_exited(se))
			break;
		res = fuse_session_receive_buf(se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0) {
			fuse_session_exit(se);
			break;
		}
		fuse_session_process_buf(se, &fbuf);
		fbuf.mem = mem;
		fbuf.size = size;
	}
	pthread_mutex_unlock(&turn);
	free(fbuf.mem);
	return NULL;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts o;
	struct fuse_session *se;
	pthread_t t[WORKERS];
	int i, ret = 1;

	if (fuse_parse_cmdline(&args, &o) != 0 || !o.mountpoint) {
		fprintf(stderr, "usage: %s [-d] MOUNTPOINT\n", argv[0]);
		return 2;
	}
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se || fuse_set_signal_handlers(se) || fuse_session_mount(se, o.mountpoint))
		goto out;
	memset(line, 'x', LINE_LEN - 1);
	line[LINE_LEN - 1] = '\n';
	fprintf(stderr, "bench-noop-fs: serving %s/f and %s/r\n", o.mountpoint, o.mountpoint);
	for (i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, se);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < N_OPS; i++)
		fprintf(stderr, "bench-noop-fs: requests %s %lu\n", names[i],
			(unsigned long)counts[i]);
	fuse_session_unmount(se);
	ret = 0;
out:
	if (se) {
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
	}
	free(o.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
