// SPDX-License-Identifier: BSD-3-Clause
/* output.c -- the four output formats: raw, lines, len and dir */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "output.h"
#include "record.h"

#define SEQ_DIGITS 20 /* enough for any uint64_t, so names always sort */
#define LINE_CHUNK (64u << 10)

struct recv_output {
	enum recv_format format;
	int fd;		   /* the stream, or the directory for dir */
	bool own_fd;	   /* opened here (not standard output) */
	bool rollback;	   /* a regular file: a partial record can be cut off */
	uint64_t next_seq; /* dir: the number the next file gets */
	char *name;
	uint8_t *line_buf; /* lines: escaped text on its way out */
	bool durable;	   /* --fsync: dir files are synced before their rename */
};

static const char *const format_names[] = {
	[RECV_FORMAT_RAW] = "raw",
	[RECV_FORMAT_LINES] = "lines",
	[RECV_FORMAT_LEN] = "len",
	[RECV_FORMAT_DIR] = "dir",
};

int recv_format_parse(const char *name, enum recv_format *format)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (strcmp(name, format_names[i]) == 0) {
			*format = (enum recv_format)i;
			return 0;
		}
	}
	return -1;
}

const char *recv_format_name(enum recv_format format)
{
	return format_names[format];
}

const char *recv_output_name(const struct recv_output *out)
{
	return out->name;
}

/*
 * write_all -- write len bytes or fail; *done counts what went out, so that
 * a failed record can be cut off again
 */
static int write_all(int fd, const void *buf, size_t len, size_t *done)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		*done += (size_t)n;
	}
	return 0;
}

/* cut the last `written` bytes off a regular file after a failed record */
static void roll_back(struct recv_output *out, size_t written)
{
	off_t end;

	if (!out->rollback || written == 0)
		return;
	end = lseek(out->fd, 0, SEEK_CUR);
	if (end < 0 || (uint64_t)end < written)
		return;
	end -= (off_t)written;
	if (ftruncate(out->fd, end) == 0)
		(void)lseek(out->fd, end, SEEK_SET);
}

/*
 * write_lines -- the lines record (common/record.h, shared with the rpmafs
 * inbox) through line_buf, chunk by chunk
 */
static int write_lines(struct recv_output *out, const uint8_t *msg, size_t len, size_t *done)
{
	struct rpmafs_record r;
	size_t n;
	int ret;

	rpmafs_record_start(&r, RPMAFS_RECORD_LINES, msg, len);
	while ((n = rpmafs_record_take(&r, out->line_buf, LINE_CHUNK)) > 0) {
		ret = write_all(out->fd, out->line_buf, n, done);
		if (ret)
			return ret;
	}
	return 0;
}

static int write_len(struct recv_output *out, const uint8_t *msg, size_t len, size_t *done)
{
	uint8_t hdr[4] = {
		(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
	struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)msg, len}};
	ssize_t n;

	if (len > UINT32_MAX)
		return -EOVERFLOW;

	/* one writev for the common case; finish piecewise after a short write */
	do {
		n = writev(out->fd, iov, len ? 2 : 1);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	*done += (size_t)n;
	if ((size_t)n < sizeof(hdr)) {
		int ret = write_all(out->fd, hdr + n, sizeof(hdr) - (size_t)n, done);

		if (ret)
			return ret;
		n = sizeof(hdr);
	}
	n -= (ssize_t)sizeof(hdr);
	return write_all(out->fd, msg + n, len - (size_t)n, done);
}

static int write_dir_file(struct recv_output *out, const uint8_t *msg, size_t len)
{
	char name[SEQ_DIGITS + 1], tmp[SEQ_DIGITS + 6];
	size_t done = 0;
	int fd, ret;

	snprintf(name, sizeof(name), "%0*" PRIu64, SEQ_DIGITS, out->next_seq);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);

	/*
	 * A new file, never whatever is there under that name: a link planted
	 * in the directory would otherwise take the message outside of it. A
	 * leftover (rpma-recv killed mid-write) is removed and the name reused.
	 */
	fd = openat(out->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 && errno == EEXIST && unlinkat(out->fd, tmp, 0) == 0)
		fd = openat(
			out->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, msg, len, &done);
	/* --fsync: the data is on disk before the name appears */
	if (!ret && out->durable && fdatasync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret) {
		/* never replace a file someone else put there */
		if (renameat2(out->fd, tmp, out->fd, name, RENAME_NOREPLACE)) {
			ret = -errno;
			if (ret == -EINVAL || ret == -ENOSYS)
				ret = renameat(out->fd, tmp, out->fd, name) ? -errno : 0;
		}
	}
	if (ret) {
		(void)unlinkat(out->fd, tmp, 0);
		return ret;
	}
	out->next_seq++;
	return 0;
}

int recv_output_write(struct recv_output *out, const void *msg, size_t len)
{
	size_t done = 0;
	int ret;

	switch (out->format) {
	case RECV_FORMAT_RAW:
		ret = write_all(out->fd, msg, len, &done);
		break;
	case RECV_FORMAT_LINES:
		ret = write_lines(out, msg, len, &done);
		break;
	case RECV_FORMAT_LEN:
		ret = write_len(out, msg, len, &done);
		break;
	case RECV_FORMAT_DIR:
		return write_dir_file(out, msg, len);
	default:
		return -EINVAL;
	}
	if (ret)
		roll_back(out, done);
	return ret;
}

/*
 * writev_records -- raw and len: recs[0..n) as one writev (finished piecewise
 * after a short write); 0, or a negative errno with *written the records
 * written whole and the failing one's bytes cut off again
 */
static int writev_records(
	struct recv_output *out, const struct recv_record *recs, size_t n, size_t *written)
{
	struct iovec iov[2 * RECV_OUTPUT_BATCH_MAX];
	uint8_t hdr[RECV_OUTPUT_BATCH_MAX][4];
	size_t rec_of[2 * RECV_OUTPUT_BATCH_MAX]; /* the record each piece belongs to */
	/* done: the bytes of record `first` written so far */
	size_t k = 0, first = 0, done = 0;
	bool len = out->format == RECV_FORMAT_LEN;

	for (size_t i = 0; i < n; i++) {
		if (len) {
			if (recs[i].len > UINT32_MAX)
				return -EOVERFLOW; /* nothing written: *written stays 0 */
			for (int b = 0; b < 4; b++)
				hdr[i][b] = (uint8_t)(recs[i].len >> (8 * b));
			iov[k] = (struct iovec){hdr[i], sizeof(hdr[i])};
			rec_of[k++] = i;
		}
		if (recs[i].len) {
			iov[k] = (struct iovec){(void *)recs[i].msg, recs[i].len};
			rec_of[k++] = i;
		}
	}
	for (size_t at = 0; at < k;) {
		ssize_t w = writev(out->fd, iov + at, (int)(k - at));

		if (w < 0) {
			if (errno == EINTR)
				continue;
			int ret = -errno;

			roll_back(out, done);
			*written = first;
			return ret;
		}
		/* step over what went out: whole pieces, then part of one */
		while (at < k && (size_t)w >= iov[at].iov_len) {
			w -= (ssize_t)iov[at].iov_len;
			done += iov[at].iov_len;
			at++;
			if (at == k || rec_of[at] != rec_of[at - 1]) {
				first = at == k ? n : rec_of[at];
				done = 0;
			}
		}
		if (w > 0) {
			iov[at].iov_base = (uint8_t *)iov[at].iov_base + w;
			iov[at].iov_len -= (size_t)w;
			done += (size_t)w;
		}
	}
	/* records of 0 bytes in raw have no piece: they are written too */
	*written = n;
	return 0;
}

int recv_output_write_batch(
	struct recv_output *out, const struct recv_record *recs, size_t n, size_t *written)
{
	int ret;

	*written = 0;
	if (n > RECV_OUTPUT_BATCH_MAX)
		return -EINVAL;
	if (out->format == RECV_FORMAT_RAW || out->format == RECV_FORMAT_LEN)
		return writev_records(out, recs, n, written);
	/* lines (escaped chunk by chunk) and dir (a file each): one record at a time */
	for (size_t i = 0; i < n; i++) {
		ret = recv_output_write(out, recs[i].msg, recs[i].len);
		if (ret)
			return ret;
		*written = i + 1;
	}
	return 0;
}

/* the number after the highest 20-digit name in the directory, or 1 */
static int first_free_seq(int dirfd, uint64_t *seq)
{
	int fd = dup(dirfd);
	DIR *dir;
	struct dirent *de;
	uint64_t max = 0;

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	while ((de = readdir(dir)) != NULL) {
		uint64_t v;

		if (strlen(de->d_name) != SEQ_DIGITS ||
			strspn(de->d_name, "0123456789") != SEQ_DIGITS)
			continue;
		v = strtoull(de->d_name, NULL, 10);
		if (v > max)
			max = v;
	}
	closedir(dir);
	if (max == UINT64_MAX)
		return -EOVERFLOW;
	*seq = max + 1;
	return 0;
}

/*
 * lock_output -- one rpma-recv per output: an exclusive flock(2) on the
 * file or the directory, held while it is open. EWOULDBLOCK: another has it.
 */
static int lock_output(int fd)
{
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			return -1;
		if (errno != EINTR)
			return 0; /* a file system without locks: not ours to refuse */
	}
	return 0;
}

static int open_dir(struct recv_output *out, const char *path)
{
	int ret;

	out->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (out->fd < 0 && errno == ENOENT) {
		if (mkdir(path, 0777) && errno != EEXIST)
			return -errno;
		out->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (out->fd < 0)
		return -errno;
	out->own_fd = true;
	if (lock_output(out->fd))
		return -errno;
	ret = first_free_seq(out->fd, &out->next_seq);
	return ret;
}

static int open_stream(struct recv_output *out, const char *path)
{
	struct stat st;

	if (path) {
		/* never O_TRUNC: what an earlier run acknowledged stays (--fresh truncates) */
		/*
		 * Read back only for recovery (its last whole record), so only a
		 * regular file is opened for reading too: a FIFO opened so would
		 * never see its reader go (EPIPE)
		 */
		bool rd = stat(path, &st) != 0 || S_ISREG(st.st_mode);

		out->fd = open(path, (rd ? O_RDWR : O_WRONLY) | O_CREAT | O_CLOEXEC, 0666);
		if (out->fd < 0 && rd && errno == EACCES) /* a write-only file */
			out->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
		if (out->fd < 0)
			return -errno;
		out->own_fd = true;
		if (lock_output(out->fd))
			return -errno;
	} else {
		out->fd = STDOUT_FILENO;
		if (fcntl(out->fd, F_GETFL) < 0)
			return -errno; /* standard output is closed */
	}
	if (fstat(out->fd, &st))
		return -errno;
	out->rollback = S_ISREG(st.st_mode);
	/* continue at the end (recv_output_recover() may cut back first) */
	if (out->rollback && path && lseek(out->fd, 0, SEEK_END) < 0)
		return -errno;

	if (out->format == RECV_FORMAT_LINES) {
		out->line_buf = malloc(LINE_CHUNK);
		if (!out->line_buf)
			return -ENOMEM;
	}
	return 0;
}

int recv_output_open(enum recv_format format, const char *path, struct recv_output **out_ptr)
{
	struct recv_output *out;
	int ret;

	if (format == RECV_FORMAT_DIR && !path)
		return -EINVAL;

	out = calloc(1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	out->format = format;
	out->fd = -1;
	out->name = strdup(path ? path : "standard output");
	if (!out->name) {
		free(out);
		return -ENOMEM;
	}

	ret = format == RECV_FORMAT_DIR ? open_dir(out, path) : open_stream(out, path);
	if (ret) {
		struct recv_output *tmp = out;

		(void)recv_output_close(&tmp);
		return ret;
	}
	*out_ptr = out;
	return 0;
}

int recv_output_close(struct recv_output **out_ptr)
{
	struct recv_output *out = *out_ptr;
	int ret = 0;

	if (!out)
		return 0;
	if (out->own_fd && out->fd >= 0 && close(out->fd))
		ret = -errno;
	free(out->line_buf);
	free(out->name);
	free(out);
	*out_ptr = NULL;
	return ret;
}

void recv_output_set_durable(struct recv_output *out, bool durable)
{
	out->durable = durable;
}

int recv_output_sync(struct recv_output *out)
{
	/* dir: the files were synced one by one; the renames live in the directory */
	int ret = out->format == RECV_FORMAT_DIR ? fsync(out->fd) : fdatasync(out->fd);

	/* a pipe, a terminal, a socket: nothing to sync, the write was all there is */
	if (ret && (errno == EINVAL || errno == EROFS || errno == ENOTSUP))
		return 0;
	return ret ? -errno : 0;
}

bool recv_output_lasts(const struct recv_output *out)
{
	return out->format == RECV_FORMAT_DIR || (out->own_fd && out->rollback);
}

uint64_t recv_output_position(const struct recv_output *out)
{
	off_t at;

	if (out->format == RECV_FORMAT_DIR)
		return out->next_seq;
	at = lseek(out->fd, 0, SEEK_CUR);
	return at < 0 ? 0 : (uint64_t)at;
}

/* is name a 20-digit message file, or a leftover ".<20 digits>.tmp"? its number */
static bool seq_name(const char *name, bool *tmp, uint64_t *v)
{
	size_t len = strlen(name);

	if (len == SEQ_DIGITS + 5 && name[0] == '.' && strcmp(name + 1 + SEQ_DIGITS, ".tmp") == 0 &&
		strspn(name + 1, "0123456789") == SEQ_DIGITS) {
		*tmp = true;
		*v = strtoull(name + 1, NULL, 10);
		return true;
	}
	if (len == SEQ_DIGITS && strspn(name, "0123456789") == SEQ_DIGITS) {
		*tmp = false;
		*v = strtoull(name, NULL, 10);
		return true;
	}
	return false;
}

/* dir: remove leftover .N.tmp and, with a recorded next number, files at or past it */
static int recover_dir(struct recv_output *out, const uint64_t *next, uint64_t *cut)
{
	int fd = dup(out->fd), ret = 0;
	DIR *dir;
	struct dirent *de;

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		ret = -errno;
		close(fd);
		return ret;
	}
	rewinddir(dir); /* the dup shares its offset with out->fd, read to the end before */
	while ((de = readdir(dir)) != NULL) {
		bool tmp;
		uint64_t v;

		if (!seq_name(de->d_name, &tmp, &v) || (!tmp && (!next || v < *next)))
			continue;
		if (unlinkat(out->fd, de->d_name, 0) && errno != ENOENT) {
			ret = -errno;
			break;
		}
		if (!tmp)
			++*cut;
	}
	closedir(dir);
	if (!ret && next && *next > 0)
		out->next_seq = *next;
	return ret;
}

/* len: the end of the last whole record from the start of the file */
static int len_whole_end(int fd, uint64_t size, uint64_t *end)
{
	uint64_t at = 0;
	uint8_t hdr[4];

	for (;;) {
		ssize_t n;
		uint64_t len;

		if (size - at < 4)
			break;
		n = pread(fd, hdr, 4, (off_t)at);
		if (n < 0)
			return -errno;
		if (n < 4)
			break;
		len = (uint64_t)hdr[0] | (uint64_t)hdr[1] << 8 | (uint64_t)hdr[2] << 16 |
		      (uint64_t)hdr[3] << 24;
		if (size - at - 4 < len)
			break;
		at += 4 + len;
	}
	*end = at;
	return 0;
}

/* lines: just past the last '\n' */
static int lines_whole_end(int fd, uint64_t size, uint64_t *end)
{
	uint8_t buf[4096];
	uint64_t at = size;

	while (at > 0) {
		size_t want = at < sizeof(buf) ? (size_t)at : sizeof(buf);
		ssize_t n = pread(fd, buf, want, (off_t)(at - want));

		if (n < 0)
			return -errno;
		if ((size_t)n < want)
			return -EIO;
		for (size_t i = want; i > 0; i--) {
			if (buf[i - 1] == '\n') {
				*end = at - want + i;
				return 0;
			}
		}
		at -= want;
	}
	*end = 0;
	return 0;
}

int recv_output_recover(struct recv_output *out, const uint64_t *position, uint64_t *cut)
{
	struct stat st;
	uint64_t end;
	int ret;

	*cut = 0;
	if (out->format == RECV_FORMAT_DIR)
		return recover_dir(out, position, cut);
	if (!out->rollback || !out->own_fd)
		return 0;
	if (fstat(out->fd, &st))
		return -errno;
	end = (uint64_t)st.st_size;
	if (position && *position <= end) {
		end = *position;
	} else {
		/* no state (or a file shorter than it says): the last whole record */
		ret = 0;
		if (out->format == RECV_FORMAT_LEN)
			ret = len_whole_end(out->fd, end, &end);
		else if (out->format == RECV_FORMAT_LINES)
			ret = lines_whole_end(out->fd, end, &end);
		if (ret == -EBADF) /* write-only: cannot be read back, kept whole */
			ret = 0, end = (uint64_t)st.st_size;
		if (ret)
			return ret;
	}
	if (end < (uint64_t)st.st_size && ftruncate(out->fd, (off_t)end))
		return -errno;
	*cut = (uint64_t)st.st_size - end;
	if (lseek(out->fd, (off_t)end, SEEK_SET) < 0)
		return -errno;
	return 0;
}

int recv_output_truncate(struct recv_output *out)
{
	if (out->format == RECV_FORMAT_DIR || !out->rollback || !out->own_fd)
		return 0;
	if (ftruncate(out->fd, 0) || lseek(out->fd, 0, SEEK_SET) < 0)
		return -errno;
	return 0;
}
