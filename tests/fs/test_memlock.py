#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""An ordinary user on stock Debian limits (RLIMIT_MEMLOCK 8 MiB, soft and
hard) mounts with the default config: the pool is sized to the limit and
the log says so (docs/design.md §4.5): (2 slots + 4 workers) x 1028 KiB
and 256 small slots of 4 KiB, so that small messages do not cost a request
buffer each. A `slots` that does not fit gets the
exact figures and remedies an ordinary user can apply, and nothing is
mounted."""
import os
import resource
import subprocess
import sys
import tempfile
import time

NOBODY = 65534
LIMIT = 8 << 20
BUF = 1052672           # 1 MiB + 4 KiB, one request buffer


def mounted_at(path):
    """From /proc/self/mounts: root may not stat another user's FUSE mount."""
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == path for line in f)


def as_nobody():
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (LIMIT, LIMIT))
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


class Case:
    def __init__(self, d, name, rpmafs_keys):
        self.dir = os.path.join(d, name)
        os.mkdir(self.dir)
        os.chown(self.dir, NOBODY, NOBODY)
        self.cfg = os.path.join(self.dir, "rpmafs.ini")
        with open(self.cfg, "w") as f:
            f.write("[rpmafs]\n%s[alpha]\naddress = 192.168.77.2\n" % rpmafs_keys)
        os.chmod(self.cfg, 0o644)
        self.mnt = os.path.join(self.dir, "mnt")
        os.mkdir(self.mnt)
        os.chown(self.mnt, NOBODY, NOBODY)
        self.log = os.path.join(self.dir, "log")

    def mount(self):
        """rpmafs -f as nobody; returns (mounted?, exit status or None, log text)."""
        env = dict(os.environ, USER="nobody", HOME=self.dir)
        with open(self.log, "w") as logf:
            p = subprocess.Popen([os.environ["RPMAFS"], "-f", "--config", self.cfg, self.mnt],
                                 stdout=logf, stderr=logf, preexec_fn=as_nobody, env=env)
        # safety net only: the mount or the exit is the event waited for
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None and not mounted_at(self.mnt):
            time.sleep(0.05)
        mounted = mounted_at(self.mnt)
        if mounted:
            subprocess.run(["fusermount3", "-u", self.mnt], capture_output=True)
            p.wait(60)
        rc = p.wait(60)
        return mounted, rc, open(self.log).read()


def main():
    if os.getuid() != 0:
        print("skip: needs root to run rpmafs as another user")
        return 77
    if not os.path.exists("/dev/fuse") or os.stat("/dev/fuse").st_mode & 0o006 != 0o006:
        print("skip: /dev/fuse is not open to other users here")
        return 77
    d = tempfile.mkdtemp()
    os.chmod(d, 0o755)
    problems = []

    # the default config: slots unset, sized to the limit once the 256 small
    # slots have their 1 MiB (3 big slots would fit alone, 2 fit with them)
    ok, rc, log = Case(d, "default", "").mount()
    print(log.strip())
    if not ok:
        problems.append("the default config did not mount as nobody: %s" % log.strip())
    if ("slots = 2: the pool of (2 slots + 4 workers) x 1028 KiB and 256 small slots of 4 KiB"
            not in log or "8192 KiB" not in log):
        problems.append("the log does not say what pool was chosen: %s" % log.strip())
    if "6 request buffers of 1028 KiB, 256 small slots of 4096 bytes" not in log:
        problems.append("the mount's line does not give the pool: %s" % log.strip())

    # slots = 4: 8 buffers are 8224 KiB, over 8192 KiB by 32 KiB (no rounding hides it)
    for slots in (16, 4):
        ok, rc, log = Case(d, "slots%d" % slots, "slots = %d\n" % slots).mount()
        print(log.strip())
        need = (slots + 4) * BUF + (256 << 10) + (32 << 10)
        if ok or rc == 0:
            problems.append("slots = %d mounted under an 8 MiB limit" % slots)
        for needle in ("(%d slots + 4 workers) x %d bytes" % (slots, BUF),
                       "= %d bytes" % need, "allows %d bytes (8192 KiB)" % LIMIT,
                       "at most 3 slots fit", "/etc/security/limits.d/", "nobody - memlock",
                       "LimitMEMLOCK=", "fewer 'slots'"):
            if needle not in log:
                problems.append("slots = %d: no %r in: %s" % (slots, needle, log.strip()))
        if "ulimit -l" in log:
            problems.append("suggests ulimit -l though the hard limit is the soft one")

    # the largest count that fits mounts; the small slots get what is left:
    # 8192 KiB - 288 KiB - 7 x 1028 KiB = 708 KiB, 174 slots of 4 KiB
    # (each slot's stride is 4160 bytes: 4096 and the 16 bytes of a tag, §11.2,
    # rounded to 64)
    ok, rc, log = Case(d, "slots3", "slots = 3\n").mount()
    if not ok:
        problems.append("slots = 3 did not mount: %s" % log.strip())
    if "7 request buffers of 1028 KiB, 174 small slots of 4096 bytes" not in log:
        problems.append("slots = 3: not the small slots that are left: %s" % log.strip())

    subprocess.run(["rm", "-rf", d])
    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print("PASS memlock")
    return 0


sys.exit(main())
