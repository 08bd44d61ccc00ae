# SPDX-License-Identifier: BSD-3-Clause
"""exactly -- what the exactly-once fault tests share (issue 24,
docs/design.md §8.6): faults-recv-restart, faults-inbox-link,
faults-recv-down.

  RecvService  rpma-recv run as a service manager runs it: one command and
               one output, started again the same way after each death; its
               --metrics file is read before every kill, so that each run's
               `rpma_recv_duplicates_total` is kept;
  BatchWriter  a thread that writes batches of numbered messages through
               one descriptor, each batch ended by an fsync, and records
               every error with where it came (write, fsync, close);
  tally()      what arrived against what was written: missing, written
               twice, never sent, out of order;
  seeded()     a random.Random whose seed is printed (FAULTS_SEED repeats it).

A message is b"batch-BB msg-MMM\\n": unique, and it names its place in the
stream.
"""
import random
import sys
import re
import struct
import threading

from faults import *  # noqa: F401,F403


def msg(batch, i):
    return b"batch-%02d msg-%03d\n" % (batch, i)


MSG_RE = re.compile(rb"batch-(\d+) msg-(\d+)\n\Z")


def parse_msg(m):
    """(batch, i) of a message, or None for anything no writer sent."""
    g = MSG_RE.match(m)
    return (int(g.group(1)), int(g.group(2))) if g else None


def seeded(name):
    seed = os.environ.get("FAULTS_SEED")
    seed = int(seed) if seed else int.from_bytes(os.urandom(4), "little")
    print("%s: seed %d (FAULTS_SEED=%d repeats the same points)" % (name, seed, seed), flush=True)
    return random.Random(seed), seed


def read_metrics(path):
    """{name: value} of a Prometheus text file; {} when there is none."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                name, _, value = line.rpartition(" ")
                try:
                    out[name.strip()] = float(value)
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return out


def read_len(path):
    """The records of a --format len file, strictly: a record cut short
    anywhere is a failure (a restarted rpma-recv cuts a torn last record
    back before it goes on, issue 24; today it truncates the file)."""
    data = open(path, "rb").read() if os.path.exists(path) else b""
    msgs, i = [], 0
    while i < len(data):
        check(i + 4 <= len(data), "%s: a torn length prefix at byte %d of %d" % (path, i, len(data)))
        (n,) = struct.unpack_from("<I", data, i)
        check(i + 4 + n <= len(data), "%s: a torn record at byte %d of %d (length %d)" %
              (path, i, len(data), n))
        msgs.append(data[i + 4:i + 4 + n])
        i += 4 + n
    return msgs


DIR_NAME = re.compile(r"\d{20}\Z")


def read_dir(path):
    """The messages of a --format dir directory, in name (arrival) order;
    only the 20-digit names are messages (not .NUMBER.tmp, not a state
    file)."""
    names = sorted(n for n in os.listdir(path) if DIR_NAME.match(n)) if os.path.isdir(path) else []
    msgs = []
    for n in names:
        with open(os.path.join(path, n), "rb") as f:
            msgs.append(f.read())
    return msgs


def proc_threads(pid):
    """One line per thread of pid: name, state, wchan, system call."""
    out = []
    try:
        for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
            base = "/proc/%d/task/%s/" % (pid, tid)
            parts = []
            for f in ("comm", "wchan", "syscall"):
                try:
                    parts.append(open(base + f).read().strip().split(" ")[0])
                except OSError:
                    parts.append("?")
            try:
                state = open(base + "stat").read().rpartition(")")[2].split()[0]
            except OSError:
                state = "?"
            out.append("  %s %s %s wchan=%s syscall=%s" % (tid, parts[0], state, parts[1], parts[2]))
    except OSError as e:
        out.append("  %s" % e)
    return out


class Watchdog(threading.Thread):
    """When no progress() came for seconds, print where every thread of
    this process and of pids() waits, the tails of logs(), and exit 1 at
    once: a FUSE daemon that stopped answering leaves this process's
    threads in requests that the cleanup (a stat of the mount point)
    would only join, in D state, until meson's timeout, with nothing said."""

    def __init__(self, seconds, pids, logs):
        super().__init__(daemon=True)
        self.seconds, self.pids, self.logs = seconds, pids, logs
        self.last = time.monotonic()
        self.what = "start"
        self.done = threading.Event()

    def progress(self, what):
        self.last, self.what = time.monotonic(), what
        print("progress: %s" % what, flush=True)

    def run(self):
        while not self.done.wait(1.0):
            if time.monotonic() - self.last > self.seconds:
                lines = ["WATCHDOG: no progress for %ds since: %s" % (self.seconds, self.what),
                         "this process (%d):" % os.getpid()] + proc_threads(os.getpid())
                for name, pid in self.pids():
                    lines += ["%s (%d):" % (name, pid)] + proc_threads(pid)
                for path in self.logs():
                    try:
                        lines += ["---- %s" % path] + open(path, errors="replace").read()[-3000:].splitlines()
                    except OSError:
                        pass
                sys.stderr.write("\n".join(lines) + "\n")
                sys.stderr.flush()
                sys.stdout.flush()
                os._exit(1)

    def stop(self):
        self.done.set()


class RecvService:
    """rpma-recv on one port with one command line, whatever its runs."""

    def __init__(self, work, addr, fmt, fsync=False, name="svc", extra=()):
        self.work, self.fmt, self.name = work, fmt, name
        self.spawner = Spawner(work)  # before any spool file is opened
        self.port = next_port()
        self.log = work.path(name + ".log")
        self.prom = work.path(name + ".prom")
        self.out = work.path(name + ("-dir" if fmt == "dir" else ".len"))
        self.cmd = [os.environ["RPMA_RECV"], "--listen", "%s:%d" % (addr, self.port),
                    "--format", fmt, "--output", self.out, "--metrics", self.prom,
                    "--metrics-interval-ms", "100"] + (["--fsync"] if fsync else []) + list(extra)
        self.proc = None
        self.runs = []  # per run: its metrics as last read (before its kill, or at its exit)
        print("%s: %s" % (name, " ".join(self.cmd[1:])), flush=True)

    def listening(self):
        with open(self.log, errors="replace") as f:
            return f.read().count("rpma-recv: listening on ")

    def start(self):
        before = self.listening() if os.path.exists(self.log) else 0
        open(self.log, "a").close()
        self.proc = Spawned(self.spawner, self.cmd, self.log)
        # the event: its log line once the endpoint listens
        wait_until(lambda: self.listening() > before or self.proc.poll() is not None, SAFETY_S,
                   "%s to listen" % self.name)
        check(self.proc.poll() is None, "%s exited %s at start: see %s" %
              (self.name, self.proc.returncode, self.log))
        return self

    def kill(self):
        """SIGKILL, after keeping the run's last metrics (at most 100 ms old)."""
        self.runs.append(read_metrics(self.prom))
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(SAFETY_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("%s did not exit on SIGTERM" % self.name)
        self.runs.append(read_metrics(self.prom))  # written once more at exit
        return rc

    def metric_sum(self, name):
        """The sum over the runs, or None when no run offered the name."""
        vals = [r[name] for r in self.runs if name in r]
        return int(sum(vals)) if vals else None

    def messages(self):
        return read_dir(self.out) if self.fmt == "dir" else read_len(self.out)


class BatchWriter(threading.Thread):
    """batches x size messages through one descriptor of path, an fsync
    after each batch, a close at the end. A batch is confirmed when every
    write of it and its fsync returned 0. hook(n), if given, is called
    after the n-th write (the writer's thread)."""

    def __init__(self, path, batches, size, first=0, hook=None, stop_after_error=False):
        super().__init__(daemon=True)
        self.path, self.batches, self.size, self.first = path, batches, size, first
        self.hook, self.stop_after_error = hook, stop_after_error
        self.n = 0
        self.cond = threading.Condition()
        self.written = []    # (batch, i) whose write returned 0
        self.confirmed = []  # batches whose writes and fsync returned 0
        self.errors = []     # (op, batch, i or None, errno, monotonic time)
        self.exc = None
        self.t_end = None

    def error(self, op, batch, i, e):
        self.errors.append((op, batch, i, e.errno, time.monotonic()))

    def run(self):
        try:
            self._run()
        except BaseException as e:  # given to the test's thread by join_ok
            self.exc = e
        self.t_end = time.monotonic()

    def _run(self):
        fd = os.open(self.path, os.O_WRONLY)
        for b in range(self.first, self.first + self.batches):
            clean = True
            for i in range(self.size):
                try:
                    os.write(fd, msg(b, i))
                    self.written.append((b, i))
                except OSError as e:
                    self.error("write", b, i, e)
                    clean = False
                with self.cond:
                    self.n += 1
                    self.cond.notify_all()
                if self.hook:
                    self.hook(self.n)
            try:
                os.fsync(fd)
            except OSError as e:
                self.error("fsync", b, None, e)
                clean = False
            if clean:
                self.confirmed.append(b)
            if self.errors and self.stop_after_error:
                break
        try:
            os.close(fd)
        except OSError as e:
            self.error("close", None, None, e)

    def wait_for(self, n, what):
        """Until the n-th write has returned (the writer's own event)."""
        with self.cond:
            ok = self.cond.wait_for(lambda: self.n >= n or not self.is_alive(), SAFETY_S)
        check(ok, "timed out after %ss waiting for %s (writes so far %d)" % (SAFETY_S, what, self.n))

    def join_ok(self):
        self.join(SAFETY_S)
        check(not self.is_alive(), "the writer still blocked after %ss (%d writes)" % (SAFETY_S, self.n))
        if self.exc:
            raise self.exc

    def confirmed_msgs(self):
        cb = set(self.confirmed)
        return [(b, i) for b, i in self.written if b in cb]

    def error_summary(self):
        """{"op errno": count}"""
        out = {}
        for op, _, _, e, _ in self.errors:
            k = "%s %s" % (op, errno.errorcode.get(e, e))
            out[k] = out.get(k, 0) + 1
        return out


def save_rows(rows, name):
    """Keep the rows (printed as FIGURES lines as they were made) in
    $LAB_OUT/faults-NAME.json when there is one."""
    out = os.environ.get("LAB_OUT")
    if out and os.path.isdir(out):
        with open(os.path.join(out, "faults-%s.json" % name), "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)


def check_all(checks):
    """Run every check (a function of no arguments) and fail once with all
    their messages: a run's figures are all printed before its first failure."""
    fails = []
    for c in checks:
        try:
            c()
        except AssertionError as e:
            fails.append(str(e))
    check(not fails, "\n".join(fails))


def tally(sent, confirmed, msgs):
    """What arrived (msgs) against what was written (sent: (batch, i) in
    write order) and confirmed (a subset). Returns the figures."""
    got = [parse_msg(m) for m in msgs]
    unknown = [m for m, p in zip(msgs, got) if p is None]
    got = [p for p in got if p is not None]
    counts = {}
    for p in got:
        counts[p] = counts.get(p, 0) + 1
    sentset = set(sent)
    missing = [p for p in confirmed if p not in counts]
    twice = sorted(p for p, c in counts.items() if c > 1)
    never_sent = sorted(p for p in counts if p not in sentset)
    # order: the first copy of each message, as the writer wrote them
    pos = {p: k for k, p in enumerate(sent)}
    firsts, seen = [], set()
    for p in got:
        if p not in seen and p in pos:
            seen.add(p)
            firsts.append(pos[p])
    disorder = next((k for k in range(1, len(firsts)) if firsts[k] < firsts[k - 1]), None)
    return {
        "received": len(msgs), "distinct": len(counts), "missing_confirmed": len(missing),
        "written_twice": len(twice), "extra_copies": sum(c - 1 for c in counts.values()),
        "never_sent": len(never_sent) + len(unknown), "first_out_of_order": disorder,
        "missing_sample": ["%d:%d" % p for p in missing[:8]],
        "twice_sample": ["%d:%d" % p for p in twice[:8]],
        "missing_batches": sorted(set(b for b, _ in missing))[:40],
    }


# The spawner: a process started before the test opens any spool file,
# which starts the test's other processes for it. A child forked by the
# writer's own process closes its copy of the spool descriptor (at exec,
# or Python's close_fds), and the kernel's FUSE flush of that close takes
# the file's inode lock, which a write waiting for the connection holds:
# the child (the very rpma-recv that write waits for) sat in D state. A
# service manager is another process too.
SPAWNER = r'''
import json, os, signal, subprocess, sys
procs = {}
for line in sys.stdin:
    req = json.loads(line)
    op, out = req["op"], {}
    if op == "start":
        with open(req["log"], "a") as log:
            p = subprocess.Popen(req["argv"], stdout=subprocess.DEVNULL, stderr=log)
        procs[p.pid] = p
        out = {"pid": p.pid}
    elif op == "signal":
        p = procs[req["pid"]]
        if p.poll() is None:
            p.send_signal(req["sig"])
        out = {}
    elif op == "wait":
        try:
            out = {"rc": procs[req["pid"]].wait(req["timeout"])}
        except subprocess.TimeoutExpired:
            out = {"rc": None}
    elif op == "poll":
        out = {"rc": procs[req["pid"]].poll()}
    elif op == "run":
        r = subprocess.run(req["argv"], capture_output=True, text=True)
        out = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
for p in procs.values():
    if p.poll() is None:
        p.kill()
        p.wait()
'''


class Spawner:
    _lock = threading.Lock()

    def __init__(self, work):
        self.proc = subprocess.Popen([sys.executable, "-c", SPAWNER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        work.procs.append(self.proc)

    def call(self, **req):
        with self._lock:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        check(line, "the spawner is gone")
        return json.loads(line)


class Spawned:
    """What RecvService needs of a Popen, for a process of the spawner."""

    def __init__(self, spawner, argv, log):
        self.sp = spawner
        self.pid = spawner.call(op="start", argv=argv, log=log)["pid"]
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            self.returncode = self.sp.call(op="poll", pid=self.pid)["rc"]
        return self.returncode

    def send_signal(self, sig):
        self.sp.call(op="signal", pid=self.pid, sig=int(sig))

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout=None):
        rc = self.sp.call(op="wait", pid=self.pid, timeout=timeout)["rc"]
        if rc is None:
            raise subprocess.TimeoutExpired("rpma-recv", timeout)
        self.returncode = rc
        return rc
