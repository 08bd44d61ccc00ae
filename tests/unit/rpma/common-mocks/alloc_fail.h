/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_fail.h -- counting and failing malloc/calloc/realloc for the unit tests
 *
 * Test executables are linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free
 * (see meson.build here), so every call the library makes goes through __wrap_*() below.
 * A test arms a failure for the Nth allocation from now and afterwards asks whether it fired;
 * the count of live blocks tells whether the code under test freed what it allocated.
 *
 * The fake provider allocates with the __real_*() functions, so an armed failure only ever
 * hits the library (or the test itself), and the fake's objects are counted by the fake.
 */
#ifndef ALLOC_FAIL_H
#define ALLOC_FAIL_H

#include <stdbool.h>
#include <stddef.h>

/* the unwrapped allocator, for the fake provider and the test helpers */
void *__real_malloc(size_t size);
void *__real_calloc(size_t nmemb, size_t size);
void *__real_realloc(void *ptr, size_t size);
void __real_free(void *ptr);

/* alloc_fail_nth -- the nth allocation from now (1 = the next) returns NULL; 0 disarms */
void alloc_fail_nth(unsigned long nth);

/* alloc_fail_fired -- whether the armed failure has happened since alloc_fail_nth() */
bool alloc_fail_fired(void);

/* alloc_calls -- allocations attempted so far (including failed ones) */
unsigned long alloc_calls(void);

/* alloc_live -- blocks allocated through the wrappers and not freed yet */
long alloc_live(void);

#endif /* ALLOC_FAIL_H */
