// SPDX-License-Identifier: BSD-3-Clause
/* devices.c -- RDMA devices in use, each with the request pool registered */

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <librpma.h>

#include "devices.h"
#include "runtime/memlock.h"
#include "runtime/pool.h"

struct devices {
	pthread_mutex_t lock;
	struct pool *pool;
	struct device *list;
};

int devices_new(struct pool *pool, struct devices **devs_ptr)
{
	struct devices *devs = calloc(1, sizeof(*devs));

	if (!devs)
		return -ENOMEM;
	pthread_mutex_init(&devs->lock, NULL);
	devs->pool = pool;
	*devs_ptr = devs;
	return 0;
}

void devices_delete(struct devices **devs_ptr)
{
	struct devices *devs = *devs_ptr;
	struct device *dev, *next;

	if (!devs)
		return;
	for (dev = devs->list; dev; dev = next) {
		next = dev->next;
		rpma_mr_dereg(&dev->pool_mr);
		rpma_peer_delete(&dev->peer);
		free(dev);
	}
	pthread_mutex_destroy(&devs->lock);
	free(devs);
	*devs_ptr = NULL;
}

static struct device *find(struct devices *devs, struct ibv_context *ibv)
{
	for (struct device *dev = devs->list; dev; dev = dev->next)
		if (dev->ibv == ibv)
			return dev;
	return NULL;
}

int devices_get(struct devices *devs, const char *address, struct device **dev_ptr, char *why,
	size_t whylen)
{
	struct ibv_context *ibv;
	struct device *dev;
	int ret;

	ret = rpma_utils_get_ibv_context(address, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv);
	if (ret) {
		snprintf(why, whylen, "no RDMA device reaches %s: %s", address, rpma_err_2str(ret));
		return -EHOSTUNREACH;
	}

	pthread_mutex_lock(&devs->lock);
	dev = find(devs, ibv);
	if (dev)
		goto out;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(why, whylen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	dev->ibv = ibv;
	ret = rpma_peer_new(ibv, &dev->peer);
	if (ret) {
		snprintf(why, whylen, "cannot open RDMA device %s: %s",
			ibv_get_device_name(ibv->device), rpma_err_2str(ret));
		ret = -ENODEV;
		free(dev);
		dev = NULL;
		goto out;
	}
	ret = rpma_mr_reg(dev->peer, pool_base(devs->pool), pool_bytes(devs->pool),
		RPMA_MR_USAGE_SEND, &dev->pool_mr);
	if (ret) {
		memlock_explain(pool_bytes(devs->pool), why, whylen);
		ret = -EPERM;
		rpma_peer_delete(&dev->peer);
		free(dev);
		dev = NULL;
		goto out;
	}
	dev->next = devs->list;
	devs->list = dev;
out:
	pthread_mutex_unlock(&devs->lock);
	*dev_ptr = dev;
	return dev ? 0 : ret;
}
