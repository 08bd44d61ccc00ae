#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The 0-byte intent rule end to end (docs/design.md §4.1): each command of
intent_cases runs against a spool whose receiver is rpma-recv on the lab's
Soft-RoCE link, followed by a marker message once the command's file is
released; what arrives between two markers is what the command sent."""
import sys

from fslab import *
from intent_cases import CASES


def body(work):
    _, b = need_lab()
    recv = Receiver(work, b).start()
    spool = Spool(work, {"alpha": {"address": b, "port": recv.port}}).mount()
    expected = []
    for n, (what, cmd, want, ok) in enumerate(CASES):
        r = spool.sh(cmd, check_rc=False)
        if ok is not None:
            check((r.returncode == 0) == ok, "%s: exit status %d (%s)" % (what, r.returncode,
                                                                       r.stderr.strip()))
        wait_until(lambda: spool.status("alpha")["open"] == 0, 30, "%s to be released" % what)
        check(spool.write("alpha", b"marker %d" % n) == 0, "the marker after %s failed" % what)
        expected.append((what, want))
    spool.settled("alpha")
    wait_until(lambda: b"marker %d" % (len(CASES) - 1) in recv.messages(), 30, "the last marker")
    msgs = recv.messages()
    start = 0
    for n, (what, want) in enumerate(expected):
        end = msgs.index(b"marker %d" % n, start)
        got = msgs[start:end]
        empties = sum(1 for m in got if m == b"")
        if want is not None:
            check(len(got) == want, "%s: %d messages arrived (%r), expected %d" % (
                what, len(got), got[:3], want))
        else:
            check(len(got) <= 1, "%s: %d messages arrived" % (what, len(got)))
        check(empties == len(got) or "echo" in what or "copy_file_range" in what,
              "%s: unexpected payloads %r" % (what, got))
        start = end + 1
    check(spool.status("alpha")["failed"] == 0, "failures: %s" % spool.status("alpha"))
    spool.unmount()


sys.exit(run("intent", body))
