#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""An ordinary user mounts rpmafs in the lab, on stock limits and the
default config (docs/design.md §4.5): /dev/fuse is what Debian's udev makes
it (0666, root:root, char 10,229; tools/rdma-lab sets it, the VM has no
udev), and nobody, with Debian's default RLIMIT_MEMLOCK (8 MiB, soft and
hard) and a HOME of its own under /tmp, mounts with fusermount3 a config
that leaves `slots` unset: the pool is sized to the limit ((2 slots + 4
workers) x 1028 KiB and 256 small slots of 4 KiB), registered on the
Soft-RoCE device, and messages
reach rpma-recv. A `slots` that does not fit refuses to mount with the
figures and remedies. With a key (issue 25): rpma-recv --keys DIR runs as
nobody too (--slots 16: its buffers in 8 MiB), and nobody mounts a config
whose peer has key = a file nobody owns, of mode 0600: the messages are
delivered and acknowledged; a key file of root's (0600) refuses nobody's
mount with its path."""
import pwd
import resource
import stat
import sys

from fslab import *

MEMLOCK = 8 * 1024 * 1024  # Debian's default for a user (/etc/security/limits.conf has none)


def as_nobody(home):
    pw = pwd.getpwnam("nobody")

    def drop():
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (MEMLOCK, MEMLOCK))
        os.setgroups([])
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
        os.chdir(home)

    env = dict(os.environ, HOME=home, USER="nobody", LOGNAME="nobody")
    return pw, drop, env


def run_as(drop, env, args, **kw):
    return subprocess.run(args, preexec_fn=drop, env=env, capture_output=True, text=True,
                          timeout=SAFETY_S, **kw)


def mounted(mnt):
    """From /proc: root cannot stat a FUSE mount made without allow_other."""
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == mnt for line in f)


def body(work):
    need_lab()
    if os.geteuid() != 0:
        print("skip: needs root to become nobody (the lab runs as root)")
        sys.exit(SKIP)

    st = os.stat("/dev/fuse")
    check(stat.S_ISCHR(st.st_mode), "/dev/fuse is not a character device")
    check((os.major(st.st_rdev), os.minor(st.st_rdev)) == (10, 229),
          "/dev/fuse is %d,%d, not 10,229" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
    check(stat.S_IMODE(st.st_mode) == 0o666, "/dev/fuse is %o, not 0666" % stat.S_IMODE(st.st_mode))
    check((st.st_uid, st.st_gid) == (0, 0), "/dev/fuse is owned by %d:%d" % (st.st_uid, st.st_gid))

    home = work.path("home")
    os.mkdir(home)
    mnt = work.path("mnt")
    os.mkdir(mnt)
    _, b = need_lab()
    recv = Receiver(work, b).start()
    cfg = work.path("nonroot.ini")
    with open(cfg, "w") as f:
        f.write("[alpha]\naddress = %s\nport = %d\n\n[dry]\ntype = null\n" % (b, recv.port))
    big = work.path("big.ini")
    with open(big, "w") as f:
        f.write("[rpmafs]\nslots = 16\n\n[alpha]\naddress = %s\nport = %d\n" % (b, recv.port))
    os.chmod(cfg, 0o644)
    os.chmod(big, 0o644)
    pw, drop, env = as_nobody(home)
    os.chmod(work.dir, 0o755)
    for path in (home, mnt):
        os.chown(path, pw.pw_uid, pw.pw_gid)

    r = run_as(drop, env, [sys.executable, "-c", "import os; os.close(os.open('/dev/fuse', os.O_RDWR))"])
    check(r.returncode == 0, "nobody cannot open /dev/fuse: %s" % r.stderr.strip())
    r = run_as(drop, env, ["sh", "-c", "ulimit -l"])
    check(r.stdout.strip() == str(MEMLOCK // 1024), "nobody's memlock limit: %r" % r.stdout)

    log = work.path("nonroot.log")
    with open(log, "w") as logf:
        proc = subprocess.Popen([os.environ["RPMAFS"], "-f", "--config", cfg, mnt], preexec_fn=drop,
                                env=env, stdout=logf, stderr=logf)
    work.procs.append(proc)
    wait_until(lambda: mounted(mnt) or proc.poll() is not None, SAFETY_S, "nobody's mount")
    check(proc.poll() is None, "rpmafs as nobody exited %s:\n%s" % (proc.returncode, open(log).read()))
    with open("/proc/self/mountinfo") as f:
        line = next(l for l in f if l.split()[4] == mnt)
    check("fuse.rpmafs" in line and "user_id=%d" % pw.pw_uid in line,
          "not nobody's fuse.rpmafs mount: %s" % line.strip())

    check("slots = 2: the pool of (2 slots + 4 workers) x 1028 KiB and 256 small slots of 4 KiB "
          "fits in RLIMIT_MEMLOCK (8192 KiB" in open(log).read(),
          "the log does not say how the pool was sized:\n%s" % open(log).read())
    try:
        r = run_as(drop, env, ["sh", "-c", "echo hi > %s/dry && : > %s/dry" % (mnt, mnt)])
        check(r.returncode == 0, "nobody's writes: %s" % r.stderr.strip())
        r = run_as(drop, env, ["sh", "-c", "echo over rdma > %s/alpha && : > %s/alpha" % (mnt, mnt)])
        check(r.returncode == 0, "nobody's writes to alpha: %s" % r.stderr.strip())
        wait_until(lambda: len(recv.messages()) >= 2, SAFETY_S, "alpha's messages at rpma-recv")
        check(recv.messages() == [b"over rdma\n", b""], "rpma-recv got %r" % recv.messages())

        def status():
            """The status file as nobody reads it (root may not look into the mount)."""
            r = run_as(drop, env, ["cat", "%s/dry.status" % mnt])
            check(r.returncode == 0, "nobody cannot read the status: %s" % r.stderr.strip())
            return dict(l.split(": ", 1) for l in r.stdout.splitlines() if ": " in l)

        # the 0-byte message goes out when the kernel releases the file
        st = wait_until(lambda: (lambda s: s if s["completed"] == "2" else None)(status()), SAFETY_S,
                        "the two messages to complete")
        check(st["posted"] == "2" and st["failed"] == "0", "status after two messages: %s" % st)

        r = run_as(drop, env, ["fusermount3", "-u", mnt])
        check(r.returncode == 0, "fusermount3 -u as nobody: %s" % r.stderr.strip())
    finally:
        if mounted(mnt):
            subprocess.run(["umount", "-l", mnt], capture_output=True)
    rc = proc.wait(SAFETY_S)
    check(rc == 0, "rpmafs as nobody: exit status %d:\n%s" % (rc, open(log).read()))
    check(not mounted(mnt), "still mounted after fusermount3 -u")

    # slots = 16 does not fit: nothing mounted, and the error says by how much
    r = run_as(drop, env, [os.environ["RPMAFS"], "-f", "--config", big, mnt])
    check(r.returncode != 0 and not mounted(mnt), "slots = 16 mounted under 8 MiB")
    for needle in ("(16 slots + 4 workers) x 1052672 bytes", "RLIMIT_MEMLOCK allows 8388608 bytes",
                   "at most 3 slots fit", "nobody - memlock", "LimitMEMLOCK="):
        check(needle in r.stderr, "no %r in: %s" % (needle, r.stderr.strip()))
    print("nobody (memlock %d KiB) mounted the default config, sent 4 messages, unmounted; "
          "slots = 16 refused" % (MEMLOCK // 1024))

    # keys, all of them nobody's: rpma-recv --keys and the mount with key = run as nobody
    keys = os.path.join(home, "keys")
    os.mkdir(keys, 0o700)
    key = key_file(os.path.join(keys, "alpha.key"))
    for path in (keys, key):
        os.chown(path, pw.pw_uid, pw.pw_gid)
    krecv = Receiver(work, b, args=["--keys", keys, "--slots", "16"], name="recv-keys",
                     outdir=home, popen={"preexec_fn": drop, "env": env}).start()
    wait_until(lambda: "--keys %s: 1 keys" % keys in open(krecv.log).read(), SAFETY_S,
               "rpma-recv (nobody) to read its keys")
    kcfg = work.path("keyed.ini")
    with open(kcfg, "w") as f:
        f.write("[alpha]\naddress = %s\nport = %d\nkey = %s\n" % (b, krecv.port, key))
    os.chmod(kcfg, 0o644)
    klog = work.path("nonroot-keys.log")
    with open(klog, "w") as logf:
        proc = subprocess.Popen([os.environ["RPMAFS"], "-f", "--config", kcfg, mnt],
                                preexec_fn=drop, env=env, stdout=logf, stderr=logf)
    work.procs.append(proc)
    wait_until(lambda: mounted(mnt) or proc.poll() is not None, SAFETY_S, "nobody's keyed mount")
    check(proc.poll() is None, "rpmafs (key =) as nobody exited %s:\n%s" % (proc.returncode,
                                                                            open(klog).read()))

    def kstatus():
        r = run_as(drop, env, ["cat", "%s/alpha.status" % mnt])
        check(r.returncode == 0, "nobody cannot read alpha.status: %s" % r.stderr.strip())
        return dict(l.split(": ", 1) for l in r.stdout.splitlines() if ": " in l)

    try:
        wait_until(lambda: kstatus()["state"] == "connected", SAFETY_S,
                   lambda: "nobody's keyed alpha to connect: %s" % kstatus())
        blob = os.urandom(60000)
        with open(os.path.join(home, "blob"), "wb") as f:
            f.write(blob)
        os.chown(os.path.join(home, "blob"), pw.pw_uid, pw.pw_gid)
        r = run_as(drop, env, ["sh", "-c", "echo keyed > %s/alpha && : > %s/alpha && "
                               "cat blob > %s/alpha" % (mnt, mnt, mnt)])
        check(r.returncode == 0, "nobody's keyed writes: %s" % r.stderr.strip())
        st = wait_until(lambda: (lambda s: s if s["acked"] == "3" and s["in_flight"] == "0"
                                 else None)(kstatus()), SAFETY_S,
                        lambda: "3 acknowledged messages: %s" % kstatus())
        check(st["failed"] == "0" and st["bad_acks"] == "0", "keyed alpha: %s" % st)
        got = krecv.messages()
        check(got == [b"keyed\n", b"", blob], "rpma-recv --keys (nobody) got sizes %s" % (
            [len(m) for m in got]))
        check("key=alpha" in open(krecv.log).read(), "rpma-recv does not name the key")
        r = run_as(drop, env, ["fusermount3", "-u", mnt])
        check(r.returncode == 0, "fusermount3 -u as nobody: %s" % r.stderr.strip())
    finally:
        if mounted(mnt):
            subprocess.run(["umount", "-l", mnt], capture_output=True)
    rc = proc.wait(SAFETY_S)
    check(rc == 0, "rpmafs (key =) as nobody: exit status %d:\n%s" % (rc, open(klog).read()))
    check(krecv.stop() == 0, "rpma-recv (nobody) exit status")
    print("nobody: rpma-recv --keys and a mount with key = (0600, nobody's): sizes %s, acked %s"
          % ([len(m) for m in got], st["acked"]))

    # a key file nobody may not read (root's, 0600): the mount is refused, naming it
    rootkey = key_file(work.path("root.key"))
    rcfg = work.path("rootkey.ini")
    with open(rcfg, "w") as f:
        f.write("[alpha]\naddress = %s\nport = %d\nkey = %s\n" % (b, krecv.port, rootkey))
    os.chmod(rcfg, 0o644)
    r = run_as(drop, env, [os.environ["RPMAFS"], "-f", "--config", rcfg, mnt])
    check(r.returncode == 2 and not mounted(mnt), "root's key: exit %d" % r.returncode)
    check("[alpha] key: %s: Permission denied" % rootkey in r.stderr, "stderr: %s" % r.stderr)
    print("nobody with root's key file: exit %d, %s" % (r.returncode, r.stderr.strip()))


sys.exit(run("nonroot", body))
