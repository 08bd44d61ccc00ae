#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The spool directory's file semantics (docs/design.md §4, §4.3), on null peers: no
RDMA needed, so this runs on any machine with /dev/fuse."""
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


def body(work):
    need_fuse()
    spool = Spool(work, {
        "rpmafs": {"slots": 4},
        "alpha": {"type": "null"},
        "beta": {"type": "null", "max_message": 100},
        "Gamma-2": {"type": "null", "mode": "sync"},
    }).mount()
    m = spool.mnt

    names = sorted(os.listdir(m))
    check(names == sorted(["alpha", "alpha.status", "beta", "beta.status", "Gamma-2",
                           "Gamma-2.status"]), "directory: %s" % names)
    st = os.stat(m)
    check(st.st_mode & 0o777 == 0o700, "root mode %o" % st.st_mode)
    check(os.stat(spool.file("alpha")).st_mode & 0o777 == 0o200, "spool mode")
    check(os.stat(spool.file("alpha") + ".status").st_mode & 0o777 == 0o400, "status mode")
    check(os.stat(spool.file("alpha")).st_uid == os.getuid(), "owner")

    # nothing but drafts can be made (tests/fs/test_drafts.py), spools not renamed, status
    # files not removed (a spool's unlink hides it until its next create: test_unlink.py);
    # a spool file cannot be read
    expect_errno(lambda: open(os.path.join(m, "alpha.status"), "w"), errno.EACCES,
                 "create over a status file")
    expect_errno(lambda: os.mkdir(os.path.join(m, "d")), errno.EPERM, "mkdir")
    expect_errno(lambda: os.unlink(spool.file("alpha") + ".status"), errno.EPERM, "unlink")
    expect_errno(lambda: os.rename(spool.file("alpha"), spool.file("zeta")), errno.EPERM, "rename")
    expect_errno(lambda: os.symlink("x", os.path.join(m, "l")), errno.EPERM, "symlink")
    expect_errno(lambda: os.link(spool.file("alpha"), os.path.join(m, "h")), errno.EPERM, "link")
    # chmod by the owner is accepted and ignored (cp -p, install -m: design.md §4.7);
    # chown to another owner is not
    os.chmod(spool.file("alpha"), 0o600)
    check(os.stat(spool.file("alpha")).st_mode & 0o777 == 0o200, "chmod changed the mode")
    os.chown(spool.file("alpha"), os.getuid(), os.getgid())
    expect_errno(lambda: os.chown(spool.file("alpha"), os.getuid() + 1, -1), errno.EPERM,
                 "chown to another user")
    expect_errno(lambda: os.truncate(spool.file("alpha"), 5), errno.EPERM, "truncate to 5")
    expect_errno(lambda: open(spool.file("alpha"), "rb"), errno.EACCES, "open for reading")
    expect_errno(lambda: open(spool.file("alpha"), "r+b"), errno.EACCES, "open read-write")
    expect_errno(lambda: open(spool.file("alpha") + ".status", "wb"), errno.EACCES,
                 "status opened for writing")
    expect_errno(lambda: os.setxattr(spool.file("alpha"), "user.rpma.posted", b"9"), errno.EPERM,
                 "setxattr")
    check(not os.access(spool.file("alpha"), os.R_OK) and os.access(spool.file("alpha"), os.W_OK),
          "access(2) on a spool file")

    # messages: one per write, 0-byte on an empty close; counted
    spool.sh("echo hi > alpha; : > alpha; touch alpha; truncate -s 0 alpha")
    wait_until(lambda: spool.status("alpha")["open"] == 0, 20, "alpha to be released")
    st = spool.status("alpha")
    check(st["posted"] == 3 and st["completed"] == 3 and st["bytes_confirmed"] == 3,
          "alpha: %s" % st)
    check(os.stat(spool.file("alpha")).st_size == 3, "st_size is not bytes confirmed")
    check(st["state"] == "connected" and st["address"] == "null", "alpha: %s" % st)

    # the limit: EMSGSIZE, nothing sent, counted refused
    check(spool.write("beta", b"b" * 100) == 0, "a write of max_message failed")
    check(spool.write("beta", b"b" * 101) == errno.EMSGSIZE, "no EMSGSIZE over max_message")
    st = spool.status("beta")
    check(st["posted"] == 1 and st["refused"] == 1 and st["max_message"] == 100, "beta: %s" % st)

    # status file, xattrs and stat agree; names keep their case
    spool.sh("printf abcd > Gamma-2")
    st, xa = spool.status("Gamma-2"), spool.xattrs("Gamma-2")
    check(st["mode"] == "sync" and st["posted"] == 1 and st["bytes_confirmed"] == 4, "Gamma-2: %s" % st)
    for k, v in st.items():
        if not k.startswith("last_"):
            check(xa[k] == v, "xattr %s=%r, status %r" % (k, xa[k], v))
    check(set(os.listxattr(spool.file("Gamma-2") + ".status")) == set("user.rpma." + k for k in st),
          "the status file lists other xattrs")
    text = open(spool.file("Gamma-2") + ".status").read()
    check(os.stat(spool.file("Gamma-2") + ".status").st_size == len(text), "status st_size")
    expect_errno(lambda: os.getxattr(spool.file("alpha"), "user.other"), errno.ENODATA,
                 "getxattr of an unknown name")

    # monitoring: no inode table to fill up (df -i shows "-"), and tar of a
    # quiet spool's status files does not find them "changed as we read it"
    sv = os.statvfs(m)
    # no blocks; inodes are room for drafts (64 by default), all free
    check(sv.f_files == 64 and sv.f_ffree == 64 and sv.f_blocks == 0, "statfs: %s" % (sv,))
    spool.settled("alpha")
    r = subprocess.run(["tar", "-cf", work.path("status.tar"), "-C", m, "alpha.status",
                        "beta.status"], capture_output=True, text=True)
    check(r.returncode == 0 and r.stderr == "", "tar of status files: %d %s" % (r.returncode,
                                                                              r.stderr))
    t1 = os.stat(spool.file("alpha") + ".status").st_mtime_ns
    check(os.stat(spool.file("alpha") + ".status").st_mtime_ns == t1, "status mtime moves")
    spool.sh("echo again > alpha")
    spool.settled("alpha")
    check(os.stat(spool.file("alpha") + ".status").st_mtime_ns > t1,
          "status mtime did not move after a message")

    # many short messages through one handle
    spool.sh("for i in $(seq 1 500); do echo $i; done > alpha")
    check(spool.status("alpha")["posted"] == 504, "500 echos did not make 500 messages")
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("null", body))
