#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""An ordinary user whose RLIMIT_MEMLOCK is too small for the registered
pool (docs/design.md §4.5) gets the figures and the remedies, not a bare errno, and
nothing is mounted."""
import os
import resource
import subprocess
import sys
import tempfile


def main():
    if os.getuid() != 0:
        print("skip: needs root to run rpmafs as another user")
        return 77
    d = tempfile.mkdtemp()
    os.chmod(d, 0o755)
    cfg = os.path.join(d, "rpmafs.ini")
    with open(cfg, "w") as f:
        f.write("[rpmafs]\nslots = 16\n[alpha]\naddress = 192.168.77.2\n")
    os.chmod(cfg, 0o644)
    mnt = os.path.join(d, "mnt")
    os.mkdir(mnt)
    os.chown(mnt, 65534, 65534)

    def as_nobody():
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (8 << 20, 8 << 20))
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)

    r = subprocess.run([os.environ["RPMAFS"], "-f", "--config", cfg, mnt], capture_output=True,
                       text=True, timeout=20, preexec_fn=as_nobody)
    problems = []
    if r.returncode == 0:
        problems.append("exit status 0")
    for needle in ("RLIMIT_MEMLOCK allows 8.0 MiB", "20.1 MiB", "ulimit -l", "LimitMEMLOCK=",
                   "slots"):
        if needle not in r.stderr:
            problems.append("no %r in: %s" % (needle, r.stderr.strip()))
    if os.path.ismount(mnt):
        problems.append("it mounted")
        subprocess.run(["fusermount3", "-uz", mnt])
    subprocess.run(["rm", "-rf", d])
    print(r.stderr.strip())
    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print("PASS memlock")
    return 0


sys.exit(main())
