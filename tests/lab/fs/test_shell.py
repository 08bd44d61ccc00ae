#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Messages sent from the shell arrive intact, one per write(2), in order,
0-byte ones included; stat, the status file and the xattrs agree with what
rpma-recv counted (docs/design.md §4.1, §4.3)."""
import sys

from fslab import *


def body(work):
    _, b = need_lab()
    recv = {"alpha": Receiver(work, b, name="recv-alpha").start(),
            "beta": Receiver(work, b, name="recv-beta").start()}
    spool = Spool(work, {
        "alpha": {"address": b, "port": recv["alpha"].port},
        "beta": {"address": b, "port": recv["beta"].port, "mode": "sync"},
    }).mount()

    with open(work.path("src"), "wb") as f:
        f.write(bytes(range(256)) * 40)  # 10240 bytes
    src = open(work.path("src"), "rb").read()
    start = time.time()

    steps = [
        ("alpha", "echo hi > alpha", [b"hi\n"]),
        ("alpha", "printf abc > alpha", [b"abc"]),
        ("alpha", ": > alpha", [b""]),
        ("alpha", "printf '' > alpha", [b""]),
        ("alpha", "truncate -s 0 alpha", [b""]),
        ("alpha", "touch alpha", []),  # no O_TRUNC: no intent, no message (design.md §4.1)
        ("alpha", "cat %s > alpha" % work.path("src"), [src]),
        ("alpha", "dd if=%s of=alpha bs=4096 count=2 status=none" % work.path("src"),
         [src[:4096], src[4096:8192]]),
        ("alpha", "for i in 1 2 3; do echo line$i; done > alpha", [b"line1\n", b"line2\n", b"line3\n"]),
        ("alpha", "for i in 1 2 3; do echo n$i > alpha; done", [b"n1\n", b"n2\n", b"n3\n"]),
        ("alpha", "printf 'a\\0b' > alpha", [b"a\0b"]),
        ("alpha", "echo >> alpha", [b"\n"]),
        ("beta", "echo sync > beta", [b"sync\n"]),
        ("beta", ": > beta", [b""]),
        ("beta", "dd if=%s of=beta bs=1000 count=1 status=none" % work.path("src"), [src[:1000]]),
    ]
    for _, cmd, _ in steps:
        spool.sh(cmd)

    for peer in ("alpha", "beta"):
        expected = [m for p, _, ms in steps if p == peer for m in ms]
        n, nbytes = len(expected), sum(len(m) for m in expected)
        spool.settled(peer)
        wait_until(lambda: len(recv[peer].messages()) >= n, SAFETY_S, "%s's messages to arrive" % peer)
        got = recv[peer].messages()
        check(got == expected, "%s: received %d messages, expected %d, in this order:\n%r\n%r" %
              (peer, len(got), n, got, expected))

        st = spool.status(peer)
        xa = spool.xattrs(peer)
        check(st["state"] == "connected", "%s state %s" % (peer, st["state"]))
        check(st["posted"] == n and st["completed"] == n and st["failed"] == 0,
              "%s: posted %s completed %s failed %s, expected %d" %
              (peer, st["posted"], st["completed"], st["failed"], n))
        check(st["bytes_posted"] == nbytes and st["bytes_confirmed"] == nbytes,
              "%s bytes: %s/%s, expected %d" % (peer, st["bytes_posted"], st["bytes_confirmed"], nbytes))
        check(st["last_wr_id"] == n, "%s last_wr_id %s" % (peer, st["last_wr_id"]))
        st_os = os.stat(spool.file(peer))
        check(st_os.st_size == nbytes, "%s: stat size %d, expected %d" % (peer, st_os.st_size, nbytes))
        check(st_os.st_mtime >= start - 1 and st_os.st_ctime >= st_os.st_mtime - 0.001,
              "%s: stat times %f %f" % (peer, st_os.st_mtime, st_os.st_ctime))
        check(st_os.st_mode & 0o777 == 0o200, "%s mode %o" % (peer, st_os.st_mode))
        for k in ("state", "posted", "completed", "failed", "in_flight", "bytes_confirmed",
                  "last_wr_id", "address", "mode", "completion", "max_message"):
            check(xa[k] == st[k], "%s xattr %s=%r but status says %r" % (peer, k, xa[k], st[k]))

        # what rpma-recv counted agrees with the spool's figures
        check(recv[peer].stop() == 0, "rpma-recv exit status")
        log = open(recv[peer].log).read()
        check("%d messages, %d bytes" % (n, nbytes) in log,
              "rpma-recv's summary does not say %d messages, %d bytes:\n%s" % (n, nbytes, log))
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("shell", body))
