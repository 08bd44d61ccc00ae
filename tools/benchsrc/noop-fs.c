// SPDX-License-Identifier: BSD-3-Clause
/*
 * noop-fs.c -- the true FUSE floor: a file system that does nothing
 *
 *	bench-noop-fs [-d] [--send ADDR PORT] MOUNTPOINT
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
 *
 * With --send ADDR PORT each WRITE of `f` is also sent, as it is: copied
 * into a registered buffer, posted with rpma_send on one connection to
 * ADDR:PORT (an rpma-recv), and answered once its completion is reaped, by
 * the worker that holds the request (a spin on the CQ, then a wait): the
 * floor of a transport-confirmed sync write composed in one process, FUSE
 * and the send together (sync64_latency_over_fuse_send). Under rxe the two
 * do not add up apart: the receiver woken by the send competes for the
 * lab's two CPUs with the writer the reply wakes, which a raw sender that
 * never sleeps does not pay (docs/design.md §7).
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
#include <librpma.h>

#include "measure.h"

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

/* --send: one connection, one buffer; the turn keeps WRITEs one at a time */
#define SEND_MAX 4096u
#define SEND_SPIN_S 0.002 /* as fs/spool/await.h AWAIT_SPIN_MAX_NS */
static struct {
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	char *buf;
	pthread_mutex_t lock;
	unsigned long failed;
} snd = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int send_connect(const char *addr, const char *port)
{
	struct ibv_context *ctx;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	enum rpma_conn_event ev;
	int ret;

	if ((ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx)) ||
		(ret = rpma_peer_new(ctx, &snd.peer)))
		goto fail;
	if (posix_memalign((void **)&snd.buf, 4096, SEND_MAX)) {
		fprintf(stderr, "bench-noop-fs: cannot allocate the send buffer\n");
		return -1;
	}
	if ((ret = rpma_mr_reg(snd.peer, snd.buf, SEND_MAX, RPMA_MR_USAGE_SEND, &snd.mr)) ||
		(ret = rpma_conn_cfg_new(&cfg)) || (ret = rpma_conn_cfg_set_sq_size(cfg, 1)) ||
		(ret = rpma_conn_cfg_set_rq_size(cfg, 1)) ||
		(ret = rpma_conn_cfg_set_cq_size(cfg, 2)) ||
		(ret = rpma_conn_req_new(snd.peer, addr, port, cfg, &req)) ||
		(ret = rpma_conn_req_connect(&req, NULL, &snd.conn)) ||
		(ret = rpma_conn_next_event(snd.conn, &ev)))
		goto fail;
	rpma_conn_cfg_delete(&cfg);
	if (ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "bench-noop-fs: %s:%s: connection event %s\n", addr, port,
			rpma_utils_conn_event_2str(ev));
		return -1;
	}
	if ((ret = rpma_conn_get_cq(snd.conn, &snd.cq)))
		goto fail;
	return 0;
fail:
	if (cfg)
		rpma_conn_cfg_delete(&cfg);
	fprintf(stderr, "bench-noop-fs: cannot connect to %s:%s: %s\n", addr, port,
		rpma_err_2str(ret));
	return -1;
}

/* post size bytes of data and reap its completion: 0, or an errno for the reply */
static int send_one(const char *data, size_t size)
{
	struct ibv_wc wc;
	double until;
	int ret, n;

	if (size > SEND_MAX)
		return EMSGSIZE;
	pthread_mutex_lock(&snd.lock);
	memcpy(snd.buf, data, size);
	ret = rpma_send(snd.conn, size ? snd.mr : NULL, 0, size, RPMA_F_COMPLETION_ALWAYS, NULL);
	until = measure_now() + SEND_SPIN_S;
	while (!ret && (ret = rpma_cq_get_wc(snd.cq, 1, &wc, &n)) == RPMA_E_NO_COMPLETION)
		if (measure_now() >= until)
			ret = rpma_cq_wait(snd.cq); /* armed when made, re-armed by each wait */
	if (!ret && wc.status != IBV_WC_SUCCESS)
		ret = -1;
	if (ret)
		snd.failed++;
	pthread_mutex_unlock(&snd.lock);
	return ret ? EIO : 0;
}

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
	int err = 0;

	(void)off, (void)fi;
	counts[N_WRITE]++;
	if (snd.conn && ino == FILE_INO)
		err = send_one(buf, size);
	if (err)
		fuse_reply_err(req, err);
	else
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
	struct fuse_args args;
	struct fuse_cmdline_opts o;
	struct fuse_session *se = NULL;
	pthread_t t[WORKERS];
	const char *send_addr = NULL, *send_port = NULL;
	int i, j, ret = 1;

	/* --send ADDR PORT is ours; the rest is libfuse's */
	for (i = j = 1; i < argc; i++) {
		if (strcmp(argv[i], "--send") == 0 && i + 2 < argc) {
			send_addr = argv[++i];
			send_port = argv[++i];
		} else {
			argv[j++] = argv[i];
		}
	}
	argc = j;
	args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	if (fuse_parse_cmdline(&args, &o) != 0 || !o.mountpoint) {
		fprintf(stderr, "usage: %s [-d] [--send ADDR PORT] MOUNTPOINT\n", argv[0]);
		return 2;
	}
	if (send_addr && send_connect(send_addr, send_port))
		goto out;
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se || fuse_set_signal_handlers(se) || fuse_session_mount(se, o.mountpoint))
		goto out;
	memset(line, 'x', LINE_LEN - 1);
	line[LINE_LEN - 1] = '\n';
	fprintf(stderr, "bench-noop-fs: serving %s/f and %s/r", o.mountpoint, o.mountpoint);
	if (snd.conn)
		fprintf(stderr, ", each write of f sent to %s:%s", send_addr, send_port);
	fprintf(stderr, "\n");
	for (i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, se);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < N_OPS; i++)
		fprintf(stderr, "bench-noop-fs: requests %s %lu\n", names[i],
			(unsigned long)counts[i]);
	if (snd.conn)
		fprintf(stderr, "bench-noop-fs: sends failed %lu\n", snd.failed);
	fuse_session_unmount(se);
	ret = 0;
out:
	if (se) {
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
	}
	if (snd.conn) {
		rpma_conn_disconnect(snd.conn);
		rpma_conn_delete(&snd.conn);
	}
	if (snd.mr)
		rpma_mr_dereg(&snd.mr);
	if (snd.peer)
		rpma_peer_delete(&snd.peer);
	free(snd.buf);
	free(o.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
