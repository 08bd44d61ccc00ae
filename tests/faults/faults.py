# SPDX-License-Identifier: BSD-3-Clause
"""faults -- what the fault, load and hostile-input tests share (suite 'faults').

Built on tests/lab/fs/fslab.py (Receiver, Spool, Work, run ...). Adds:
  Writer      a thread that writes numbered messages to one spool file and
              records, per write, the outcome and how long it took;
  account()   checks what arrived against what was written and what the
              status file says, and returns one row of the figures that
              tests/RELIABILITY.md tabulates;
  Net         the lab network's veth and rxe devices: down, up, delete,
              re-add, and putting back the routes and static neighbours
              that tools/rdma-lab made (lab_net_up).

A message is b"WW:SSSSSSSS:" (writer id, sequence number) padded with a
pattern to its size, so that every received message names its writer and
its place in that writer's stream.
"""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.environ.get("FSLAB_DIR",
                                  os.path.join(os.path.dirname(__file__), "..", "lab", "fs")))
from fslab import *  # noqa: E402,F401,F403
import fslab  # noqa: E402

HDR = 12  # len(b"WW:SSSSSSSS:")


# every byte value, long enough for a message of 1 MiB at any offset
PATTERN = bytes(range(256)) * 4200


def message(wid, seq, size):
    """Message seq of writer wid: its header, then size - HDR pattern bytes."""
    head = b"%02d:%08d:" % (wid, seq)
    off = (wid * 31 + seq * 7) & 0xFF
    return head + PATTERN[off:off + max(size - HDR, 0)]


def parse(msg):
    """(writer id, seq) of a message, or None for a 0-byte one."""
    if not msg:
        return None
    check(len(msg) >= HDR and msg[2:3] == b":" and msg[11:12] == b":",
          "a message that no writer sent: %r" % msg[:40])
    wid, seq = int(msg[:2]), int(msg[3:11])
    check(msg == message(wid, seq, len(msg)), "message %d:%d arrived corrupted" % (wid, seq))
    return wid, seq


class Writer(threading.Thread):
    """Writes count messages (sizes cycling through sizes) through one file
    descriptor; records (seq, errno or 0, end time, duration) per write."""

    def __init__(self, spool, peer, wid, count, sizes=(64,), flags=0, pause=0.0, stop=None):
        super().__init__(daemon=True)
        self.spool, self.peer, self.wid, self.count = spool, peer, wid, count
        self.sizes, self.flags, self.pause = sizes, flags, pause
        self.stop_evt = stop
        self.results = []  # (seq, errno, t_end, seconds)
        self.close_err = 0
        self.open_err = 0
        self.empties = set()  # seqs sent as 0-byte messages

    def run(self):
        try:
            fd = os.open(self.spool.file(self.peer), os.O_WRONLY | self.flags)
        except OSError as e:
            self.open_err = e.errno
            return
        for seq in range(self.count):
            if self.stop_evt is not None and self.stop_evt.is_set():
                break
            size = self.sizes[seq % len(self.sizes)]
            t0 = time.monotonic()
            err = self.empty() if size == 0 else self.write(fd, message(self.wid, seq, size))
            t1 = time.monotonic()
            self.results.append((seq, err, t1, t1 - t0))
            if size == 0:
                self.empties.add(seq)
            if err == errno.ENOTCONN and self.spool.proc.poll() is not None:
                break  # the daemon is gone: the mount answers ENOTCONN from now on
            if self.pause:
                time.sleep(self.pause)
        try:
            os.close(fd)
        except OSError as e:
            self.close_err = e.errno

    @staticmethod
    def write(fd, data):
        try:
            n = os.write(fd, data)
            return 0 if n == len(data) else -1
        except OSError as e:
            return e.errno

    def empty(self):
        """A 0-byte message: a descriptor opened O_TRUNC for writing, closed unused."""
        try:
            os.close(os.open(self.spool.file(self.peer), os.O_WRONLY | os.O_TRUNC | self.flags))
            return 0
        except OSError as e:
            return e.errno

    def ok(self):
        """Successful writes of messages that carry their number (not 0-byte ones)."""
        return [s for s, e, _, _ in self.results if e == 0 and s not in self.empties]

    def n_ok(self):
        return sum(1 for _, e, _, _ in self.results if e == 0)

    def n_empty_ok(self):
        return sum(1 for s, e, _, _ in self.results if e == 0 and s in self.empties)

    def errors(self):
        return [(s, e) for s, e, _, _ in self.results if e != 0]

    def max_wait(self):
        return max((d for _, _, _, d in self.results), default=0.0)


def wait_writers(writers, seconds=SAFETY_S):
    """Join the writers; a safety net of seconds against a writer blocked for good."""
    deadline = time.monotonic() + seconds
    for w in writers:
        w.join(max(0.1, deadline - time.monotonic()))
    stuck = [w.wid for w in writers if w.is_alive()]
    check(not stuck, "writers %s still blocked after %ss" % (stuck, seconds))


def received_by_writer(msgs):
    """{writer id: [seq, ...] in arrival order}, and the number of 0-byte messages."""
    by, empty = {}, 0
    for m in msgs:
        p = parse(m)
        if p is None:
            empty += 1
            continue
        by.setdefault(p[0], []).append(p[1])
    return by, empty


def account(what, spool, peer, writers, msgs, mode, lost_ok=None, complete=False):
    """Check one peer's figures and return them as a row.

    writers: the Writer threads of this peer; msgs: what its receiver got.
    mode: 'sync' -- every write that succeeded was delivered exactly once
    (lost_ok: seqs per writer that may be missing, see RELIABILITY.md);
    'async' -- successful writes = posted = completed + failed, and what
    arrived is a subset of them. Both: no duplicates, nothing that no write
    sent, per-writer order kept, attempted writes = posted + refused.
    complete: no fault happened -- every successful write arrived, async too,
    and as many 0-byte messages as were sent.
    """
    st = spool.settled(peer)
    by, empty = received_by_writer(msgs)
    attempted = sum(len(w.results) for w in writers)
    ok = sum(w.n_ok() for w in writers)
    errs = [e for w in writers for _, e in w.errors()]
    dups = 0
    missing = []
    for w in writers:
        got = by.get(w.wid, [])
        dups += len(got) - len(set(got))
        check(got == sorted(got), "%s: writer %d's messages arrived out of order" % (what, w.wid))
        okset = set(w.ok())
        failed_sent = set(s for s, e in w.errors() if e == errno.EIO)
        extra = set(got) - okset - (failed_sent if mode == "sync" else set())
        check(not extra, "%s: writer %d: received %d messages whose write did not succeed: %s" %
              (what, w.wid, len(extra), sorted(extra)[:10]))
        if mode == "sync":
            allowed = set(lost_ok.get(w.wid, ())) if lost_ok else set()
            miss = sorted(okset - set(got))
            missing += [(w.wid, s) for s in miss]
            check(set(miss) <= allowed, "%s: writer %d: %d sync writes succeeded but never arrived: %s" %
                  (what, w.wid, len(miss), miss[:10]))
        if complete:
            check(got == w.ok(), "%s: writer %d: %d messages written, %d arrived" %
                  (what, w.wid, len(w.ok()), len(got)))
    if complete:
        n_empty = sum(w.n_empty_ok() for w in writers)
        check(empty == n_empty, "%s: %d 0-byte messages sent, %d arrived" % (what, n_empty, empty))
    check(dups == 0, "%s: %d duplicates" % (what, dups))
    check(st["posted"] == st["completed"] + st["failed"], "%s: posted != completed + failed: %s" % (what, st))
    check(attempted == st["posted"] + st["refused"],
          "%s: %d writes attempted, but posted %d + refused %d = %d" %
          (what, attempted, st["posted"], st["refused"], st["posted"] + st["refused"]))
    if mode == "sync":
        check(ok == st["completed"], "%s: %d sync writes succeeded, %d completed" % (what, ok, st["completed"]))
        eio = sum(1 for e in errs if e == errno.EIO)
        check(eio == st["failed"], "%s: %d sync writes got EIO, %d failed" % (what, eio, st["failed"]))
    else:
        # an async write returns once queued (docs/design.md §4.2): it was
        # posted, or refused from the queue after its reply (then the next
        # call on its descriptor got EIO); every other refusal was an error
        later = st["refused"] - len(errs)
        check(later >= 0 and ok == st["posted"] + later,
              "%s: %d async writes succeeded, %d posted + %d refused after queueing" %
              (what, ok, st["posted"], later))
    received = sum(len(v) for v in by.values()) + empty
    check(received <= st["completed"] + st["failed"], "%s: more received than posted" % what)
    row = {
        "what": what, "mode": mode, "writes": attempted, "ok": ok,
        "errors": {errno.errorcode.get(e, str(e)): errs.count(e) for e in sorted(set(errs))},
        "posted": st["posted"], "completed": st["completed"], "failed": st["failed"],
        "refused": st["refused"], "received": received, "duplicates": dups,
        "lost_confirmed": len(missing),
        # confirmed by the HCA, not in the receiver's output (a receiver killed
        # before it wrote them out); async cannot tell which ones
        "completed_not_received": max(0, st["completed"] - received),
        "max_wait_s": round(max((w.max_wait() for w in writers), default=0.0), 3),
        "reconnects": st["reconnects"],
    }
    worst = sorted(((d, e, w.wid, s, t) for w in writers for s, e, t, d in w.results), reverse=True)[:3]
    print("%s: longest waits %s" % (what, ["%.2fs %s (writer %d #%d, from %d ms)" %
                                           (d, errno.errorcode.get(e, e or "ok"), wid, s, (t - d) * 1000)
                                           for d, e, wid, s, t in worst]))
    return row


def report(rows, name):
    """Print the rows; keep them in $LAB_OUT/faults-NAME.json when there is one."""
    for r in rows:
        print("FIGURES " + json.dumps(r, sort_keys=True))
    out = os.environ.get("LAB_OUT")
    if out and os.path.isdir(out):
        with open(os.path.join(out, "faults-%s.json" % name), "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)


def rdma(*args, timeout=30):
    """`rdma ARGS` with a deadline; None when it did not end in time (it may
    hang in the kernel while a process holds the device)."""
    p = subprocess.Popen(["rdma"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        return None, p


def ip(*args):
    r = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    check(r.returncode == 0, "ip %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


class Net:
    """The lab's link between LAB_A and LAB_B, as tools/rdma-lab built it."""

    def __init__(self):
        self.a, self.b = os.environ["LAB_A"], os.environ["LAB_B"]
        self.na, self.nb = os.environ["LAB_NETDEV_A"], os.environ["LAB_NETDEV_B"]
        self.da, self.db = os.environ["LAB_DEV_A"], os.environ["LAB_DEV_B"]
        self.mac = {n: json.loads(ip("-j", "link", "show", n))[0]["address"] for n in (self.na, self.nb)}
        self.before = self.snapshot()

    def snapshot(self):
        tables = {t: ip("route", "show", "table", t) for t in ("7701", "7702")}
        neigh = {n: ip("neigh", "show", "dev", n) for n in (self.na, self.nb)}
        return tables, neigh

    def link_down(self, dev=None):
        ip("link", "set", dev or self.nb, "down")

    def link_up(self, dev=None):
        ip("link", "set", dev or self.nb, "up")
        self.restore()

    def restore(self):
        """Put back what taking a link down removed: its routes in the lab's
        policy tables and its static neighbour (lab_net_up)."""
        ip("route", "replace", self.b, "dev", self.na, "src", self.a, "table", "7701")
        ip("route", "replace", self.a, "dev", self.nb, "src", self.b, "table", "7702")
        ip("neigh", "replace", self.b, "lladdr", self.mac[self.nb], "dev", self.na, "nud", "permanent")
        ip("neigh", "replace", self.a, "lladdr", self.mac[self.na], "dev", self.nb, "nud", "permanent")
        wait_until(lambda: self.port_active(self.da) and self.port_active(self.db), SAFETY_S,
                   "the rxe ports to be ACTIVE again")
        check(self.snapshot() == self.before, "the lab network differs after restoring it:\n%s\n%s" %
              (self.before, self.snapshot()))

    def port_active(self, dev):
        rc, out = rdma("link", "show", dev + "/1", timeout=10)
        return rc == 0 and "state ACTIVE" in out

    def device_present(self, dev):
        rc, out = rdma("link", "show", timeout=10)
        return rc == 0 and (dev + "/") in out


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class RssSampler(threading.Thread):
    def __init__(self, pid, every=0.5):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples = []  # (t, kib)
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                self.samples.append((time.monotonic(), vm_rss_kib(self.pid)))
            except OSError:
                break
            self.done.wait(self.every)

    def stop(self):
        self.done.set()
        self.join(5)


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def threads(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def resources(spool):
    """rpmafs's open descriptors and threads (connection threads are short-lived)."""
    return open_fds(spool.proc.pid), threads(spool.proc.pid)


def check_resources(spool, before, what):
    """After a fault and a reconnection, rpmafs holds what it held before."""
    wait_until(lambda: resources(spool) == before, SAFETY_S,
               "%s: rpmafs to hold what it held before (descriptors, threads) %s, now %s" %
               (what, before, resources(spool)))


def smaps_rss(pid):
    """{(address range, name): Rss in KiB} of every mapping of pid."""
    out, cur = {}, None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            parts = line.split()
            if parts and "-" in parts[0] and not parts[0].endswith(":"):
                cur = (parts[0], parts[5] if len(parts) > 5 else "[anon]")
            elif parts and parts[0] == "Rss:":
                out[cur] = int(parts[1])
    return out


def smaps_growth(before, after, top=5):
    grew = sorted(((after.get(k, 0) - before.get(k, 0), k) for k in set(before) | set(after)), reverse=True)
    return ["%s %s +%d KiB" % (k[1], k[0], d) for d, k in grew[:top] if d > 0]


def huge_kib(pid):
    """AnonHugePages of pid: memory khugepaged or a fault made into 2 MiB pages."""
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    return 0
