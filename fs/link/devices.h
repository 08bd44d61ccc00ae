/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devices.h -- RDMA devices in use, each with the request pool registered
 *
 * Memory is registered per protection domain, so the shared pool gets one
 * registration per device that reaches a peer -- not one per peer.
 */
#ifndef RPMAFS_DEVICES_H
#define RPMAFS_DEVICES_H

#include <stddef.h>

struct pool;
struct rpma_peer;
struct rpma_mr_local;

struct device {
	struct device *next;
	struct ibv_context *ibv;
	struct rpma_peer *peer;
	struct rpma_mr_local *pool_mr;
};

struct devices;

int devices_new(struct pool *pool, struct devices **devs_ptr);
void devices_delete(struct devices **devs_ptr);

/*
 * devices_get -- the device that reaches address, with the pool registered
 * on it. On failure explains in why and returns -EHOSTUNREACH (no route or
 * device: worth retrying), -EPERM (the pool cannot be registered: retrying
 * will not help), -ENODEV or -ENOMEM.
 */
int devices_get(
	struct devices *devs, const char *address, struct device **dev, char *why, size_t whylen);

#endif /* RPMAFS_DEVICES_H */
