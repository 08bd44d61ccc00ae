#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Interop (docs/design.md §3, §5): a plain receiver written against Debian's librpma,
which sends no private data, gets the spool's messages, 0-byte included;
the spool falls back to its configured message limit."""
import sys

from fslab import *


def body(work):
    _, b = need_lab()
    plain = os.environ.get("PLAIN_RECV")
    if not plain:
        print("skip: no plain-recv (Debian's librpma-dev is not installed)")
        sys.exit(SKIP)
    port = next_port()
    ready, out = work.path("ready"), work.path("plain.bin")
    msgs = [b"hello plain librpma\n", b"", b"x" * 4096, b"", b"last"]
    log = open(work.path("plain.log"), "w")
    p = subprocess.Popen([plain, b, str(port), str(len(msgs)), ready, out], stdout=log, stderr=log)
    work.procs.append(p)
    wait_until(lambda: os.path.exists(ready) or p.poll() is not None, SAFETY_S, "plain-recv to listen")
    check(p.poll() is None, "plain-recv exited")

    spool = Spool(work, {"alpha": {"address": b, "port": port, "max_message": "64K"}}).mount()
    check(spool.status("alpha")["max_message"] == 65536, "limit: %s" % spool.status("alpha"))
    spool.sh("echo hello plain librpma > alpha")
    spool.sh(": > alpha")
    check(spool.write("alpha", b"x" * 4096) == 0, "the 4 KiB write failed")
    spool.sh("truncate -s 0 alpha")
    spool.sh("printf last > alpha")
    st = spool.settled("alpha")
    check(st["completed"] == len(msgs) and st["failed"] == 0, "status: %s" % st)
    spool.unmount()
    check(p.wait(SAFETY_S) == 0, "plain-recv failed: %s" % open(work.path("plain.log")).read())

    data, got, i = open(out, "rb").read(), [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + 4], "little")
        got.append(data[i + 4:i + 4 + n])
        i += 4 + n
    check(got == msgs, "plain-recv got %r" % [m[:20] for m in got])


sys.exit(run("interop", body))
