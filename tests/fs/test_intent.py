#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The 0-byte message is an intent to send nothing (docs/design.md §4.1):
an open with O_TRUNC, or a truncation to 0 through the open file, with no
write and no failed operation on it. Each command a user may run against a
spool file, with the number of messages it must send. Null peers: no RDMA
needed."""
import sys

import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "fs"))
from fslab import *  # noqa: E402
from intent_cases import CASES  # noqa: E402


def settled_count(spool):
    """posted + refused once every spool file description is released."""
    st = wait_until(lambda: (lambda s: s if s["open"] == 0 and s["pending"] == 0 else None)(
        spool.status("alpha")), 20, "alpha's descriptions to be released")
    return st["posted"] + st["refused"]


def body(work):
    need_fuse()
    spool = Spool(work, {"rpmafs": {"slots": 2}, "alpha": {"type": "null"}}).mount()
    before = settled_count(spool)
    for what, cmd, want, ok in CASES:
        r = spool.sh(cmd, check_rc=False)
        if ok is not None:
            check((r.returncode == 0) == ok, "%s: exit status %d (%s)" % (what, r.returncode,
                                                                       r.stderr.strip()))
        after = settled_count(spool)
        if want is None:
            # the kernel decides whether the data goes through a write; 1 at most
            check(after - before <= 1, "%s sent %d messages" % (what, after - before))
        else:
            check(after - before == want, "%s sent %d messages, expected %d" % (
                what, after - before, want))
        before = after
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("intent", body))
