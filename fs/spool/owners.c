// SPDX-License-Identifier: BSD-3-Clause
/* owners.c -- which processes wrote through a descriptor (see owners.h) */

#include "owners.h"

void owners_add(struct owners *o, uint64_t owner)
{
	if (o->all)
		return;
	if (owner == 0 || o->n == OWNERS_MAX) {
		o->all = true;
		return;
	}
	for (unsigned i = 0; i < o->n; i++)
		if (o->id[i] == owner)
			return;
	o->id[o->n++] = owner;
}

bool owners_has(const struct owners *o, uint64_t owner)
{
	if (o->all)
		return true;
	for (unsigned i = 0; i < o->n; i++)
		if (o->id[i] == owner)
			return true;
	return false;
}
