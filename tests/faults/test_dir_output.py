#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile input: rpma-recv --format dir, whatever the messages say, writes
only inside its directory.

Messages that look like paths ("../x", "/tmp/x", "a/b"), hold NUL bytes,
newlines, format directives, or are long (60 KiB, and a name of 4,000
characters as content) arrive as files named by their sequence number
(20 digits), each holding exactly its message, in order; no dot-file is
left behind and nothing appears next to the directory. A temporary name
planted in the directory as a symbolic link to a file outside is not
followed (the outside file is left as it was).
"""
import sys

from faults import *

HOSTILE = [
    b"../escaped", b"../../../../../../tmp/escaped", b"/tmp/escaped-abs", b"a/b/c",
    b"x\x00../../escaped-nul", b"\x00", b"\n", b"..", b".", b"%s%n%x",
    b"00000000000000000001", b".00000000000000000009.tmp", b"A" * 4000,
    b"../" * 1300, bytes(range(256)) * 240, b"",
]


def listing(path):
    out = set()
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(root, n), path))
    return out


def body(work):
    _, b = need_lab()
    outdir = work.path("out")
    os.mkdir(outdir)
    around0 = listing(work.dir) - {"out"}
    outside = work.path("outside-target")
    with open(outside, "wb") as f:
        f.write(b"untouched")
    # the temporary name the 3rd message would be written under, planted as a link
    planted = os.path.join(outdir, ".%020d.tmp" % 3)
    os.symlink(outside, planted)
    tmp_escape0 = set(os.listdir("/tmp"))

    port = next_port()
    log = work.path("recv-dir.log")
    logf = open(log, "w")
    proc = subprocess.Popen([os.environ["RPMA_RECV"], "--listen", "%s:%d" % (b, port), "--format", "dir",
                             "--output", outdir, "--max-message", "64K"], stdout=subprocess.DEVNULL, stderr=logf)
    work.procs.append(proc)
    wait_until(lambda: "listening on" in open(log).read() or proc.poll() is not None, SAFETY_S,
               "rpma-recv")
    spool = Spool(work, {"alpha": {"address": b, "port": port, "mode": "sync"}}).mount()
    for m in HOSTILE:
        if m:
            check(spool.write("alpha", m) == 0, "write of %r failed" % m[:20])
        else:
            spool.sh(": > alpha")
    spool.settled("alpha")
    spool.unmount()
    proc.send_signal(signal.SIGTERM)
    check(proc.wait(SAFETY_S) == 0, "rpma-recv exit status; log:\n%s" % open(log).read())

    check(open(outside, "rb").read() == b"untouched", "the planted link was followed: %r" %
          open(outside, "rb").read()[:40])
    names = sorted(n for n in os.listdir(outdir) if n != ".rpma-recv-state")  # rpma-recv's own state file
    want = ["%020d" % (i + 1) for i in range(len(HOSTILE))]
    check(names == want, "files in the directory: %s" % names[:20])
    for name, m in zip(names, HOSTILE):
        with open(os.path.join(outdir, name), "rb") as f:
            got = f.read()
        check(got == m, "%s holds %r, sent %r" % (name, got[:30], m[:30]))
        check(not os.path.islink(os.path.join(outdir, name)), "%s is a link" % name)
    stray = listing(work.dir) - around0 - {"out", "outside-target", "spool", "spool.ini", "spool.log",
                                           "recv-dir.log", os.path.join("out", ".rpma-recv-state")} - {
                                               os.path.join("out", n) for n in names}
    check(not stray, "files outside the output directory: %s" % sorted(stray)[:10])
    new_tmp = set(os.listdir("/tmp")) - tmp_escape0
    check(not any("escaped" in n for n in new_tmp), "a message escaped to /tmp: %s" % new_tmp)
    print("%d hostile messages, %d files, all in place" % (len(HOSTILE), len(names)))


sys.exit(run("faults-dir-output", body))
