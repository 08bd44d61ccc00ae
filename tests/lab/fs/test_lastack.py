#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rpma-recv --count N acknowledges the last of its N messages before it
exits (rpma-recv(1) --count, docs/design.md §11.1): three `echo`s from bash
(two builtin, the last coreutils'), each closed with close = wait (the
default against rpma-recv), all exit 0,
the receiver exits 0 on its own with the three lines written, and the spool
says acked 3, failed 0. With the shared receive queue and --no-srq, without
and with --fsync (synced, then acknowledged)."""
import sys

from fslab import *


def one(work, b, name, args):
    r = Receiver(work, b, args=["--count", "3"] + args, name=name).start()
    spool = Spool(work, {"p": {"address": b, "port": r.port}}, name="spool-" + name).mount()
    check(spool.status("p")["confirm"] == "receiver", "%s: %s" % (name, spool.status("p")))
    lines = [b"line%d\n" % i for i in range(3)]
    # bash's builtin echo ignores a failed close of its redirection; the
    # last one is coreutils' echo, which exits 1 when its close(2) fails
    for i, echo in enumerate(("echo", "echo", "/bin/echo")):
        try:
            res = subprocess.run(["bash", "-c", "%s line%d > p" % (echo, i)], cwd=spool.mnt,
                                 capture_output=True, text=True, timeout=SAFETY_S)
        except subprocess.TimeoutExpired:
            fail("%s: echo %d still running after %ss" % (name, i, SAFETY_S))
        check(res.returncode == 0, "%s: echo %d failed (%d): %s; status %s" %
              (name, i, res.returncode, res.stderr.strip(), spool.status("p")))
    # the event: rpma-recv exits by itself once its count is written out
    try:
        rc = r.proc.wait(SAFETY_S)
    except subprocess.TimeoutExpired:
        fail("%s: rpma-recv --count 3 did not exit" % name)
    check(rc == 0, "%s: rpma-recv exit status %d: see %s" % (name, rc, r.log))
    check(r.messages() == lines, "%s: output %r" % (name, r.messages()))
    st = spool.status("p")
    check(st["acked"] == 3 and st["failed"] == 0 and st["unacked"] == 0,
          "%s: after the third close: %s" % (name, st))
    spool.unmount()


def body(work):
    _, b = need_lab()
    one(work, b, "recv-srq", [])
    one(work, b, "recv-srq-fsync", ["--fsync"])
    one(work, b, "recv-nosrq-fsync", ["--no-srq", "--slots", "8", "--fsync"])


sys.exit(run("lastack", body))
