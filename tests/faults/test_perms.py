#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Security: the mount is private to the user who mounted it.

Mounted by root without options, another user (uid 65534, in a child
process that drops to it) can neither stat, list, open nor write into it
(EACCES from the kernel: FUSE lets no other user in without allow_other).
With -o allow_other,default_permissions the modes are the rules: the
directory 0755, spool files 0222 (anyone may send), status files 0444;
the other user can send and read the status, cannot open a spool file for
reading, cannot chmod or chown, set a user.rpma xattr, or create a file.
Uses null peers: no RDMA needed, but root and /dev/fuse are.
"""
import stat
import sys

from faults import *

NOBODY = 65534


def as_other(fn):
    """Run fn() as uid/gid NOBODY in a child; return what it returned (an errno or 0)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            res = fn()
        except OSError as e:
            res = e.errno
        except BaseException:
            res = -1
        os.write(w, str(res).encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 64)
    os.close(r)
    os.waitpid(pid, 0)
    return int(out or b"-2")


def ok(fn):
    def f():
        fn()
        return 0
    return f


def write_msg(path, data=b"from nobody\n"):
    def f():
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        return 0
    return f


def body(work):
    need_fuse()
    if os.geteuid() != 0:
        print("skip: needs root (to mount for root and to become another user)")
        sys.exit(SKIP)
    os.chmod(work.dir, 0o755)  # the other user must be able to reach the mount point
    sections = {"alpha": {"type": "null"}}

    # private: without allow_other nobody else gets in
    spool = Spool(work, sections, name="private").mount()
    m = spool.mnt
    f = spool.file("alpha")
    check(stat.S_IMODE(os.stat(m).st_mode) == 0o700, "root dir mode %o" % os.stat(m).st_mode)
    check(stat.S_IMODE(os.stat(f).st_mode) == 0o200, "spool mode %o" % os.stat(f).st_mode)
    check(stat.S_IMODE(os.stat(f + ".status").st_mode) == 0o400, "status mode")
    private = {
        "stat the mount": as_other(ok(lambda: os.stat(m))),
        "list the mount": as_other(ok(lambda: os.listdir(m))),
        "stat a spool file": as_other(ok(lambda: os.stat(f))),
        "write a message": as_other(write_msg(f)),
        "read the status": as_other(ok(lambda: open(f + ".status").read())),
        "getxattr": as_other(ok(lambda: os.getxattr(f, "user.rpma.posted"))),
    }
    for what, e in private.items():
        check(e == errno.EACCES, "private mount, another user: %s gave %s, want EACCES" %
              (what, errno.errorcode.get(e, e)))
    check(spool.status("alpha")["posted"] == 0, "the other user's message was sent")
    check(spool.unmount() == 0, "unmount")

    # shared: allow_other + default_permissions, the modes decide
    spool = Spool(work, sections, opts=["-o", "allow_other,default_permissions"], name="shared").mount()
    m, f = spool.mnt, spool.file("alpha")
    check(stat.S_IMODE(os.stat(m).st_mode) == 0o755, "root dir mode %o" % os.stat(m).st_mode)
    check(stat.S_IMODE(os.stat(f).st_mode) == 0o222, "spool mode %o" % os.stat(f).st_mode)
    check(stat.S_IMODE(os.stat(f + ".status").st_mode) == 0o444, "status mode")
    allowed = {
        "list the mount": as_other(ok(lambda: os.listdir(m))),
        "stat a spool file": as_other(ok(lambda: os.stat(f))),
        "write a message": as_other(write_msg(f)),
        "read the status": as_other(ok(lambda: open(f + ".status").read())),
        "getxattr on the status file": as_other(ok(lambda: os.getxattr(f + ".status", "user.rpma.posted"))),
    }
    for what, e in allowed.items():
        check(e == 0, "shared mount, another user: %s gave %s, want success" % (what, errno.errorcode.get(e, e)))
    denied = {
        "open a spool file for reading": (as_other(ok(lambda: open(f, "rb"))), errno.EACCES),
        "write the status file": (as_other(write_msg(f + ".status")), errno.EACCES),
        "chmod": (as_other(ok(lambda: os.chmod(f, 0o666))), errno.EPERM),
        "chown": (as_other(ok(lambda: os.chown(f, NOBODY, NOBODY))), errno.EPERM),
        "create a file": (as_other(ok(lambda: os.close(os.open(os.path.join(m, "x"), os.O_CREAT | os.O_WRONLY)))),
                          errno.EACCES),
        # user.* xattrs need read permission, and the spool file is write-only
        "getxattr on the spool file": (as_other(ok(lambda: os.getxattr(f, "user.rpma.posted"))), errno.EACCES),
        "set a user.rpma xattr": (as_other(ok(lambda: os.setxattr(f, "user.rpma.posted", b"0"))), errno.EPERM),
    }
    for what, (e, want) in denied.items():
        check(e == want, "shared mount, another user: %s gave %s, want %s" %
              (what, errno.errorcode.get(e, e), errno.errorcode[want]))
    st = spool.settled("alpha")
    check(st["posted"] == 1 and st["completed"] == 1, "the other user's one message: %s" % st)
    check(spool.unmount() == 0, "unmount")
    print("private: %s; shared: allowed %s, denied %s" % (
        {k: errno.errorcode.get(v, v) for k, v in private.items()}, list(allowed),
        {k: errno.errorcode.get(v[0], v[0]) for k, v in denied.items()}))


sys.exit(run("faults-perms", body))
