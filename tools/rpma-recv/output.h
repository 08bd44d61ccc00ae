/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * output.h -- where and how rpma-recv writes the messages it receives
 *
 * Every message is one record, a 0-byte message included:
 *   raw    the payload as is, records back to back (no boundaries)
 *   lines  one line per message: one trailing '\n' of the payload is
 *          dropped, then every '\' becomes "\\" and every '\n' becomes "\n"
 *          (backslash, letter n), and the line ends with '\n'
 *   len    a 4-byte little-endian length, then the payload (binary-safe)
 *   dir    one file per message in a directory, named by a 20-digit
 *          zero-padded sequence number that counts on from the highest such
 *          name already there; written as ".<name>.tmp" and renamed into
 *          place, so a reader never sees a partial file
 */
#ifndef RPMA_RECV_OUTPUT_H
#define RPMA_RECV_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum recv_format { RECV_FORMAT_RAW, RECV_FORMAT_LINES, RECV_FORMAT_LEN, RECV_FORMAT_DIR };

/* recv_format_parse -- "raw", "lines", "len" or "dir"; 0 or -1 */
int recv_format_parse(const char *name, enum recv_format *format);

/* recv_format_name -- the name recv_format_parse() accepts */
const char *recv_format_name(enum recv_format format);

struct recv_output;

/*
 * recv_output_open -- open the output: path NULL means standard output
 * (not for dir). A stream file is created when missing and continued at
 * its end, never truncated (recv_output_truncate() is --fresh); a dir is
 * created when missing (one level). A file or dir opened by path is
 * locked (flock, exclusive): -EWOULDBLOCK when another rpma-recv holds it.
 * Returns 0 or a negative errno.
 */
int recv_output_open(enum recv_format format, const char *path, struct recv_output **out_ptr);

/*
 * recv_output_write -- write one message of len bytes as one record.
 * Returns 0 or a negative errno. When it fails, the part of the record
 * already written is removed again where the output allows it (regular
 * files and dir), so records written before stay whole. -EPIPE means the
 * reader of a pipe is gone: nothing can be written any more.
 */
int recv_output_write(struct recv_output *out, const void *msg, size_t len);

/* one message of a batch */
struct recv_record {
	const void *msg;
	size_t len;
};

/* the most records one recv_output_write_batch() takes */
#define RECV_OUTPUT_BATCH_MAX 64

/*
 * recv_output_write_batch -- write n (at most RECV_OUTPUT_BATCH_MAX) messages
 * as n records, in order, as recv_output_write() would one by one, with as
 * few system calls as the format allows: raw and len, one writev(2) of all
 * of them (continued after a short write); lines and dir, one record at a
 * time. Returns 0 with all written, or a negative errno with *written set
 * to how many records were written whole before the failure (the failing
 * one's bytes removed again where the output allows, as recv_output_write()
 * does; nothing after it is written).
 */
int recv_output_write_batch(
	struct recv_output *out, const struct recv_record *recs, size_t n, size_t *written);

/*
 * recv_output_set_durable -- --fsync: dir files are fdatasync'd before
 * their rename (streams are synced by recv_output_sync())
 */
void recv_output_set_durable(struct recv_output *out, bool durable);

/*
 * recv_output_sync -- make every record written so far durable:
 * fdatasync() of a stream, fsync() of the directory for dir (the renames).
 * An output that cannot be synced (pipe, terminal) counts as synced.
 * Returns 0 or a negative errno.
 */
int recv_output_sync(struct recv_output *out);

/*
 * recv_output_name -- "standard output", the file's path or the directory's
 * path, for messages
 */
const char *recv_output_name(const struct recv_output *out);

/*
 * recv_output_close -- close the output (standard output is left open) and
 * free it; *out_ptr becomes NULL. Returns 0 or a negative errno from the
 * close.
 */
int recv_output_close(struct recv_output **out_ptr);

/*
 * recv_output_lasts -- the output outlives the process: a regular file
 * opened by path, or a dir (not standard output, a pipe or a terminal)
 */
bool recv_output_lasts(const struct recv_output *out);

/*
 * recv_output_position -- where the output is: a stream's length written
 * so far (its offset), or dir's next sequence number
 */
uint64_t recv_output_position(const struct recv_output *out);

/*
 * recv_output_recover -- at start, before anything is written: with
 * position (what the state file recorded as acknowledged), cut a file
 * back to that length, or remove dir files numbered at or past it and
 * number on from it. Without (no state file): len keeps the whole records
 * from the start and cuts a torn last one, lines cuts after the last
 * '\n', raw keeps everything; dir numbers on after the highest file. Either
 * way dir's leftover ".N.tmp" files are removed. A file shorter than
 * position is treated as without. *cut: the bytes (dir: files) removed.
 * Returns 0 or a negative errno.
 */
int recv_output_recover(struct recv_output *out, const uint64_t *position, uint64_t *cut);

/* recv_output_truncate -- --fresh: a file becomes empty (dir: nothing is removed) */
int recv_output_truncate(struct recv_output *out);

#endif /* RPMA_RECV_OUTPUT_H */
