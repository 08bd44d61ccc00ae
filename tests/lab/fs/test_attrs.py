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
    # about transport completions (a message held in flight by a stopped
    # receiver) and a close that does not wait for them
    spool = Spool(work, {"alpha": {"address": b, "port": recv.port, "send_timeout_ms": 20000,
                                   "confirm": "transport", "close": "return"}}).mount()
    path = spool.file("alpha")

    check(spool.write("alpha", b"a") == 0, "first write")
    spool.settled("alpha")
    check(os.stat(path).st_size == 1, "stat after the first message")

    recv.proc.send_signal(signal.SIGSTOP)
    # the stopped receiver's kernel takes in at most its 2 posted receives
    # (1 if it had not posted the first one again): of these 3, at least
    # one stays in flight until it resumes, and no write waits for the
    # window (the receiver's 2 credits)
    fd = os.open(path, os.O_WRONLY)
    for i in range(3):
        os.write(fd, b"%02d" % i)
    os.close(fd)
    wait_until(lambda: spool.status("alpha")["in_flight"] > 0, SAFETY_S, "a message held back")

    def stat_between_equal_statuses():
        """(status, stat) with the status the same before and after the
        stat: no completion came in between, so the two must agree."""
        s1 = spool.status("alpha")
        fst = os.stat(path)
        s2 = spool.status("alpha")
        return (s2, fst) if s1["bytes_confirmed"] == s2["bytes_confirmed"] else None

    st, before = wait_until(stat_between_equal_statuses, SAFETY_S, "a quiet moment to compare stat and status")
    check(st["in_flight"] > 0, "nothing is held back: %s" % st)
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
