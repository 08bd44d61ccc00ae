/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link.h -- a spool's RDMA connection: made, used, torn down
 *
 * Connecting blocks (address and route resolution, the CM handshake), so
 * each attempt runs in a short-lived thread of its own and hands its result
 * to the engine thread, which owns the link from then on.
 */
#ifndef RPMAFS_LINK_H
#define RPMAFS_LINK_H

#include <stdbool.h>
#include <stdint.h>

struct spool;
struct msg;
struct device;
struct rpma_conn;
struct rpma_cq;

/* what epoll reports a link's descriptors as */
enum engine_src_type { SRC_WAKE, SRC_TIMER, SRC_EVENT, SRC_CQ };
struct engine_src {
	enum engine_src_type type;
	struct link *link;
};

struct link {
	struct spool *sp;
	struct device *dev;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int event_fd, compl_fd;
	struct engine_src ev_src, cq_src;
	bool down;		/* lost or being closed: no more posts */
	bool error_seen;	/* a failed completion was recorded since up */
	struct link *next_dead;
};

/* the outcome of one connection attempt, delivered to the engine */
struct link_attempt {
	struct spool *sp;
	struct link *link;	/* NULL when the attempt failed */
	bool permanent;		/* retrying will not help without a change */
	uint32_t peer_max;	/* the receiver's advertised limit, 0: none */
	unsigned credits;	/* the receiver's posted receives, 0: unknown */
	char why[256];
	struct link_attempt *next;
};

/* link_connect_async -- start an attempt for sp; the engine gets the result */
int link_connect_async(struct spool *sp);

/* link_post -- post msg on the link (signaled or not as msg says) */
int link_post(struct link *link, struct msg *msg);

/* link_disconnect -- start an orderly close; completions flush */
void link_disconnect(struct link *link);

/* link_delete -- free the connection and the link; NULLs the pointer */
void link_delete(struct link **link_ptr);

#endif /* RPMAFS_LINK_H */
