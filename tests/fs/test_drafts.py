#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Drafts (docs/design.md §4.8) on null peers: mkstemp + os.replace and
rsync deliver one message per file; a draft can be written, read, stat'ed,
listed, chmod'ed, renamed onto a draft and unlinked; rename onto a peer
sends it, onto a status file is EPERM; a failed rename leaves it; past the
limit create fails ENOSPC and the log says which; unmount with drafts.
Under allow_other a draft belongs to its creator: another user sees it,
cannot open, change, rename or remove it (run as root, becoming nobody)."""
import shutil
import sys
import tempfile

import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "fs"))
from fslab import *  # noqa: E402


def settled(spool, peer):
    return wait_until(lambda: (lambda s: s if s["open"] == 0 and s["pending"] == 0 else None)(
        spool.status(peer)), 20, "%s's descriptions to be released" % peer)


def root_xattr(m, key):
    return int(os.getxattr(m, "user.rpma." + key))


NOBODY = 65534

# what nobody tries on root's draft, and the errno each must get
OTHERS = """
import errno, os, sys
m, theirs = sys.argv[1], sys.argv[2]
def errname(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
out = [errname(lambda: open(theirs, "rb")), errname(lambda: open(theirs, "r+b")),
       errname(lambda: os.chmod(theirs, 0o666)), errname(lambda: os.utime(theirs, (1, 1))),
       errname(lambda: os.unlink(theirs)),
       errname(lambda: os.rename(theirs, os.path.join(m, "stolen"))),
       str(os.access(theirs, os.R_OK)), str(os.path.basename(theirs) in os.listdir(m)),
       str(os.stat(theirs).st_size)]
# nobody's own draft: written, then renamed onto the peer; over root's: EPERM
with open(os.path.join(m, "mine"), "wb") as f:
    f.write(b"from nobody")
out.append(errname(lambda: os.rename(os.path.join(m, "mine"), theirs)))
out.append(errname(lambda: os.rename(os.path.join(m, "mine"), os.path.join(m, "alpha"))))
print(" ".join(out))
"""


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def others_drafts(work):
    """allow_other: root's draft is not nobody's to open, change, rename or remove."""
    if os.getuid() != 0:
        print("skip part: the ownership case needs root (to become nobody)")
        return
    os.chmod(work.dir, 0o755)  # nobody must reach the mount point
    spool = Spool(work, {"alpha": {"type": "null"}}, opts=["-o", "allow_other"],
                  name="shared").mount()
    theirs = os.path.join(spool.mnt, "roots")
    with open(theirs, "wb") as f:
        f.write(b"root's bytes")
    os.chmod(theirs, 0o666)  # even a mode that lets everyone in: the owner's draft
    r = subprocess.run(["python3", "-c", OTHERS, spool.mnt, theirs], capture_output=True,
                       text=True, preexec_fn=as_nobody, timeout=SAFETY_S)
    check(r.returncode == 0, "nobody's snippet: %s" % r.stderr)
    want = "EACCES EACCES EPERM EPERM EPERM EPERM False True 12 EPERM ok"
    check(r.stdout.split() == want.split(), "nobody on root's draft: %r, expected %r" % (
        r.stdout.strip(), want))
    check(open(theirs, "rb").read() == b"root's bytes", "root's draft changed")
    st = wait_until(lambda: (lambda s: s if s["posted"] == 1 else None)(spool.status("alpha")),
                    SAFETY_S, "nobody's draft to be sent")
    check(st["bytes_posted"] == len(b"from nobody"), "nobody's message: %s" % st)
    os.unlink(theirs)  # the owner may
    check(sorted(os.listdir(spool.mnt)) == ["alpha", "alpha.status"],
          "left in the shared mount: %s" % os.listdir(spool.mnt))
    check(spool.unmount() == 0, "rpmafs exit status (shared mount)")


def body(work):
    need_fuse()
    others_drafts(work)
    spool = Spool(work, {"rpmafs": {"slots": 4, "drafts": 3},
                         "alpha": {"type": "null"},
                         "filed": {"type": "null", "framing": "file"},
                         "small": {"type": "null", "max_message": "1K"}}).mount()
    m = spool.mnt
    src = work.path("src")
    with open(src, "wb") as f:
        f.write(os.urandom(300000))
    # rsync's quick check skips a file of the same size and mtime (st_size is the
    # bytes confirmed, st_mtime the last message): an old source is never "the same"
    os.utime(src, (1000000, 1000000))

    # mkstemp + os.replace: one message, the draft gone
    fd, tmp = tempfile.mkstemp(dir=m)
    os.write(fd, b"hello draft")
    os.fchmod(fd, 0o644)
    os.fchown(fd, os.getuid(), os.getgid())
    os.fsync(fd)
    os.close(fd)
    st = os.stat(tmp)
    check(st.st_size == 11 and st.st_uid == os.getuid() and st.st_mode & 0o777 == 0o644,
          "draft stat: %s" % (st,))
    check(open(tmp, "rb").read() == b"hello draft", "draft read back")
    check(os.path.basename(tmp) in os.listdir(m), "draft not listed")
    check(root_xattr(m, "drafts") == 1 and root_xattr(m, "draft_bytes") == 11, "root xattrs")
    os.utime(tmp, (1, 2))
    os.replace(tmp, spool.file("alpha"))
    st = settled(spool, "alpha")
    check(st["posted"] == 1 and st["bytes_posted"] == 11, "os.replace: %s" % st)
    check(not os.path.exists(tmp) and root_xattr(m, "drafts") == 0, "draft left after replace")

    # rsync (temporary file + rename), onto each framing: one message each
    if not shutil.which("rsync"):
        fail("rsync is not installed (tools/install-deps installs it)")
    for peer in ("alpha", "filed"):
        before = settled(spool, peer)
        for args in (["rsync", src, spool.file(peer)], ["rsync", "-a", src, spool.file(peer)]):
            r = subprocess.run(args, capture_output=True, text=True)
            check(r.returncode == 0, "%s: %d %s" % (args, r.returncode, r.stderr))
        st = settled(spool, peer)
        check(st["posted"] - before["posted"] == 2 and
              st["bytes_posted"] - before["bytes_posted"] == 600000, "rsync onto %s: %s" % (peer, st))
    check(root_xattr(m, "drafts") == 0, "rsync left a draft")

    # rename draft -> draft; onto a status file EPERM; a failed send leaves the draft
    with open(os.path.join(m, "d1"), "wb") as f:
        f.write(b"x" * 2000)
    os.rename(os.path.join(m, "d1"), os.path.join(m, "d2"))
    check(sorted(n for n in os.listdir(m) if n.startswith("d")) == ["d2"], "rename draft->draft")
    try:
        os.rename(os.path.join(m, "d2"), spool.file("alpha") + ".status")
        fail("rename onto a status file succeeded")
    except OSError as e:
        check(e.errno == errno.EPERM, "rename onto status: %s" % e)
    try:
        os.rename(os.path.join(m, "d2"), spool.file("small"))
        fail("rename of a draft over the limit succeeded")
    except OSError as e:
        check(e.errno == errno.EMSGSIZE, "rename over the limit: %s" % e)
    check(os.path.exists(os.path.join(m, "d2")), "a failed rename removed the draft")
    check(settled(spool, "small")["posted"] == 0, "an over-limit draft was sent")
    # spools stay: status files not unlinked (a spool's unlink: test_unlink.py), no rename
    for op in (lambda: os.unlink(spool.file("alpha") + ".status"),
               lambda: os.rename(spool.file("alpha"), os.path.join(m, "zz"))):
        try:
            op()
            fail("a spool was removed or renamed")
        except OSError as e:
            check(e.errno == errno.EPERM, "spool op: %s" % e)
    os.unlink(os.path.join(m, "d2"))
    check(root_xattr(m, "drafts") == 0, "unlink left the draft")

    # the limit: 3 drafts; the fourth create fails ENOSPC and the log says which
    for i in range(3):
        open(os.path.join(m, "t%d" % i), "w").close()
    try:
        open(os.path.join(m, "t3"), "w")
        fail("a fourth draft was created")
    except OSError as e:
        check(e.errno == errno.ENOSPC, "past the limit: %s" % e)
    wait_until(lambda: "drafts is at its limit" in open(spool.log).read(), 20, "the log line")
    sv = os.statvfs(m)
    check(sv.f_files == 3 and sv.f_ffree == 0, "statfs: %s" % (sv,))

    # unmount with drafts left: they vanish
    check(spool.unmount() == 0, "rpmafs exit status")
    check(os.listdir(m) == [], "the mount point holds %s" % os.listdir(m))


sys.exit(run("drafts", body))
