/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * counters.h -- a spool's counters (docs/design.md §4.3, §8.2), kept
 * current under the spool's lock by send.c, events.c and confirm.c, and
 * copied out by spool_stats_get() for the status file. ever_up is kept
 * here only: the spool has no copy of its own.
 */
#ifndef RPMAFS_COUNTERS_H
#define RPMAFS_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct spool_stats {
	const char *state;	/* connecting | connected | reconnecting | failed */
	uint64_t posted, completed, failed, refused;
	uint64_t bytes_posted, bytes_confirmed;
	uint64_t in_flight, pending, reconnects, payload_copies;
	uint64_t small_copies;	/* of payload_copies: small payloads copied into small slots */
	uint64_t open_handles;	/* spool file descriptions open now */
	uint64_t post_calls;	/* chains of sends posted (one ibv_post_send each) */
	uint64_t sync_reaped;	/* sync messages ended in a worker's reap, not the loop's (await.h) */
	uint64_t last_wr_id;
	uint64_t resent;	/* receiver confirmation: posted again after a reconnection */
	uint64_t acked;		/* receiver confirmation: acknowledged by the receiver */
	uint64_t unacked;	/* completed, not acknowledged yet */
	uint64_t bad_acks;	/* connections dropped for an acknowledgement that cannot be true */
	uint64_t session;	/* the session the link offers now (link_session), 0: none */
	bool confirm_receiver;	/* the last connection was receiver-confirmed */
	bool ever_up;		/* a connection was up since the mount */
	uint32_t max_message;	/* the limit in force */
	int last_wc_status;	/* -1: no failed completion yet */
	bool error_recorded;	/* last_error holds an error */
	char last_error[200];
	struct timespec mtime;	/* last posted message */
	struct timespec ctime;	/* last completion */
};

#endif /* RPMAFS_COUNTERS_H */
