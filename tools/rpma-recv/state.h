/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state.h -- rpma-recv's state file: what an output that lasts
 * (--output FILE, --output DIR) has acknowledged, and the duplicate table
 * (common/sessions.h), so that a restarted rpma-recv neither loses nor
 * writes twice what an earlier run acknowledged (docs/design.md §8.6)
 *
 * Beside the output: DIR/.rpma-recv-state, or .NAME.rpma-recv-state in
 * FILE's directory. Little-endian; a header, written once per start (a
 * new file renamed into place), then two slots written in turn:
 *
 *	header, at 0, 64 bytes
 *	0	4	magic "RPRS"
 *	4	2	version 1
 *	6	2	header size, 64
 *	8	4	slot size S (32 + the largest sessions blob)
 *	12	4	format: 0 raw, 1 lines, 2 len, 3 dir
 *	16	44	0 (reserved)
 *	60	4	CRC-32C of bytes 0 .. 59
 *
 *	slot k (0, 1), at 64 + k * S
 *	0	4	magic "RPSL"
 *	4	4	length L of the sessions blob, <= S - 32
 *	8	8	generation: the slot with the higher valid one wins
 *	16	8	position: the file's acknowledged length, or dir's next number
 *	24	4	0 (reserved)
 *	28	4	CRC-32C of bytes 0 .. 27 and the blob
 *	32	L	the sessions blob (rpmafs_sessions_encode)
 *
 * A save writes the slot the older generation is in, so a torn write
 * leaves the other, the previous good state. Saved before every
 * acknowledgement; with --fsync the output is synced first and the slot
 * after its write (fdatasync), so nothing acknowledged is ever past what
 * a slot on disk says.
 */
#ifndef RPMA_RECV_STATE_H
#define RPMA_RECV_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"
#include "sessions.h"

#define RECV_STATE_HEADER 64
#define RECV_STATE_SLOT_HEAD 32
#define RECV_STATE_NAME ".rpma-recv-state"

struct recv_state;

/* recv_state_crc32c -- CRC-32C (Castagnoli) of len bytes, continued from crc (0 to start) */
uint32_t recv_state_crc32c(uint32_t crc, const void *buf, size_t len);

/*
 * recv_state_path -- the state file's path for output path: 0, or -1
 * when it does not fit in cap
 */
int recv_state_path(enum recv_format format, const char *output, char *buf, size_t cap);

/*
 * recv_state_load -- read the state file at path into sessions (replacing
 * its contents) and *position. 1: loaded; 0: there is no state file;
 * negative errno: unreadable, or damaged (-EINVAL: no valid header or
 * slot, -EMEDIUMTYPE: written for another format), *why saying what.
 */
int recv_state_load(const char *path, enum recv_format format, struct rpmafs_sessions *sessions,
	uint64_t *position, const char **why);

/*
 * recv_state_create -- a new state file at path (written beside it as
 * PATH.tmp, synced and renamed into place, the directory synced), its
 * slot 0 holding position and sessions, room for max_sessions. 0 or a
 * negative errno.
 */
int recv_state_create(const char *path, enum recv_format format, unsigned max_sessions,
	uint64_t position, const struct rpmafs_sessions *sessions, struct recv_state **out);

/*
 * recv_state_save -- position and sessions into the older slot; durable:
 * fdatasync after. 0 or a negative errno.
 */
int recv_state_save(struct recv_state *st, uint64_t position,
	const struct rpmafs_sessions *sessions, bool durable);

/* recv_state_remove -- --fresh: the state file at path is gone (0, or a negative errno) */
int recv_state_remove(const char *path);

/* recv_state_close -- close and free (NULL is fine); *st = NULL */
void recv_state_close(struct recv_state **st);

#endif /* RPMA_RECV_STATE_H */
