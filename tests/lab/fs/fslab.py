# SPDX-License-Identifier: BSD-3-Clause
"""fslab -- what the rpmafs integration tests share.

A test starts rpma-recv (Receiver), mounts rpmafs on a config it writes
(Spool), drives the spool with shell commands as a user would (sh), and
checks what arrived against what it wrote. Paths come from meson: RPMAFS,
RPMA_RECV. RDMA tests need the lab (LAB_A/LAB_B, set by tools/rdma-lab);
null-peer tests run anywhere /dev/fuse works.
"""
import errno
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77

# what a write that was not sent fails with (docs/design.md §4.2): each
# errno's text says what became of the connection
NOT_SENT = (errno.ETIMEDOUT, errno.ECONNREFUSED, errno.EHOSTUNREACH)

# How long a wait for an event may take before the test gives up. It is a
# safety net that turns a hang into a failure with a message, never a
# measure: every wait below ends as soon as its event (a log line, a mount,
# a status key) is there. The slowest event seen, rpma-recv starting to
# listen under valgrind in a TCG guest while two other lab VMs loaded the
# 2-core host, took tens of seconds (a fixed 20 s once made faults-valgrind
# fail); 300 s is far above anything plausible, and below the meson timeout
# of every test that uses it, so a hang is reported by the test itself.
SAFETY_S = 300


def need_lab():
    if not os.environ.get("LAB_B"):
        print("skip: LAB_B is not set: run the lab tests inside the lab (tools/rdma-lab)")
        sys.exit(SKIP)
    return os.environ["LAB_A"], os.environ["LAB_B"]


def need_fuse():
    if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
        print("skip: no /dev/fuse or fusermount3 here")
        sys.exit(SKIP)


def fail(msg):
    raise AssertionError(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


def wait_until(pred, seconds, what):
    """Poll pred until it is true; fail after seconds (a safety net: pass
    SAFETY_S). what may be a function, called for the failure's message."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    fail("timed out after %ss waiting for %s" % (seconds, what() if callable(what) else what))


SYS_WRITE = {"x86_64": 1, "aarch64": 64}.get(os.uname().machine)


def in_write(thread):
    """Whether thread (a threading.Thread) sleeps in write(2): the first
    field of /proc/self/task/TID/syscall is the number of the system call
    a blocked thread is in ("running" otherwise). The event a test waits
    for when writers must be blocked, instead of sleeping and hoping."""
    try:
        with open("/proc/self/task/%d/syscall" % thread.native_id) as f:
            return f.read().split()[0] == str(SYS_WRITE)
    except (OSError, IndexError):
        return False


class Work:
    """A scratch directory, removed at the end unless the test failed."""

    def __init__(self, name):
        self.dir = tempfile.mkdtemp(prefix="rpmafs-%s." % name, dir=os.environ.get("TMPDIR", "/tmp"))
        self.procs = []
        self.mounts = []

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def cleanup(self, ok):
        for mnt in self.mounts:
            if os.path.ismount(mnt):
                subprocess.run(["fusermount3", "-uz", mnt], capture_output=True)
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if ok:
            shutil.rmtree(self.dir, ignore_errors=True)
        else:
            for name in sorted(os.listdir(self.dir)):
                if name.endswith(".log"):
                    with open(self.path(name), errors="replace") as f:
                        sys.stderr.write("---- %s\n%s" % (name, f.read()[-6000:]))


# tests run in parallel and meson starts them one after the other (pids
# close together): room for 8 ports per test before the next pid's range
_port = 7400 + (os.getpid() % 1000) * 8


def next_port():
    global _port
    _port += 1
    return _port


class Receiver:
    """rpma-recv listening on addr; --format len into a file we decode."""

    def __init__(self, work, addr, port=None, args=(), name="recv", outdir=None, popen=None):
        """outdir: where the output (and its state file) go, the work
        directory unless given; popen: more Popen arguments (preexec_fn, env:
        to run it as another user, who must be able to write outdir)."""
        self.work, self.addr = work, addr
        self.port = port or next_port()
        self.args = list(args)
        self.name = name
        self.popen = dict(popen or {})
        self.out = os.path.join(outdir or work.dir, "%s.%d.bin" % (name, self.port))
        self.log = work.path("%s.%d.log" % (name, self.port))
        self.proc = None
        self.runs = 0

    def start(self):
        self.runs += 1
        out = "%s.%d" % (self.out, self.runs)
        self.outputs = getattr(self, "outputs", []) + [out]
        logf = open(self.log, "a")
        self.proc = subprocess.Popen(
            [os.environ["RPMA_RECV"], "--listen", "%s:%d" % (self.addr, self.port),
             "--format", "len", "--output", out] + self.args,
            stdout=subprocess.DEVNULL, stderr=logf, **self.popen)
        self.work.procs.append(self.proc)
        # the event: rpma-recv logs "listening on" once its endpoint is up
        wait_until(lambda: "listening on" in open(self.log).read() or self.proc.poll() is not None,
                   SAFETY_S, "rpma-recv to listen")
        check(self.proc.poll() is None, "rpma-recv exited: see %s" % self.log)
        return self

    def stop(self, sig=signal.SIGTERM, timeout=SAFETY_S):
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("rpma-recv did not exit on signal %d" % sig)
        return rc

    def messages(self):
        """Every message received, over every run, in order."""
        msgs = []
        for out in self.outputs:
            if not os.path.exists(out):
                continue
            data = open(out, "rb").read()
            i = 0
            while i < len(data):
                check(i + 4 <= len(data), "truncated length prefix in %s" % out)
                (n,) = struct.unpack_from("<I", data, i)
                check(i + 4 + n <= len(data), "truncated message in %s" % out)
                msgs.append(data[i + 4:i + 4 + n])
                i += 4 + n
        return msgs


def ini(sections):
    lines = []
    for name, keys in sections.items():
        lines.append("[%s]" % name)
        lines += ["%s = %s" % kv for kv in keys.items()]
        lines.append("")
    return "\n".join(lines)


class Spool:
    """rpmafs mounted in the foreground on a config built from sections."""

    def __init__(self, work, sections, opts=(), name="spool"):
        self.work = work
        self.mnt = work.path(name)
        os.mkdir(self.mnt)
        self.config = work.path(name + ".ini")
        with open(self.config, "w") as f:
            f.write(ini(sections))
        self.log = work.path(name + ".log")
        self.sections = sections
        self.opts = list(opts)
        self.proc = None
        work.mounts.append(self.mnt)

    def mount(self, wait_connected=True):
        logf = open(self.log, "a")
        self.proc = subprocess.Popen(
            [os.environ["RPMAFS"], "-f", "--config", self.config, self.mnt] + self.opts,
            stdout=logf, stderr=logf)
        self.work.procs.append(self.proc)
        wait_until(lambda: os.path.ismount(self.mnt) or self.proc.poll() is not None, SAFETY_S,
                   "the mount")
        check(self.proc.poll() is None, "rpmafs exited: see %s" % self.log)
        if wait_connected:
            for peer in self.peers():
                self.wait_state(peer, "connected")
        return self

    def peers(self):
        return [s for s in self.sections if s != "rpmafs"]

    def file(self, peer):
        return os.path.join(self.mnt, peer)

    def status(self, peer):
        st = {}
        with open(self.file(peer) + ".status") as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition(": ")
                st[k] = int(v) if v.isdigit() else v
        return st

    def xattrs(self, peer):
        path = self.file(peer)
        out = {}
        for name in os.listxattr(path):
            v = os.getxattr(path, name).decode()
            out[name[len("user.rpma."):]] = int(v) if v.isdigit() else v
        return out

    def wait_state(self, peer, state, seconds=SAFETY_S):
        wait_until(lambda: self.status(peer)["state"] == state, seconds,
                   "%s to be %s (status: %s)" % (peer, state, self.status(peer)))

    def settled(self, peer, seconds=SAFETY_S, acked=False):
        """Wait until nothing is queued or in flight (acked: nor waiting for
        its acknowledgement, which comes in batches after the completion);
        return the status."""
        return wait_until(lambda: (lambda s: s if s["in_flight"] == 0 and s["pending"] == 0 and
                                   (not acked or s["unacked"] == 0) else None)(self.status(peer)),
                          seconds, "%s to settle" % peer)

    def sh(self, cmd, check_rc=True, timeout=SAFETY_S):
        try:
            r = subprocess.run(["sh", "-c", cmd], cwd=self.mnt, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            fail("`%s` still running after %ss" % (cmd, timeout))
        if check_rc and r.returncode != 0:
            fail("`%s` failed (%d): %s" % (cmd, r.returncode, r.stderr.strip()))
        return r

    def write(self, peer, data, flags=0):
        """One write(2); returns the errno it failed with, or 0."""
        fd = os.open(self.file(peer), os.O_WRONLY | flags)
        try:
            n = os.write(fd, data)
            check(n == len(data), "short write: %d of %d" % (n, len(data)))
            return 0
        except OSError as e:
            return e.errno
        finally:
            try:
                os.close(fd)
            except OSError:
                pass

    def unmount(self, timeout=SAFETY_S):
        subprocess.run(["fusermount3", "-u", self.mnt], capture_output=True)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("rpmafs did not exit %ds after fusermount3 -u" % timeout)


def inbox_status(m):
    """A mount's inbox.status as a dict (numbers as ints)."""
    st = {}
    with open(os.path.join(m.mnt, "inbox.status")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition(": ")
            st[k] = int(v) if v.isdigit() else v
    return st


def read_len_records(path, nbytes):
    """Read an inbox (inbox_format = len) until nbytes came: a read blocks
    until a message is there, and a large record comes in pieces; the bytes."""
    out = bytearray()
    fd = os.open(path, os.O_RDONLY)
    try:
        while len(out) < nbytes:
            out += os.read(fd, 1 << 20)
    finally:
        os.close(fd)
    check(len(out) == nbytes, "read %d bytes, want %d" % (len(out), nbytes))
    return bytes(out)


def len_records(data):
    """The messages of inbox_format = len bytes: a 4-byte little-endian length, then that many."""
    got, i = [], 0
    while i < len(data):
        (n,) = struct.unpack_from("<I", data, i)
        got.append(data[i + 4:i + 4 + n])
        i += 4 + n
    return got


class Capture:
    """tcpdump of RoCEv2 (UDP 4791) on netdev into pcap, packet by packet,
    with a kernel buffer that holds a whole test's exchange (a few MiB).
    The snapshot length is one frame of the veth (rxe's packets are at
    most its MTU): with --immediate-mode libpcap's ring has frames of the
    snapshot length, so the default 256 KiB gave 64 MiB only 256 of them,
    and tcpdump dropped packets when a loaded VM left it behind by 256."""

    def __init__(self, work, netdev, pcap, name="tcpdump"):
        self.pcap = pcap
        self.log = work.path(name + ".log")
        self.proc = subprocess.Popen(
            ["tcpdump", "-i", netdev, "--immediate-mode", "-U", "-n", "-B", "65536",
             "-s", "9216", "-w", pcap, "udp", "port", "4791"],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        work.procs.append(self.proc)
        wait_until(lambda: "listening on" in open(self.log).read() or
                   self.proc.poll() is not None, SAFETY_S, "tcpdump to listen")
        check(self.proc.poll() is None, "tcpdump exited: %s" % open(self.log).read())

    def until(self, marker):
        """Wait for marker, sent last, in the capture (the event that it holds
        all that went before), stop tcpdump, and fail if it dropped a packet
        (a dropped one could hide a marker); the bytes captured and tcpdump's
        report."""
        wait_until(lambda: marker in open(self.pcap, "rb").read(), SAFETY_S,
                   lambda: "the marker %r in the capture (%d bytes; %s)" % (
                       marker, os.path.getsize(self.pcap), open(self.log).read().strip()))
        self.proc.terminate()
        self.proc.wait(SAFETY_S)
        report = open(self.log).read()
        check(re.search(r"^0 packets dropped by kernel", report, re.M),
              "tcpdump dropped packets: the capture proves nothing (%s)" % report)
        return open(self.pcap, "rb").read(), report


def key_file(path, mode=0o600):
    """A new key file of 32 random bytes at path, of mode; its path."""
    with open(path, "wb") as f:
        f.write(os.urandom(32))
    os.chmod(path, mode)
    return path


def run(name, body):
    """Run body(work); print PASS or the failure; exit as meson expects."""
    work = Work(name)
    ok = False
    try:
        body(work)
        ok = True
    finally:
        work.cleanup(ok)
    print("PASS %s" % name)
    return 0


__all__ = ["NOT_SENT", "Capture", "inbox_status", "key_file", "read_len_records", "len_records", "need_lab", "need_fuse", "check", "fail", "wait_until", "SAFETY_S", "in_write", "Receiver", "Spool", "run", "next_port",
           "errno", "os", "signal", "subprocess", "time", "SKIP"]
