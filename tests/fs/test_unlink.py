#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A spool file's unlink on null peers (docs/design.md §4.7): it succeeds and
hides the name (lookup ENOENT, left out of readdir) until the next create of
it, which opens the spool. So the real `install -m 644 src spool` and `mv`
from another file system (both unlink, then create O_EXCL) deliver one
message each onto a file-framed spool, and onto a write-framed one one per
write; an empty file is the 0-byte message. Status files are never
unlinked. Every case asserts the status file's message and byte counts."""
import sys

import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "fs"))
from fslab import *  # noqa: E402


def expect_errno(fn, err, what):
    try:
        fn()
    except OSError as e:
        check(e.errno == err, "%s: %s, expected %s" % (what, errno.errorcode.get(e.errno),
                                                        errno.errorcode[err]))
        return
    fail("%s succeeded, expected %s" % (what, errno.errorcode[err]))


def settled(spool, peer):
    return wait_until(lambda: (lambda s: s if s["open"] == 0 and s["pending"] == 0 and
                               s["in_flight"] == 0 else None)(spool.status(peer)),
                      20, "%s's descriptions to be released" % peer)


def body(work):
    need_fuse()
    spool = Spool(work, {"rpmafs": {"framing": "file"},
                         "alpha": {"type": "null"},
                         "wr": {"type": "null", "framing": "write"}}).mount()
    m = spool.mnt
    # the sources are outside the mount: /tmp is another file system
    check(os.stat(work.path()).st_dev != os.stat(m).st_dev, "the work dir is on the mount")

    def src(name, n):
        p = work.path(name)
        with open(p, "wb") as f:
            f.write(os.urandom(n))
        return p

    def delivers(peer, cmd, n, nbytes):
        before = settled(spool, peer)
        r = spool.sh(cmd, check_rc=False)
        check(r.returncode == 0, "`%s` failed (%d): %s" % (cmd, r.returncode, r.stderr.strip()))
        after = settled(spool, peer)
        got = (after["posted"] - before["posted"], after["bytes_posted"] - before["bytes_posted"],
               after["completed"] - before["completed"], after["failed"] - before["failed"],
               after["refused"] - before["refused"])
        check(got == (n, nbytes, n, 0, 0),
              "`%s`: (posted, bytes, completed, failed, refused) %s, expected (%d, %d, %d, 0, 0)"
              % (cmd, got, n, nbytes, n))
        check(sorted(os.listdir(m)) == ["alpha", "alpha.status", "wr", "wr.status"],
              "after `%s`: %s" % (cmd, sorted(os.listdir(m))))

    # install: unlink, open O_CREAT|O_EXCL, write, fchmod, close, chmod by path
    delivers("alpha", "install -m 644 %s alpha" % src("inst", 300000), 1, 300000)
    delivers("alpha", "install -m 644 %s alpha" % src("inst2", 5000), 1, 5000)
    # mv across devices: rename EXDEV, unlink, create O_EXCL, copy, utimens, fchmod, close
    x = src("x", 200000)
    delivers("alpha", "mv %s alpha" % x, 1, 200000)
    check(not os.path.exists(x), "mv left its source")
    # twice in a row: each one message
    y, z = src("y", 7000), src("z", 9000)
    delivers("alpha", "mv %s alpha && mv %s alpha" % (y, z), 2, 16000)
    check(not os.path.exists(y) and not os.path.exists(z), "mv left a source")
    # an empty file is the 0-byte message (a create is a file made anew)
    open(work.path("empty"), "w").close()
    delivers("alpha", "install -m 644 %s alpha" % work.path("empty"), 1, 0)

    # write framing: allowed, each of the tool's writes is a message, as with cp. coreutils
    # writes st_blksize (512 KiB here) at a time: 700000 bytes are 2 writes
    blk = os.stat(spool.file("wr")).st_blksize
    check(blk == 512 * 1024, "wr st_blksize %d" % blk)
    delivers("wr", "install -m 644 %s wr" % src("big", 700000), 2, 700000)
    delivers("wr", "mv %s wr" % src("w", 3000), 1, 3000)
    delivers("wr", "install -m 644 %s wr" % work.path("empty"), 1, 0)

    # after an unlink: gone from the listing and from lookup, for every process, as any
    # unlinked file; the status file stays; nothing is sent. A descriptor opened before
    # stays open (st_nlink 0) and its close still sends
    before = settled(spool, "alpha")
    held = os.open(spool.file("alpha"), os.O_WRONLY)
    os.unlink(spool.file("alpha"))
    check(os.fstat(held).st_nlink == 0, "st_nlink of the unlinked spool %d" %
          os.fstat(held).st_nlink)
    os.write(held, b"held")
    os.close(held)
    after = settled(spool, "alpha")
    check(after["posted"] - before["posted"] == 1 and
          after["bytes_posted"] - before["bytes_posted"] == 4, "held descriptor: %s" % after)
    before = after
    check(sorted(os.listdir(m)) == ["alpha.status", "wr", "wr.status"],
          "ls after the unlink: %s" % sorted(os.listdir(m)))
    r = spool.sh("ls; stat alpha", check_rc=False)
    check(r.returncode != 0 and "No such file or directory" in r.stderr and
          "alpha.status" in r.stdout and "alpha\n" not in r.stdout,
          "ls; stat alpha: %d %r %r" % (r.returncode, r.stdout, r.stderr))
    expect_errno(lambda: os.stat(spool.file("alpha")), errno.ENOENT, "stat of the hidden name")
    expect_errno(lambda: os.open(spool.file("alpha"), os.O_WRONLY), errno.ENOENT,
                 "open without O_CREAT")
    expect_errno(lambda: os.unlink(spool.file("alpha")), errno.ENOENT, "a second unlink")
    check(spool.status("alpha")["posted"] == before["posted"], "the unlink sent something")
    # the status file is never unlinked, nor hidden
    expect_errno(lambda: os.unlink(spool.file("alpha") + ".status"), errno.EPERM,
                 "unlink of a status file")
    check("alpha.status" in os.listdir(m), "the status file was hidden")
    # the next create brings it back: a shell redirection opens O_CREAT
    delivers("alpha", "echo hi > alpha", 1, 3)
    check(os.stat(spool.file("alpha")).st_nlink == 1, "st_nlink after the create")
    check(os.stat(spool.file("alpha")).st_mode & 0o777 == 0o200, "the spool's mode")

    # a rename of a draft onto the hidden name sends it and shows the name again
    os.unlink(spool.file("alpha"))
    with open(os.path.join(m, ".d.tmp"), "wb") as f:
        f.write(b"d" * 1234)
    delivers("alpha", "mv .d.tmp alpha", 1, 1234)

    # open -O_EXCL after unlink, from Python: the same one message
    os.unlink(spool.file("alpha"))
    before = settled(spool, "alpha")
    fd = os.open(spool.file("alpha"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"abc")
    os.close(fd)
    after = settled(spool, "alpha")
    check(after["posted"] - before["posted"] == 1 and
          after["bytes_posted"] - before["bytes_posted"] == 3, "O_EXCL create: %s" % after)
    # the name is shown again: a second O_EXCL create fails EEXIST at the lookup
    expect_errno(lambda: os.open(spool.file("alpha"), os.O_WRONLY | os.O_CREAT | os.O_EXCL),
                 errno.EEXIST, "O_EXCL create of a visible spool")
    # hidden again at unmount: a clean exit (under the sanitizers, nothing leaked)
    os.unlink(spool.file("alpha"))
    rc = spool.unmount()
    check(rc == 0, "rpmafs exit status %d: %s" % (rc, open(spool.log).read()[-2000:]))


sys.exit(run("unlink", body))
