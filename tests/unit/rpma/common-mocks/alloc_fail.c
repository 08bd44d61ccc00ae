// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_fail.c -- counting and failing allocation wrappers (see alloc_fail.h)
 */
#include <errno.h>
#include <stdatomic.h>

#include "alloc_fail.h"

static atomic_ulong Calls;
static atomic_ulong Fail_at; /* absolute call number that fails; 0: none */
static atomic_bool Fired;
static atomic_long Live;

static bool take_failure(void)
{
	unsigned long call = atomic_fetch_add(&Calls, 1) + 1;
	unsigned long fail_at = atomic_load(&Fail_at);
	if (fail_at != 0 && call == fail_at) {
		atomic_store(&Fired, true);
		errno = ENOMEM;
		return true;
	}
	return false;
}

void *__wrap_malloc(size_t size)
{
	if (take_failure())
		return NULL;
	void *ptr = __real_malloc(size);
	if (ptr != NULL)
		atomic_fetch_add(&Live, 1);
	return ptr;
}

void *__wrap_calloc(size_t nmemb, size_t size)
{
	if (take_failure())
		return NULL;
	void *ptr = __real_calloc(nmemb, size);
	if (ptr != NULL)
		atomic_fetch_add(&Live, 1);
	return ptr;
}

void *__wrap_realloc(void *old, size_t size)
{
	if (take_failure())
		return NULL;
	void *ptr = __real_realloc(old, size);
	if (old == NULL && ptr != NULL)
		atomic_fetch_add(&Live, 1);
	return ptr;
}

void __wrap_free(void *ptr)
{
	if (ptr != NULL)
		atomic_fetch_sub(&Live, 1);
	__real_free(ptr);
}

void alloc_fail_nth(unsigned long nth)
{
	atomic_store(&Fired, false);
	atomic_store(&Fail_at, nth == 0 ? 0 : atomic_load(&Calls) + nth);
}

bool alloc_fail_fired(void)
{
	return atomic_load(&Fired);
}

unsigned long alloc_calls(void)
{
	return atomic_load(&Calls);
}

long alloc_live(void)
{
	return atomic_load(&Live);
}
