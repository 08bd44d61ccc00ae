#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""framing = file (docs/design.md §4.6) and drafts (§4.8) against rpma-recv:
what a tool writes through one open file up to close(2) arrives as one
message with the file's bytes, whatever the tool's buffer size; holes are
zeros; over the limit nothing is sent and write and close fail; two writers
at once give two whole messages; with close = wait (default) close returns
once its message is acknowledged by the receiver, and returns the error when
it cannot be sent; write framing is unchanged."""
import sys

from fslab import *
import framing_tools

MIB = 1 << 20


def py_run(code, *args):
    """Run a python snippet (its system calls may block on the spool) with a safety timeout."""
    try:
        return subprocess.run(["python3", "-c", code] + list(args), capture_output=True,
                              text=True, timeout=SAFETY_S)
    except subprocess.TimeoutExpired:
        fail("python snippet still running after %ss: %s" % (SAFETY_S, code))


def body(work):
    _, b = need_lab()
    # 16 slots: each is max_message bytes, so the default 256 would take
    # 256 MiB per receiver, and the lab's tests share a 2 GiB VM (5 such
    # receivers here beside fs-drafts_recv and fs-limits got rpma-recv
    # OOM-killed)
    big = ["--max-message", str(MIB), "--slots", "16"]
    recv = {p: Receiver(work, b, args=big, name="recv-" + p).start()
            for p in ("alpha", "beta", "gamma", "delta", "omega")}
    spool = Spool(work, {
        "alpha": {"address": b, "port": recv["alpha"].port, "framing": "file"},
        "beta": {"address": b, "port": recv["beta"].port, "framing": "file", "mode": "sync"},
        "gamma": {"address": b, "port": recv["gamma"].port},  # write framing
        "delta": {"address": b, "port": recv["delta"].port, "framing": "file",
                  "close": "return"},
        "omega": {"address": b, "port": recv["omega"].port, "framing": "file",
                  "send_timeout_ms": 2000},
    }).mount()

    data = framing_tools.sources(work)
    src, src_path = data["src"], work.path("src")
    check(os.stat(spool.file("alpha")).st_blksize == MIB,
          "alpha st_blksize %d" % os.stat(spool.file("alpha")).st_blksize)
    # the kernel rounds st_blksize down to a power of two: 1044480 reads 512 KiB
    check(os.stat(spool.file("gamma")).st_blksize == 512 * 1024,
          "gamma st_blksize %d" % os.stat(spool.file("gamma")).st_blksize)
    check(spool.status("alpha")["confirm"] == "receiver", "alpha: %s" % spool.status("alpha"))

    # close = wait: cp's close(2) returns once the receiver acknowledged its message
    before = spool.status("alpha")
    spool.sh("cp %s alpha" % src_path)
    st = spool.status("alpha")
    check(st["acked"] == before["acked"] + 1 and
          st["bytes_confirmed"] == before["bytes_confirmed"] + len(src) and st["unacked"] == 0,
          "cp returned before its message was acknowledged: %s" % st)
    steps = [("alpha", "cp (close = wait)", [src])]

    # the tools users write files with: one message each, exit status 0
    for what, cmd, msg in framing_tools.steps(work, data, "alpha"):
        r = spool.sh(cmd, check_rc=False)
        check(r.returncode == 0, "%s: `%s` exit %d: %s" % (what, cmd, r.returncode, r.stderr))
        steps.append(("alpha", what, [msg]))
    more = [
        ("alpha", "cat %s > alpha" % src_path, [src]),
        ("alpha", "dd if=%s of=alpha bs=4096 status=none" % src_path, [src]),
        ("alpha", "dd if=%s of=alpha bs=1000 count=7 status=none" % src_path, [src[:7000]]),
        ("alpha", "dd if=%s of=alpha bs=64K status=none" % src_path, [src]),
        ("alpha", "dd if=%s of=alpha bs=1M status=none" % src_path, [src]),
        ("alpha", "cat %s | tee alpha > /dev/null" % src_path, [src]),
        ("alpha", "{ echo one; echo two; printf three; } > alpha", [b"one\ntwo\nthree"]),
        ("alpha", "head -c %d /dev/zero > alpha" % MIB, [bytes(MIB)]),
        ("alpha", ": > alpha", [b""]),
        ("alpha", "touch alpha", []),
        ("alpha", "echo appended >> alpha", [b"appended\n"]),
        ("beta", "cp %s beta" % src_path, [src]),
        ("beta", "seq 1 20000 > beta", ["".join("%d\n" % i for i in range(1, 20001)).encode()]),
        ("delta", "cp %s delta" % src_path, [src]),
        ("delta", "head -c 5000 %s > delta" % src_path, [src[:5000]]),
        ("gamma", "dd if=%s of=gamma bs=100000 status=none" % src_path,
         [src[:100000], src[100000:200000], src[200000:]]),
        ("gamma", "echo hi > gamma", [b"hi\n"]),
        ("gamma", ": > gamma", [b""]),
        # install and mv (unlink, then create, §4.7) onto write framing: a message per write,
        # and coreutils writes st_blksize (512 KiB) at a time: the 300000 bytes are one
        ("gamma", "install -m 644 %s gamma" % src_path, [src]),
        ("gamma", "cp %s %s.mv && mv %s.mv gamma" % ((src_path,) * 3), [src]),
        # drafts: write-then-rename, one message whatever the framing
        ("gamma", "rsync -I -a %s gamma" % src_path, [src]),
        ("beta", framing_tools.py("import os, tempfile; fd, p = tempfile.mkstemp(dir=\".\"); "
                                  "os.write(fd, b\"replaced\"); os.close(fd); "
                                  "os.replace(p, \"beta\")"), [b"replaced"]),
    ]
    for peer, cmd, _ in more:
        spool.sh(cmd)
    steps += more

    # over the limit: the write fails with EFBIG, close with EMSGSIZE, nothing sent
    r = spool.sh("head -c %d /dev/zero > alpha" % (MIB + 1), check_rc=False)
    check(r.returncode != 0 and "File too large" in r.stderr,
          "over-limit head: %d %s" % (r.returncode, r.stderr))
    r = py_run("import errno, os, sys\n"
               "fd = os.open(sys.argv[1], os.O_WRONLY)\n"
               "os.write(fd, bytes(1 << 20))\n"
               "try:\n    os.write(fd, b'x'); print('write ok')\n"
               "except OSError as e:\n    print(errno.errorcode[e.errno])\n"
               "try:\n    os.close(fd); print('close ok')\n"
               "except OSError as e:\n    print(errno.errorcode[e.errno])\n",
               spool.file("alpha"))
    check(r.stdout.split() == ["EFBIG", "EMSGSIZE"], "over-limit write, close: %r %s" % (
        r.stdout, r.stderr))

    # a duplicate closed first sends what was written so far, then the rest
    r = py_run("import os, sys\n"
               "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)\n"
               "os.close(os.dup(fd))\n"  # nothing written: nothing sent
               "os.write(fd, b'first')\n"
               "os.close(os.dup(fd))\n"
               "os.write(fd, b'second')\n"
               "os.close(fd)\n", spool.file("alpha"))
    check(r.returncode == 0, "dup: %s" % r.stderr)
    steps.append(("alpha", "dup", [b"first", b"second"]))

    # close = return (delta): fsync waits for what earlier closes sent and
    # sends nothing early; an O_SYNC descriptor's close waits all the same
    r = py_run("import os, sys\n"
               "def st():\n"
               "    s = dict(l.rstrip('\\n').split(': ', 1) for l in open(sys.argv[1] + '.status'))\n"
               "    return '%s/%s/%s' % (s['posted'], s['acked'], s['unacked'])\n"
               "fd = os.open(sys.argv[1], os.O_WRONLY)\n"
               "os.write(fd, b'before fsync')\n"
               "os.close(os.dup(fd))\n"  # sends it, returns once queued
               "os.fsync(fd)\n"
               "print(st())\n"
               "os.write(fd, b'after fsync')\n"
               "os.fsync(fd)\n"
               "print(st())\n"
               "os.close(fd)\n"
               "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_SYNC)\n"
               "os.write(fd, b'o_sync close')\n"
               "os.close(fd)\n"
               "print(st())\n", spool.file("delta"))
    check(r.returncode == 0, "delta fsync: %s" % r.stderr)
    seen = r.stdout.split()
    posted = len([m for p, _, ms in steps if p == "delta" for m in ms])
    want = ["%d/%d/0" % (posted + 1, posted + 1), "%d/%d/0" % (posted + 1, posted + 1)]
    check(seen[:2] == want, "delta after fsync (posted/acked/unacked): %r, expected %r" % (
        seen, want))
    check(seen[2] == "%d/%d/0" % (posted + 3, posted + 3),
          "delta after an O_SYNC close: %r (posted %d before)" % (seen, posted))
    steps.append(("delta", "fsync, O_SYNC close", [b"before fsync", b"after fsync",
                                                   b"o_sync close"]))

    # two writers at once: two whole messages, no interleaving
    writer = ("import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY)\n"
              "for i in range(100):\n    os.write(fd, sys.argv[2].encode() * 1000)\n"
              "os.close(fd)\n")
    procs = [subprocess.Popen(["python3", "-c", writer, spool.file("alpha"), c]) for c in "xy"]
    work.procs += procs
    for p in procs:
        try:
            check(p.wait(SAFETY_S) == 0, "a concurrent writer failed")
        except subprocess.TimeoutExpired:
            fail("a concurrent writer still running after %ss" % SAFETY_S)
    pair = [b"x" * 100000, b"y" * 100000]

    # close = wait when the message cannot be sent: close returns the error
    recv["omega"].stop()
    spool.wait_state("omega", "reconnecting")
    r = py_run("import errno, os, sys\n"
               "fd = os.open(sys.argv[1], os.O_WRONLY)\n"
               "os.write(fd, b'never sent')\n"
               "try:\n    os.close(fd); print('close ok')\n"
               "except OSError as e:\n    print(errno.errorcode[e.errno])\n",
               spool.file("omega"))
    check(r.stdout.strip() in [errno.errorcode[e] for e in NOT_SENT],
          "omega close with the receiver gone: %r %s" % (r.stdout, r.stderr))
    st = spool.status("omega")
    check(st["refused"] == 1 and st["acked"] == 0, "omega: %s" % st)
    check(recv["omega"].messages() == [], "omega got %r" % recv["omega"].messages())

    for peer in ("alpha", "beta", "gamma", "delta"):
        expected = [m for p, _, ms in steps if p == peer for m in ms]
        want = len(expected) + (2 if peer == "alpha" else 0)
        spool.settled(peer)
        wait_until(lambda: len(recv[peer].messages()) >= want, SAFETY_S,
                   "%s's messages to arrive" % peer)
        got = recv[peer].messages()
        if peer == "alpha":
            check(sorted(got[-2:]) == pair, "concurrent writers: %r" % [m[:8] for m in got[-2:]])
            got = got[:-2]
        whats = [w for p, w, ms in steps if p == peer for _ in ms]
        for i, (g, e) in enumerate(zip(got, expected)):
            check(g == e, "%s message %d (%s): %d bytes, expected %d (%r...)" % (
                peer, i, whats[i], len(g), len(e), g[:16]))
        check(len(got) == len(expected), "%s: %d messages, expected %d" % (
            peer, len(got), len(expected)))
        st = spool.status(peer)
        check(st["failed"] == 0, "%s failed %s" % (peer, st["failed"]))
        check(st["framing"] == ("write" if peer == "gamma" else "file"),
              "%s framing %s" % (peer, st["framing"]))
        if peer == "gamma":
            # write framing copies only writes of up to 4 KiB, into small
            # slots (small_copies); beyond them the rsync draft was copied once
            check(st["payload_copies"] - st["small_copies"] == 1, "gamma copied %s (%s into small slots)"
                  % (st["payload_copies"], st["small_copies"]))
        else:
            # one copy per file message or draft (0-byte ones are not copied)
            check(st["payload_copies"] == sum(1 for m in got if m) + (2 if peer == "alpha" else 0),
                  "%s payload_copies %s" % (peer, st["payload_copies"]))
    check(spool.status("alpha")["refused"] == 2, "alpha refused %s" % spool.status("alpha")["refused"])
    check(os.getxattr(spool.mnt, "user.rpma.drafts") == b"0", "drafts left in the mount")
    left = [n for n in os.listdir(spool.mnt) if n not in spool.peers() and
            n not in [p + ".status" for p in spool.peers()]]
    check(left == [], "left in the mount: %r" % left)
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("framing", body))
