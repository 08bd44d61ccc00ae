#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""framing = file (docs/design.md §4.6) and drafts (§4.8): what a tool writes through one open
file up to close(2) arrives as one message with the file's bytes, whatever
the tool's buffer size; holes are zeros; over the limit nothing is sent and
write and close fail; two writers at once give two whole messages; sync
closes return after the completion; write framing is unchanged."""
import sys

from fslab import *

MIB = 1 << 20


def body(work):
    _, b = need_lab()
    big = ["--max-message", str(MIB)]
    recv = {p: Receiver(work, b, args=big, name="recv-" + p).start()
            for p in ("alpha", "beta", "gamma")}
    spool = Spool(work, {
        "alpha": {"address": b, "port": recv["alpha"].port, "framing": "file"},
        "beta": {"address": b, "port": recv["beta"].port, "framing": "file", "mode": "sync"},
        "gamma": {"address": b, "port": recv["gamma"].port},  # write framing
    }).mount()

    src_path = work.path("src")
    src = bytes((i * 7 + i // 251) & 0xFF for i in range(300000))
    with open(src_path, "wb") as f:
        f.write(src)
    doc = {"k%d" % i: list(range(i % 50)) for i in range(600)}
    with open(work.path("doc.py"), "w") as f:
        f.write("import json, sys\njson.dump(%r, open(sys.argv[1], 'w'))\n" % doc)
    import json
    doc_bytes = json.dumps(doc).encode()
    # a sparse file: data, a hole, data, a hole at the end
    sparse_path = work.path("sparse")
    with open(sparse_path, "wb") as f:
        f.write(b"A" * 5000)
        f.seek(200000)
        f.write(b"B" * 7000)
        f.truncate(400000)
    sparse = open(sparse_path, "rb").read()

    check(os.stat(spool.file("alpha")).st_blksize == MIB,
          "alpha st_blksize %d" % os.stat(spool.file("alpha")).st_blksize)

    steps = [
        ("alpha", "cp %s alpha" % src_path, [src]),
        ("alpha", "cat %s > alpha" % src_path, [src]),
        ("alpha", "dd if=%s of=alpha bs=4096 status=none" % src_path, [src]),
        ("alpha", "dd if=%s of=alpha bs=1000 count=7 status=none" % src_path, [src[:7000]]),
        ("alpha", "dd if=%s of=alpha bs=64K status=none" % src_path, [src]),
        ("alpha", "dd if=%s of=alpha bs=1M status=none" % src_path, [src]),
        ("alpha", "head -c 5000 %s > alpha" % src_path, [src[:5000]]),
        ("alpha", "cat %s | tee alpha > /dev/null" % src_path, [src]),
        ("alpha", "{ echo one; echo two; printf three; } > alpha", [b"one\ntwo\nthree"]),
        ("alpha", "python3 %s alpha" % work.path("doc.py"), [doc_bytes]),
        ("alpha", "dd if=%s of=alpha bs=1000 seek=3 count=2 status=none" % src_path,
         [bytes(3000) + src[:2000]]),
        ("alpha", "cp --sparse=always %s alpha" % sparse_path, [sparse]),
        ("alpha", "head -c %d /dev/zero > alpha" % MIB, [bytes(MIB)]),
        ("alpha", ": > alpha", [b""]),
        ("alpha", "touch alpha", []),
        ("alpha", "echo appended >> alpha", [b"appended\n"]),
        ("beta", "cp %s beta" % src_path, [src]),
        ("beta", "seq 1 20000 > beta", ["".join("%d\n" % i for i in range(1, 20001)).encode()]),
        ("gamma", "dd if=%s of=gamma bs=100000 status=none" % src_path,
         [src[:100000], src[100000:200000], src[200000:]]),
        # drafts (design.md §4.8): write-then-rename, one message whatever the framing
        ("alpha", "rsync -I %s alpha" % src_path, [src]),
        ("gamma", "rsync -I -a %s gamma" % src_path, [src]),
        ("beta", "python3 -c 'import os, tempfile; fd, p = tempfile.mkstemp(dir=\".\"); "
         "os.write(fd, b\"replaced\"); os.close(fd); os.replace(p, \"beta\")'", [b"replaced"]),
    ]
    for _, cmd, _ in steps:
        spool.sh(cmd)

    # over the limit: write fails with EFBIG, close with EMSGSIZE, nothing sent
    r = spool.sh("head -c %d /dev/zero > alpha" % (MIB + 1), check_rc=False)
    check(r.returncode != 0 and "File too large" in r.stderr,
          "over-limit head: %d %s" % (r.returncode, r.stderr))
    fd = os.open(spool.file("alpha"), os.O_WRONLY)
    os.write(fd, bytes(MIB))
    try:
        os.write(fd, b"x")
        fail("a write over the limit succeeded")
    except OSError as e:
        check(e.errno == errno.EFBIG, "over-limit write: %s" % e)
    try:
        os.close(fd)
        fail("close of an over-limit file message succeeded")
    except OSError as e:
        check(e.errno == errno.EMSGSIZE, "over-limit close: %s" % e)

    # a duplicate closed first sends what was written so far, then the rest
    fd = os.open(spool.file("alpha"), os.O_WRONLY | os.O_TRUNC)
    dup = os.dup(fd)
    os.close(dup)  # nothing written: nothing sent
    os.write(fd, b"first")
    dup = os.dup(fd)
    os.close(dup)
    os.write(fd, b"second")
    os.close(fd)
    steps.append(("alpha", "dup", [b"first", b"second"]))

    # two writers at once: two whole messages, no interleaving
    writer = ("import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY)\n"
              "for i in range(100):\n    os.write(fd, sys.argv[2].encode() * 1000)\n"
              "os.close(fd)\n")
    procs = [subprocess.Popen(["python3", "-c", writer, spool.file("alpha"), c]) for c in "xy"]
    for p in procs:
        check(p.wait() == 0, "a concurrent writer failed")
    pair = [b"x" * 100000, b"y" * 100000]

    for peer in ("alpha", "beta", "gamma"):
        expected = [m for p, _, ms in steps if p == peer for m in ms]
        want = len(expected) + (2 if peer == "alpha" else 0)
        spool.settled(peer)
        wait_until(lambda: len(recv[peer].messages()) >= want, SAFETY_S,
                   "%s's messages to arrive" % peer)
        got = recv[peer].messages()
        if peer == "alpha":
            check(sorted(got[-2:]) == pair, "concurrent writers: %r" % [m[:8] for m in got[-2:]])
            got = got[:-2]
        for i, (g, e) in enumerate(zip(got, expected)):
            check(g == e, "%s message %d: %d bytes, expected %d (%r...)" % (
                peer, i, len(g), len(e), g[:16]))
        check(len(got) == len(expected), "%s: %d messages, expected %d" % (
            peer, len(got), len(expected)))
        st = spool.status(peer)
        check(st["failed"] == 0, "%s failed %s" % (peer, st["failed"]))
        check(st["framing"] == ("write" if peer == "gamma" else "file"),
              "%s framing %s" % (peer, st["framing"]))
        if peer == "gamma":
            # write framing copies nothing; the rsync draft was copied once
            check(st["payload_copies"] == 1, "gamma copied %s" % st["payload_copies"])
        else:
            # one copy per file message or draft (0-byte ones are not copied)
            check(st["payload_copies"] == sum(1 for m in got if m) + (2 if peer == "alpha" else 0),
                  "%s payload_copies %s" % (peer, st["payload_copies"]))
    check(spool.status("alpha")["refused"] == 2, "alpha refused %s" % spool.status("alpha")["refused"])
    check(os.getxattr(spool.mnt, "user.rpma.drafts") == b"0", "drafts left in the mount")
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("framing", body))
