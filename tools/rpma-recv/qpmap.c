// SPDX-License-Identifier: BSD-3-Clause
/* qpmap.c -- queue pair number to connection, open addressing */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "qpmap.h"

#define MIN_CAPACITY 64 /* a power of two */

struct entry {
	uint32_t qp_num;
	void *value; /* NULL: a free entry */
};

struct recv_qpmap {
	struct entry *e;
	size_t capacity; /* a power of two */
	size_t count;
};

/* queue pair numbers are often consecutive: spread them (Fibonacci hashing) */
static size_t home(const struct recv_qpmap *map, uint32_t qp_num)
{
	return (size_t)((qp_num * 2654435769u) & (map->capacity - 1));
}

int recv_qpmap_new(struct recv_qpmap **map_ptr)
{
	struct recv_qpmap *map = calloc(1, sizeof(*map));

	if (!map)
		return -ENOMEM;
	map->e = calloc(MIN_CAPACITY, sizeof(*map->e));
	if (!map->e) {
		free(map);
		return -ENOMEM;
	}
	map->capacity = MIN_CAPACITY;
	*map_ptr = map;
	return 0;
}

void recv_qpmap_delete(struct recv_qpmap **map_ptr)
{
	if (!*map_ptr)
		return;
	free((*map_ptr)->e);
	free(*map_ptr);
	*map_ptr = NULL;
}

/* find -- the entry holding qp_num, or the free entry where it would go */
static struct entry *find(const struct recv_qpmap *map, uint32_t qp_num)
{
	size_t i = home(map, qp_num);

	while (map->e[i].value && map->e[i].qp_num != qp_num)
		i = (i + 1) & (map->capacity - 1);
	return &map->e[i];
}

static int grow(struct recv_qpmap *map)
{
	struct recv_qpmap bigger = {NULL, map->capacity * 2, 0};

	bigger.e = calloc(bigger.capacity, sizeof(*bigger.e));
	if (!bigger.e)
		return -ENOMEM;
	for (size_t i = 0; i < map->capacity; i++) {
		if (map->e[i].value) {
			*find(&bigger, map->e[i].qp_num) = map->e[i];
			bigger.count++;
		}
	}
	free(map->e);
	*map = bigger;
	return 0;
}

int recv_qpmap_put(struct recv_qpmap *map, uint32_t qp_num, void *value)
{
	struct entry *e = find(map, qp_num);

	if (e->value) {
		e->value = value;
		return 0;
	}
	if ((map->count + 1) * 2 > map->capacity) {
		if (grow(map))
			return -ENOMEM;
		e = find(map, qp_num);
	}
	e->qp_num = qp_num;
	e->value = value;
	map->count++;
	return 0;
}

void *recv_qpmap_get(const struct recv_qpmap *map, uint32_t qp_num)
{
	return find(map, qp_num)->value;
}

void recv_qpmap_remove(struct recv_qpmap *map, uint32_t qp_num)
{
	size_t mask = map->capacity - 1;
	size_t hole = (size_t)(find(map, qp_num) - map->e);

	if (!map->e[hole].value)
		return;
	map->e[hole].value = NULL;
	map->count--;
	/*
	 * Backward shift: entries after the hole that would no longer be
	 * found (their home lies at or before the hole, cyclically) move into
	 * it, so that lookups never need tombstones.
	 */
	for (size_t i = (hole + 1) & mask; map->e[i].value; i = (i + 1) & mask) {
		size_t h = home(map, map->e[i].qp_num);
		bool reachable = hole <= i ? (h > hole && h <= i) : (h > hole || h <= i);

		if (reachable)
			continue;
		map->e[hole] = map->e[i];
		map->e[i].value = NULL;
		hole = i;
	}
}

size_t recv_qpmap_count(const struct recv_qpmap *map)
{
	return map->count;
}
