#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Mounting the way /etc/fstab does (docs/design.md: mount.fuse3 passes the config as
the source): mount -t fuse 'PROGRAM#CONFIG' MNT -o OPTIONS runs
`rpmafs CONFIG MNT -o OPTIONS`; umount ends the daemon after it drained."""
import sys

from fslab import *


def body(work):
    _, b = need_lab()
    recv = Receiver(work, b).start()
    spool = Spool(work, {"alpha": {"address": b, "port": recv.port}})
    src = "%s#%s" % (os.environ["RPMAFS"], spool.config)
    r = subprocess.run(["mount", "-t", "fuse", src, spool.mnt, "-o", "_netdev,nofail,noatime"],
                       capture_output=True, text=True, timeout=SAFETY_S)
    check(r.returncode == 0, "mount failed (%d): %s" % (r.returncode, r.stderr))
    mounts = open("/proc/mounts").read()
    check("rpmafs:%s %s fuse.rpmafs" % (spool.config, spool.mnt) in mounts,
          "not in /proc/mounts as rpmafs:CONFIG ... fuse.rpmafs:\n%s" % mounts)
    spool.wait_state("alpha", "connected")
    for i in range(10):
        spool.sh("echo fstab %d > alpha" % i)
    r = subprocess.run(["umount", spool.mnt], capture_output=True, text=True, timeout=SAFETY_S)
    check(r.returncode == 0, "umount failed: %s" % r.stderr)
    # the daemon drains and exits: the receiver sees the disconnect
    wait_until(lambda: "closed" in open(recv.log).read() or "disconnect" in open(recv.log).read(),
               SAFETY_S, "the daemon to disconnect")
    recv.stop()
    check(recv.messages() == [b"fstab %d\n" % i for i in range(10)], "messages: %r" % recv.messages())


sys.exit(run("fstab", body))
