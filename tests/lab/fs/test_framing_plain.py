#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""framing = file against a plain receiver written against Debian's librpma
(plain-recv, which knows nothing of rpmafs: transport confirmation): each
tool's file arrives as one message with the file's bytes (docs/design.md
§4.6, §4.8), and with close = wait close(2) returns after the completion."""
import sys

from fslab import *
import framing_tools

MIB = 1 << 20


def body(work):
    _, b = need_lab()
    plain = os.environ.get("PLAIN_RECV")
    if not plain:
        print("skip: no plain-recv (Debian's librpma-dev is not installed)")
        sys.exit(SKIP)
    data = framing_tools.sources(work)
    src = data["src"]
    steps = framing_tools.steps(work, data, "alpha")
    port = next_port()
    ready, out = work.path("ready"), work.path("plain.bin")
    log = open(work.path("plain.log"), "w")
    # one receive of 1 MiB per message: a file message is up to the limit (1 MiB)
    p = subprocess.Popen([plain, b, str(port), str(len(steps) + 1), ready, out, str(MIB)],
                         stdout=log, stderr=log)
    work.procs.append(p)
    wait_until(lambda: os.path.exists(ready) or p.poll() is not None, SAFETY_S,
               "plain-recv to listen")
    check(p.poll() is None, "plain-recv exited: %s" % open(work.path("plain.log")).read())

    spool = Spool(work, {"alpha": {"address": b, "port": port, "framing": "file"}}).mount()
    st = spool.status("alpha")
    check(st["confirm"] == "transport" and st["max_message"] == MIB, "status: %s" % st)

    # close = wait: cp returns after its message's completion
    spool.sh("cp %s alpha" % work.path("src"))
    st = spool.status("alpha")
    check(st["completed"] == 1 and st["bytes_confirmed"] == len(src) and st["in_flight"] == 0,
          "cp returned before its completion: %s" % st)
    for what, cmd, _ in steps:
        r = spool.sh(cmd, check_rc=False)
        check(r.returncode == 0, "%s: `%s` exit %d: %s" % (what, cmd, r.returncode, r.stderr))
    st = spool.settled("alpha")
    check(st["completed"] == len(steps) + 1 and st["failed"] == 0 and st["refused"] == 0,
          "status: %s" % st)
    check(os.getxattr(spool.mnt, "user.rpma.drafts") == b"0", "drafts left in the mount")
    check(spool.unmount() == 0, "rpmafs exit status")
    try:
        check(p.wait(SAFETY_S) == 0, "plain-recv failed: %s" % open(work.path("plain.log")).read())
    except subprocess.TimeoutExpired:
        fail("plain-recv still running after the unmount")

    raw, got, i = open(out, "rb").read(), [], 0
    while i < len(raw):
        n = int.from_bytes(raw[i:i + 4], "little")
        got.append(raw[i + 4:i + 4 + n])
        i += 4 + n
    expected = [("cp (close = wait)", src)] + [(w, m) for w, _, m in steps]
    for g, (what, e) in zip(got, expected):
        check(g == e, "%s: %d bytes, expected %d (%r...)" % (what, len(g), len(e), g[:16]))
    check(len(got) == len(expected), "%d messages, expected %d" % (len(got), len(expected)))
    # plain-recv waits LAB_SAFETY_MS for each message: say how near the
    # longest wait came (a 30 s bound once failed under two loaded VMs)
    at = [float(line.split()[-5]) for line in open(work.path("plain.log"))
          if line.endswith("s after the accept\n")]
    gaps = [(b - a, expected[i + 1][0]) for i, (a, b) in enumerate(zip(at, at[1:]))]
    if gaps:
        print("longest wait of plain-recv: %.1f s, before %s" % max(gaps))


sys.exit(run("framing-plain", body))
