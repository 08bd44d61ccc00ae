#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Message limits (docs/design.md §4.1): a write up to the limit is one message; one
byte more fails with EMSGSIZE and sends nothing. The limit is the smallest
of the config's max_message, what the receiver advertised, and what FUSE
passes whole (1 MiB - 4 KiB, see rpmafs(8))."""
import sys

from fslab import *

FUSE_MAX = 1048576 - 4096


def body(work):
    _, b = need_lab()
    # 16 slots of 1 MiB (the default 256 would take 256 MiB; see test_framing.py)
    r_alpha = Receiver(work, b, name="recv-alpha", args=["--max-message", "1MiB", "--slots", "16"]).start()
    r_beta = Receiver(work, b, name="recv-beta").start()
    r_gamma = Receiver(work, b, name="recv-gamma", args=["--max-message", "1000"]).start()
    spool = Spool(work, {
        "alpha": {"address": b, "port": r_alpha.port},
        "beta": {"address": b, "port": r_beta.port, "max_message": "4K"},
        "gamma": {"address": b, "port": r_gamma.port},
    }).mount()

    limits = {"alpha": FUSE_MAX, "beta": 4096, "gamma": 1000}
    for peer, limit in limits.items():
        st = spool.status(peer)
        check(st["max_message"] == limit, "%s: max_message %s, expected %d" %
              (peer, st["max_message"], limit))

    sent = {}
    for peer, limit in limits.items():
        exact = bytes([len(peer)]) * limit
        check(spool.write(peer, exact) == 0, "%s: a write of exactly %d failed" % (peer, limit))
        e = spool.write(peer, b"y" * (limit + 1))
        check(e == errno.EMSGSIZE, "%s: a write of %d bytes gave errno %s, not EMSGSIZE" %
              (peer, limit + 1, e))
        sent[peer] = [exact]

    # dd bs=1M: more than FUSE passes whole, refused as a whole
    r = spool.sh("dd if=/dev/zero of=alpha bs=1M count=1 status=none", check_rc=False)
    check(r.returncode != 0 and "too long" in r.stderr, "dd bs=1M: %d %s" % (r.returncode, r.stderr))

    for peer, rcv in (("alpha", r_alpha), ("beta", r_beta), ("gamma", r_gamma)):
        st = spool.settled(peer)
        check(st["posted"] == 1 and st["completed"] == 1, "%s: %s" % (peer, st))
        check(st["refused"] >= 1, "%s: refused %s" % (peer, st["refused"]))
        rcv.stop()
        got = rcv.messages()
        check(got == sent[peer], "%s: the receiver got %d messages of sizes %s" %
              (peer, len(got), [len(m) for m in got]))
    spool.unmount()


sys.exit(run("limits", body))
