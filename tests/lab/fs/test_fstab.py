#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Mounting the way /etc/fstab does (docs/design.md: mount.fuse3 passes the config as
the source): mount -t fuse 'PROGRAM#CONFIG' MNT -o OPTIONS runs
`rpmafs CONFIG MNT -o OPTIONS`, which daemonizes; its inbox ([rpmafs] listen)
receives from a plain librpma sender; umount ends the daemon after it drained."""
import sys

from fslab import *


def body(work):
    _, b = need_lab()
    plain = os.environ.get("PLAIN_SEND")
    recv = Receiver(work, b).start()
    listen = next_port()
    spool = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, listen)},
                         "alpha": {"address": b, "port": recv.port}})
    src = "%s#%s" % (os.environ["RPMAFS"], spool.config)
    r = subprocess.run(["mount", "-t", "fuse", src, spool.mnt, "-o", "_netdev,nofail,noatime"],
                       capture_output=True, text=True, timeout=SAFETY_S)
    check(r.returncode == 0, "mount failed (%d): %s" % (r.returncode, r.stderr))
    mounts = open("/proc/mounts").read()
    check("rpmafs:%s %s fuse.rpmafs" % (spool.config, spool.mnt) in mounts,
          "not in /proc/mounts as rpmafs:CONFIG ... fuse.rpmafs:\n%s" % mounts)
    spool.wait_state("alpha", "connected")
    if plain:
        try:
            r = subprocess.run([plain, b, str(listen), "to the fstab mount"], capture_output=True,
                               text=True, timeout=SAFETY_S)
        except subprocess.TimeoutExpired:
            fail("plain-send did not finish within %ss: the inbox never accepted it" % SAFETY_S)
        check(r.returncode == 0, "plain-send exited %d: %s%s" % (r.returncode, r.stdout, r.stderr))
        with open(os.path.join(spool.mnt, "inbox"), "rb") as f:
            got = os.read(f.fileno(), 65536)
        check(got == b"to the fstab mount\n", "the inbox gave %r" % got)
    else:
        print("no PLAIN_SEND (no Debian librpma): the inbox is not sent to")
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
