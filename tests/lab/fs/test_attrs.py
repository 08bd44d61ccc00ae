#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""stat is fresh on every call (docs/design.md §4.3): the spool's attributes are cached
by the kernel for a long time, so a completion that arrives after a stat
must invalidate them. Here completions are held back (the receiver is
stopped, so the sends wait for receives) while we stat, then let go."""
import sys

from fslab import *


def body(work):
    _, b = need_lab()
    recv = Receiver(work, b, args=["--slots", "2"]).start()
    spool = Spool(work, {"alpha": {"address": b, "port": recv.port, "send_timeout_ms": 20000}}).mount()
    path = spool.file("alpha")

    check(spool.write("alpha", b"a") == 0, "first write")
    spool.settled("alpha")
    check(os.stat(path).st_size == 1, "stat after the first message")

    recv.proc.send_signal(signal.SIGSTOP)
    fd = os.open(path, os.O_WRONLY)
    for i in range(6):
        os.write(fd, b"%02d" % i)
        if spool.status("alpha")["in_flight"] > 0:
            break
    os.close(fd)
    time.sleep(0.3)
    st = spool.status("alpha")
    check(st["in_flight"] > 0, "nothing is held back: %s" % st)
    before = os.stat(path)
    check(before.st_size == st["bytes_confirmed"], "stat %d, status %d" % (before.st_size, st["bytes_confirmed"]))

    recv.proc.send_signal(signal.SIGCONT)
    st = spool.settled("alpha")
    after = os.stat(path)
    check(st["bytes_confirmed"] > before.st_size, "nothing completed after the stop: %s" % st)
    check(after.st_size == st["bytes_confirmed"],
          "stale stat: st_size %d, but %d bytes are confirmed" % (after.st_size, st["bytes_confirmed"]))
    check(after.st_ctime > before.st_ctime, "st_ctime did not move with the completions")
    print("held back %d messages; stat %d -> %d bytes" % (st["posted"] - 1, before.st_size, after.st_size))
    spool.unmount()
    recv.stop()


sys.exit(run("attrs", body))
