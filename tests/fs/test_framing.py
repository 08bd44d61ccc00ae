#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""framing = file on null peers (docs/design.md §4.6): each tool's file is
one message of the file's size, whatever its buffer; over the limit write
fails EFBIG, close EMSGSIZE, nothing sent; a duplicate's close sends what is
new; two writers at once give two messages; cp -p and shutil.copy exit 0
(§4.7); write framing is unchanged. The bytes themselves are checked on the
RDMA link in tests/lab/fs/test_framing.py."""
import sys

import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "fs"))
from fslab import *  # noqa: E402

MIB = 1 << 20


def settled(spool, peer):
    return wait_until(lambda: (lambda s: s if s["open"] == 0 and s["pending"] == 0 else None)(
        spool.status(peer)), 20, "%s's descriptions to be released" % peer)


def body(work):
    need_fuse()
    spool = Spool(work, {"rpmafs": {"slots": 4, "framing": "file"},
                         "alpha": {"type": "null"},
                         "small": {"type": "null", "max_message": "64K"},
                         "wr": {"type": "null", "framing": "write"}}).mount()
    src = work.path("src")
    with open(src, "wb") as f:
        f.write(os.urandom(300000))
    sparse = work.path("sparse")
    with open(sparse, "wb") as f:
        f.write(b"A" * 5000)
        f.seek(200000)
        f.write(b"B" * 7000)
        f.truncate(400000)
    with open(work.path("doc.py"), "w") as f:
        f.write("import json, sys\njson.dump({'k%d' % i: list(range(50)) for i in range(600)},"
                " open(sys.argv[1], 'w'))\n")
    import json
    doc_len = len(json.dumps({'k%d' % i: list(range(50)) for i in range(600)}))

    for peer, blksize in (("alpha", MIB), ("small", 65536), ("wr", 512 * 1024)):
        # the kernel reports st_blksize as a power of two: 1 MiB - 4 KiB shows as 512 KiB
        got = os.stat(spool.file(peer)).st_blksize
        check(got == blksize, "%s st_blksize %d, expected %d" % (peer, got, blksize))
    check(spool.status("alpha")["framing"] == "file" and spool.status("wr")["framing"] == "write",
          "status framing")
    check(spool.status("alpha")["max_message"] == MIB, "alpha max_message %s" %
          spool.status("alpha")["max_message"])

    # (command, messages, bytes)
    cases = [
        ("cp %s alpha" % src, 1, 300000),
        ("cp -p %s alpha" % src, 1, 300000),
        ("cat %s > alpha" % src, 1, 300000),
        ("dd if=%s of=alpha bs=4096 status=none" % src, 1, 300000),
        ("dd if=%s of=alpha bs=1000 count=7 status=none" % src, 1, 7000),
        ("dd if=%s of=alpha bs=1M status=none" % src, 1, 300000),
        ("dd if=%s of=alpha bs=1000 seek=3 count=2 status=none" % src, 1, 5000),
        ("head -c 5000 %s > alpha" % src, 1, 5000),
        ("cat %s | tee alpha > /dev/null" % src, 1, 300000),
        ("{ echo one; echo two; printf three; } > alpha", 1, 13),
        ("seq 1 20000 > alpha", 1, len("".join("%d\n" % i for i in range(1, 20001)))),
        ("python3 %s alpha" % work.path("doc.py"), 1, doc_len),
        ("python3 -c 'import shutil; shutil.copy(\"%s\", \"alpha\")'" % src, 1, 300000),
        ("cp --sparse=always %s alpha" % sparse, 1, 400000),
        ("install -m 644 %s alpha" % src, 1, 300000),
        ("cp %s %s.mv && mv %s.mv alpha" % (src, src, src), 1, 300000),
        ("head -c %d /dev/zero > alpha" % MIB, 1, MIB),
        (": > alpha", 1, 0),
        ("touch alpha", 0, 0),
        ("echo x >> alpha", 1, 2),
    ]
    before = settled(spool, "alpha")
    for cmd, n, nbytes in cases:
        spool.sh(cmd)
        after = settled(spool, "alpha")
        check(after["posted"] - before["posted"] == n and
              after["bytes_posted"] - before["bytes_posted"] == nbytes,
              "`%s`: %d messages, %d bytes; expected %d, %d" % (
                  cmd, after["posted"] - before["posted"],
                  after["bytes_posted"] - before["bytes_posted"], n, nbytes))
        before = after
    copies = before["payload_copies"]
    check(copies == sum(1 for _, n, b in cases if n and b), "payload_copies %d" % copies)

    # over the limit: EFBIG at once, EMSGSIZE at close, nothing sent
    r = spool.sh("head -c %d /dev/zero > small" % (65537), check_rc=False)
    check(r.returncode != 0 and "File too large" in r.stderr, "over-limit head: %s" % r.stderr)
    fd = os.open(spool.file("small"), os.O_WRONLY)
    os.write(fd, bytes(65536))
    try:
        os.write(fd, b"x")
        fail("a write over the limit succeeded")
    except OSError as e:
        check(e.errno == errno.EFBIG, "over-limit write: %s" % e)
    try:
        os.close(fd)
        fail("close of an over-limit message succeeded")
    except OSError as e:
        check(e.errno == errno.EMSGSIZE, "over-limit close: %s" % e)
    st = settled(spool, "small")
    check(st["posted"] == 0 and st["refused"] == 2, "small: %s" % st)

    # duplicates: each close with new bytes sends them; one with none sends nothing
    fd = os.open(spool.file("alpha"), os.O_WRONLY | os.O_TRUNC)
    os.close(os.dup(fd))
    os.write(fd, b"first")
    os.close(os.dup(fd))
    os.close(os.dup(fd))
    os.write(fd, b"second!")
    os.close(fd)
    after = settled(spool, "alpha")
    check(after["posted"] - before["posted"] == 2 and
          after["bytes_posted"] - before["bytes_posted"] == 12, "dup: %s" % after)
    before = after

    # fsync sends nothing early
    fd = os.open(spool.file("alpha"), os.O_WRONLY)
    os.write(fd, b"abc")
    os.fsync(fd)
    check(spool.status("alpha")["posted"] == before["posted"], "fsync sent the message")
    os.close(fd)
    before = settled(spool, "alpha")

    # two writers at once
    writer = ("import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY)\n"
              "for i in range(100):\n    os.write(fd, sys.argv[2].encode() * 1000)\n"
              "os.close(fd)\n")
    procs = [subprocess.Popen(["python3", "-c", writer, spool.file("alpha"), c]) for c in "xy"]
    for p in procs:
        check(p.wait() == 0, "a concurrent writer failed")
    after = settled(spool, "alpha")
    check(after["posted"] - before["posted"] == 2 and
          after["bytes_posted"] - before["bytes_posted"] == 200000, "two writers: %s" % after)

    # write framing: one message per write, no copies
    spool.sh("dd if=%s of=wr bs=100000 status=none" % src)
    st = settled(spool, "wr")
    check(st["posted"] == 3 and st["bytes_posted"] == 300000 and st["payload_copies"] == 0,
          "wr: %s" % st)

    # an open file-framed handle at unmount: nothing of it is sent
    fd = os.open(spool.file("alpha"), os.O_WRONLY)
    os.write(fd, b"never")
    r = subprocess.run(["fusermount3", "-u", "-z", spool.mnt], capture_output=True)
    check(r.returncode == 0, "lazy unmount: %s" % r.stderr)
    os.close(fd)
    try:
        rc = spool.proc.wait(SAFETY_S)
    except subprocess.TimeoutExpired:
        fail("rpmafs did not exit after the unmount")
    check(rc == 0, "rpmafs exit status %d" % rc)


sys.exit(run("framing", body))
