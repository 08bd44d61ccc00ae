#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Small messages do not cost a request buffer each (docs/design.md §4.5):
nobody, with Debian's default RLIMIT_MEMLOCK (8 MiB, soft and hard), mounts
a config that leaves [rpmafs] at its defaults; the pool is (2 slots + 4
workers) x 1028 KiB and 256 small slots of 4 KiB. Against an rpma-recv
with 512 receives (credits for 511 messages, receiver confirmation) that
is stopped (SIGSTOP) once connected, one writer's 258 async 64-byte
messages are all in flight at once (in_flight + unacked in the status:
posted, not acknowledged): the 256 small slots hold copies of the first 256
(small_copies), the 2 spare request buffers the last 2, zero-copy. Then the
receiver goes on (SIGCONT): every message arrives, in order, and each slot
comes back. The peer's send_timeout_ms is raised to 30 s, so that a loaded
host does not turn the stopped receiver into a silent one (the pool's
sizing does not depend on it)."""
import pwd
import resource
import sys

from fslab import *

MEMLOCK = 8 * 1024 * 1024  # Debian's default for a user
SMALL = 256                 # small slots of an ordinary user's default mount
BIG_SPARE = 2               # its 2 slots: the request buffers beyond the workers'
N = SMALL + BIG_SPARE       # every one of them holding a message


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


def mounted(mnt):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == mnt for line in f)


# the writer, as nobody: N messages of 64 bytes through one descriptor
# (async, each write(2) one message), then close (close = wait: it returns
# once every message is acknowledged)
WRITER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(int(sys.argv[2])):
    msg = (b"m%05d " % i).ljust(64, b".")
    if os.write(fd, msg) != 64:
        sys.exit("short write %d" % i)
os.close(fd)
"""


def body(work):
    need_lab()
    if os.geteuid() != 0:
        print("skip: needs root to become nobody (the lab runs as root)")
        sys.exit(SKIP)
    _, b = need_lab()
    home = work.path("home")
    mnt = work.path("mnt")
    os.mkdir(home)
    os.mkdir(mnt)
    recv = Receiver(work, b, args=["--no-srq", "--slots", "512", "--max-message", "4KiB"]).start()
    cfg = work.path("inflight.ini")
    with open(cfg, "w") as f:
        f.write("[alpha]\naddress = %s\nport = %d\nsend_timeout_ms = 30000\n" % (b, recv.port))
    os.chmod(cfg, 0o644)
    pw, drop, env = as_nobody(home)
    os.chmod(work.dir, 0o755)
    for path in (home, mnt):
        os.chown(path, pw.pw_uid, pw.pw_gid)

    log = work.path("inflight.log")
    with open(log, "w") as logf:
        proc = subprocess.Popen([os.environ["RPMAFS"], "-f", "--config", cfg, mnt], preexec_fn=drop,
                                env=env, stdout=logf, stderr=logf)
    work.procs.append(proc)
    wait_until(lambda: mounted(mnt) or proc.poll() is not None, SAFETY_S, "nobody's mount")
    check(proc.poll() is None, "rpmafs as nobody exited %s:\n%s" % (proc.returncode, open(log).read()))
    # the kernel may show the mount before rpmafs has logged its line
    wait_until(lambda: "rpmafs: mounted " in open(log).read() or proc.poll() is not None, SAFETY_S,
               "nobody's mount logged")
    text = open(log).read()
    check("6 request buffers of 1028 KiB, %d small slots of 4096 bytes" % SMALL in text,
          "not the pool of an ordinary user's default mount:\n%s" % text)

    def status():
        """The status file as nobody reads it (root may not look into the mount)."""
        r = subprocess.run(["cat", "%s/alpha.status" % mnt], preexec_fn=drop, env=env,
                           capture_output=True, text=True, timeout=SAFETY_S)
        check(r.returncode == 0, "nobody cannot read the status: %s" % r.stderr.strip())
        return dict(l.split(": ", 1) for l in r.stdout.splitlines() if ": " in l)

    writer = None
    stopped = False
    try:
        st = wait_until(lambda: (lambda s: s if s["state"] == "connected" else None)(status()),
                        SAFETY_S, "alpha to connect")
        check(st["confirm"] == "receiver", "not receiver-confirmed: %s" % st)
        check(st["small_slots"] == str(SMALL), "small_slots: %s" % st["small_slots"])
        # the receiver stops: its NIC still takes the sends into its 512
        # receives, but nothing is acknowledged, so every message holds its slot
        recv.proc.send_signal(signal.SIGSTOP)
        stopped = True
        writer = subprocess.Popen([sys.executable, "-c", WRITER, "%s/alpha" % mnt, str(N)],
                                  preexec_fn=drop, env=env, stderr=subprocess.PIPE, text=True)
        work.procs.append(writer)
        st = wait_until(lambda: (lambda s: s if int(s["posted"]) >= N else None)(status()),
                        SAFETY_S, "%d messages posted" % N)
        held = int(st["in_flight"]) + int(st["unacked"])
        print("in flight at once (in_flight + unacked): %d of %d posted; in_flight %s, unacked %s, "
              "pending %s, acked %s, small_copies %s, payload_copies %s" % (
                  held, N, st["in_flight"], st["unacked"], st["pending"], st["acked"],
                  st["small_copies"], st["payload_copies"]))
        check(held == N and held >= 256, "only %d of %d messages in flight: %s" % (held, N, st))
        check(st["acked"] == "0" and st["pending"] == "0" and st["failed"] == "0",
              "status with the receiver stopped: %s" % st)
        # the small slots hold the first 256 copies, the spare buffers the rest
        check(st["small_copies"] == str(SMALL) and st["payload_copies"] == str(SMALL),
              "copies: %s small, %s in all (want %d)" % (st["small_copies"], st["payload_copies"],
                                                          SMALL))
        check(writer.poll() is None, "the writer's close returned before any acknowledgement")

        recv.proc.send_signal(signal.SIGCONT)
        stopped = False
        rc = writer.wait(SAFETY_S)
        check(rc == 0, "the writer failed: %s" % writer.stderr.read())
        wait_until(lambda: len(recv.messages()) >= N, SAFETY_S, "%d messages at rpma-recv" % N)
        got = recv.messages()
        want = [(b"m%05d " % i).ljust(64, b".") for i in range(N)]
        check(got == want, "rpma-recv got %d messages, not the %d written in order" % (len(got), N))
        st = wait_until(lambda: (lambda s: s if s["acked"] == str(N) else None)(status()),
                        SAFETY_S, "every message acknowledged")
        check(st["failed"] == "0" and st["resent"] == "0" and st["unacked"] == "0"
              and st["in_flight"] == "0", "status at the end: %s" % st)
        r = subprocess.run(["fusermount3", "-u", mnt], preexec_fn=drop, env=env,
                           capture_output=True, text=True, timeout=SAFETY_S)
        check(r.returncode == 0, "fusermount3 -u as nobody: %s" % r.stderr.strip())
    finally:
        if stopped:
            recv.proc.send_signal(signal.SIGCONT)
        if mounted(mnt):
            subprocess.run(["umount", "-l", mnt], capture_output=True)
    rc = proc.wait(SAFETY_S)
    check(rc == 0, "rpmafs as nobody: exit status %d:\n%s" % (rc, open(log).read()))
    print("nobody (memlock %d KiB, default pool: 2 slots + 4 workers, %d small slots) held %d "
          "async 64 B messages in flight at once; all %d arrived in order" % (
              MEMLOCK // 1024, SMALL, N, N))


sys.exit(run("nonroot_inflight", body))
