#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""completion = on_error (docs/design.md §4.2): async sends go unsignaled; a signaled
send now and then and a 0-byte RDMA WRITE fence when the spool goes quiet
confirm them, so the figures still settle and fsync still waits. An idle
mount uses no CPU (the completion thread sleeps in epoll)."""
import sys

from fslab import *

N = 500


def cpu_ticks(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def body(work):
    _, b = need_lab()
    recv = Receiver(work, b, args=["--slots", "128"]).start()
    spool = Spool(work, {"alpha": {"address": b, "port": recv.port, "completion": "on_error"}}).mount()
    check(spool.status("alpha")["completion"] == "on_error", "completion is not on_error")

    spool.sh("for i in $(seq 1 %d); do echo m$i; done > alpha" % N)
    st = spool.settled("alpha")
    check(st["posted"] == N and st["completed"] == N and st["failed"] == 0,
          "after %d unsignaled-mostly sends: %s" % (N, st))
    check(st["bytes_confirmed"] == sum(len("m%d\n" % i) for i in range(1, N + 1)),
          "bytes_confirmed %s" % st["bytes_confirmed"])

    # fsync right after writes: it waits for (and fences) the unsignaled ones
    fd = os.open(spool.file("alpha"), os.O_WRONLY)
    for i in range(10):
        os.write(fd, b"f%d" % i)
    os.fsync(fd)
    st = spool.status("alpha")
    check(st["completed"] == N + 10 and st["in_flight"] == 0, "after fsync: %s" % st)
    os.close(fd)

    # idle: no CPU in 3 s, connected
    pid = spool.proc.pid
    t0 = cpu_ticks(pid)
    time.sleep(3)
    used = cpu_ticks(pid) - t0
    check(used <= 1, "an idle mount used %d CPU ticks in 3 s" % used)

    spool.unmount()
    recv.stop()
    got = recv.messages()
    check(got == [b"m%d\n" % i for i in range(1, N + 1)] + [b"f%d" % i for i in range(10)],
          "received %d messages" % len(got))
    print("idle CPU ticks in 3 s: %d" % used)


sys.exit(run("onerror", body))
