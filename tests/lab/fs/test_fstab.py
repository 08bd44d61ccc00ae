#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Mounting the way /etc/fstab does (docs/design.md: mount.fuse3 passes the config as
the source): mount -t fuse 'PROGRAM#CONFIG' MNT -o OPTIONS runs
`rpmafs CONFIG MNT -o OPTIONS`, which daemonizes; its inbox ([rpmafs] listen)
receives from a plain librpma sender; umount ends the daemon after it drained.
With a key (issue 25): the config's peer with key = delivers to rpma-recv
--keys; a key file of mode 0644 makes mount fail with a non-zero status and
the key file's path on its stderr (the key is read before rpmafs forks, so
the terminal hears it), nothing mounted."""
import sys

from fslab import *

OPTS = "_netdev,nofail,noatime"


def fstab_mount(config, mnt):
    """mount -t fuse 'PROGRAM#CONFIG' MNT -o OPTS, as an fstab line does"""
    src = "%s#%s" % (os.environ["RPMAFS"], config)
    return subprocess.run(["mount", "-t", "fuse", src, mnt, "-o", OPTS],
                          capture_output=True, text=True, timeout=SAFETY_S)


def body(work):
    _, b = need_lab()
    plain = os.environ.get("PLAIN_SEND")
    recv = Receiver(work, b).start()
    keys = work.path("keys")
    os.mkdir(keys, 0o700)
    alpha_key = key_file(os.path.join(keys, "alpha.key"))
    krecv = Receiver(work, b, args=["--keys", keys], name="recv-keys").start()
    wait_until(lambda: "--keys %s: 1 keys" % keys in open(krecv.log).read(), SAFETY_S,
               "rpma-recv to read its keys")
    listen = next_port()
    spool = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, listen)},
                         "alpha": {"address": b, "port": recv.port},
                         "keyed": {"address": b, "port": krecv.port, "key": alpha_key}})
    r = fstab_mount(spool.config, spool.mnt)
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
    # the peer with key = : rpma-recv --keys takes it, every message acknowledged
    spool.wait_state("keyed", "connected")
    for i in range(5):
        spool.sh("echo keyed %d > keyed" % i)
    spool.sh(": > keyed")
    st = spool.settled("keyed", acked=True)
    check(st["acked"] == 6 and st["failed"] == 0 and st["bad_acks"] == 0, "keyed: %s" % st)
    print("fstab mount, key = to rpma-recv --keys: acked %d" % st["acked"])
    r = subprocess.run(["umount", spool.mnt], capture_output=True, text=True, timeout=SAFETY_S)
    check(r.returncode == 0, "umount failed: %s" % r.stderr)
    # the daemon drains and exits: the receiver sees the disconnect
    wait_until(lambda: "closed" in open(recv.log).read() or "disconnect" in open(recv.log).read(),
               SAFETY_S, "the daemon to disconnect")
    recv.stop()
    check(recv.messages() == [b"fstab %d\n" % i for i in range(10)], "messages: %r" % recv.messages())
    krecv.stop()
    want = [b"keyed %d\n" % i for i in range(5)] + [b""]
    check(krecv.messages() == want, "rpma-recv --keys got %r" % krecv.messages())
    check("key=alpha" in open(krecv.log).read(), "rpma-recv does not name the key")

    # a key file others may read: mount fails, non-zero, the key's path on its stderr
    loose = key_file(work.path("loose.key"), 0o644)
    bad = Spool(work, {"keyed": {"address": b, "port": krecv.port, "key": loose}}, name="loose")
    r = fstab_mount(bad.config, bad.mnt)
    check(r.returncode != 0, "mount with a 0644 key file: exit 0 (stderr %r)" % r.stderr)
    check(loose in r.stderr and "mode 0644" in r.stderr and "[keyed] key:" in r.stderr,
          "mount with a 0644 key file: exit %d, stderr %r" % (r.returncode, r.stderr))
    check(not os.path.ismount(bad.mnt), "mounted with a 0644 key file")
    check(bad.mnt not in open("/proc/mounts").read(), "in /proc/mounts with a 0644 key file")
    print("fstab mount with a 0644 key: exit %d, stderr: %s" % (r.returncode, r.stderr.strip()))


sys.exit(run("fstab", body))
