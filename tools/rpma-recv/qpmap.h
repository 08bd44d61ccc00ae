/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qpmap.h -- which connection a queue pair number belongs to
 *
 * With a shared receive queue every connection's messages complete on one
 * receive CQ, and wc.qp_num is all that tells them apart: this map finds
 * the connection in constant time, for thousands of connections. Open
 * addressing with linear probing; it grows (doubling) at half full.
 */
#ifndef RPMA_RECV_QPMAP_H
#define RPMA_RECV_QPMAP_H

#include <stddef.h>
#include <stdint.h>

struct recv_qpmap;

/* recv_qpmap_new -- an empty map; 0, or -ENOMEM */
int recv_qpmap_new(struct recv_qpmap **map_ptr);

/* recv_qpmap_delete -- free the map (not the values); *map_ptr becomes NULL */
void recv_qpmap_delete(struct recv_qpmap **map_ptr);

/*
 * recv_qpmap_put -- map qp_num to value (not NULL), replacing what it mapped
 * to; 0, or -ENOMEM (the map is unchanged)
 */
int recv_qpmap_put(struct recv_qpmap *map, uint32_t qp_num, void *value);

/* recv_qpmap_get -- what qp_num maps to, or NULL */
void *recv_qpmap_get(const struct recv_qpmap *map, uint32_t qp_num);

/* recv_qpmap_remove -- forget qp_num (nothing when it is not there) */
void recv_qpmap_remove(struct recv_qpmap *map, uint32_t qp_num);

/* recv_qpmap_count -- how many numbers are mapped */
size_t recv_qpmap_count(const struct recv_qpmap *map);

#endif /* RPMA_RECV_QPMAP_H */
