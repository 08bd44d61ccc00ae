#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The 0-byte message is an intent to send nothing (docs/design.md §4.1):
an open with O_TRUNC, or a truncation to 0 through the open file, with no
write and no failed operation on it. Each command a user may run against a
spool file, with the number of messages it must send. Null peers: no RDMA
needed."""
import mmap
import sys

import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "fs"))
from fslab import *  # noqa: E402


def py(code):
    return "python3 -c '%s'" % code


# (what, shell command run in the mount, messages it sends, exit status zero?)
CASES = [
    ("': > f'", ": > alpha", 1, True),
    ("printf '' > f", "printf '' > alpha", 1, True),
    ("truncate -s 0 f", "truncate -s 0 alpha", 1, True),
    ("exec 3>f (O_TRUNC: an intent, documented)", "exec 3>alpha; exec 3>&-", 1, True),
    ("echo hi > f", "echo hi > alpha", 1, True),
    ("echo hi >> f", "echo hi >> alpha", 1, True),
    (">> f with nothing written", ": >> alpha", 0, True),
    ("exec 3>>f, look, close", "exec 3>>alpha; ls -l /proc/$$/fd/3 >/dev/null; exec 3>&-", 0, True),
    ("( flock 9; ... ) 9>>f", "( flock 9; true ) 9>>alpha", 0, True),
    ("touch f", "touch alpha", 0, True),
    ("truncate -s 10 f (EPERM)", "truncate -s 10 alpha", 0, False),
    ("dd seek=1 (ftruncate EPERM)", "dd if=/dev/null of=alpha bs=1 seek=1 status=none", 0, False),
    ("sync -f f", "sync -f alpha", 0, None),
    ("os.pwrite (ESPIPE)",
     py("import os\nfd = os.open(\"alpha\", os.O_WRONLY)\ntry: os.pwrite(fd, b\"x\", 5)\n"
        "except OSError as e: print(e)\nos.close(fd)"), 0, True),
    ("mmap (no shared writable mapping)",
     py("import os, mmap\nfd = os.open(\"alpha\", os.O_WRONLY)\ntry: mmap.mmap(fd, 1)\n"
        "except (OSError, ValueError) as e: print(e)\nos.close(fd)"), 0, True),
    ("copy_file_range",
     py("import os\nsrc = os.open(\"/etc/hostname\", os.O_RDONLY)\nfd = os.open(\"alpha\", os.O_WRONLY)\n"
        "try: os.copy_file_range(src, fd, 4)\nexcept OSError as e: print(e)\nos.close(fd)"), None, True),
]


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
