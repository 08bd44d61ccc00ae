/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * received.h -- bytes the RDMA provider wrote into our memory
 *
 * The provider (the kernel, for rxe; the NIC's DMA on hardware) writes
 * received messages into registered buffers behind valgrind's back, so
 * memcheck takes them for uninitialised memory and reports every branch on
 * them (a MAC check, a header parse). RECEIVED(addr, len) says those bytes
 * are now defined: a no-op outside valgrind, and nothing at all without
 * valgrind's header. Used wherever a receive completion's bytes are first
 * looked at.
 */
#ifndef RPMAFS_RECEIVED_H
#define RPMAFS_RECEIVED_H

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define RECEIVED(addr, len) ((void)VALGRIND_MAKE_MEM_DEFINED(addr, len))
#endif
#endif
#ifndef RECEIVED
#define RECEIVED(addr, len) ((void)(addr), (void)(len))
#endif

#endif /* RPMAFS_RECEIVED_H */
