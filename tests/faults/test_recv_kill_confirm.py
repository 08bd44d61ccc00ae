#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: receiver confirmation (docs/design.md §8.6) against a receiver
SIGKILLed and restarted under load.

One async spool, receiver-confirmed (the default against rpma-recv). A writer
sends batches of BATCH messages through one descriptor, each batch ended by
an fsync; KILLS times, in the middle of a batch, the writer fsyncs, rpma-recv
is stopped (SIGSTOP, so that the STOPPED messages written next are surely not
acknowledged: they are completed, parked, or in flight), SIGKILLed and
restarted, and the writer goes on once the spool is connected again. The
fsync before the stop matters: a receiver that holds messages back makes
async writes wait once the pool is down to its reserve (docs/design.md
§4.2), and rpma-recv --fsync lags the writer by a pool's worth, so without
it the STOPPED writes could wait for a receiver that never runs again (the
back-pressure itself is fs-inbox's). After the fsync the STOPPED messages fit
in any pool (of 16 slots, 8 stay free, above the reserve of 4 workers) and
in the receiver's credits (31). A
message is confirmed when its write returned 0 and the fsync that ended its
batch returned 0. Checked: the unacknowledged messages were sent again
(resent >= KILLS x STOPPED), not one confirmed message is missing from the
receivers' outputs (over every run), nothing arrives that no write sent,
and, the receiver being back well within send_timeout_ms, nothing failed:
every write and fsync succeeded. Duplicates (a receiver killed between
writing a record and acknowledging it) are counted, not refused. Run
twice: --format len, and --format dir with --fsync.

The writer's process starts each new receiver while its own messages wait
for it: the child closes the inherited spool descriptor (O_CLOEXEC) at
exec, and that close must not wait for them (it did, until the re-sends
failed at send_timeout_ms: tests/RELIABILITY.md).
"""
import struct
import sys

from faults import *

BATCH = int(os.environ.get("FAULTS_CONFIRM_BATCH", "500"))
BATCHES = int(os.environ.get("FAULTS_CONFIRM_BATCHES", "16"))
KILLS = 3
STOPPED = 8  # written while the receiver is stopped: never acknowledged by it
T_MS = int(os.environ.get("FAULTS_CONFIRM_T_MS", "20000"))  # the back-off may pass 5 s under TCG


class Recv:
    """rpma-recv on a fixed port: len output per run, or one dir with --fsync."""

    def __init__(self, work, addr, fmt):
        self.work, self.addr, self.fmt = work, addr, fmt
        self.port = next_port()
        self.log = work.path("recv-%s.log" % fmt)
        self.dir = work.path("out-dir")
        self.outputs, self.proc = [], None

    def start(self):
        if self.fmt == "dir":
            args = ["--format", "dir", "--output", self.dir, "--fsync"]
        else:
            out = self.work.path("out-%d.len" % len(self.outputs))
            self.outputs.append(out)
            args = ["--format", "len", "--output", out]
        logf = open(self.log, "a")
        before = open(self.log).read().count("listening on")
        self.proc = subprocess.Popen([os.environ["RPMA_RECV"], "--listen",
                                      "%s:%d" % (self.addr, self.port)] + args,
                                     stdout=subprocess.DEVNULL, stderr=logf)
        self.work.procs.append(self.proc)
        wait_until(lambda: open(self.log).read().count("listening on") > before or
                   self.proc.poll() is not None, SAFETY_S, "rpma-recv to listen")
        check(self.proc.poll() is None, "rpma-recv exited: see %s" % self.log)

    def messages(self):
        msgs = []
        if self.fmt == "dir":
            for name in sorted(n for n in os.listdir(self.dir) if not n.startswith(".")):
                msgs.append(open(os.path.join(self.dir, name), "rb").read())
            return msgs
        for out in self.outputs:
            data, i = open(out, "rb").read() if os.path.exists(out) else b"", 0
            while i + 4 <= len(data):
                (n,) = struct.unpack_from("<I", data, i)
                if i + 4 + n > len(data):
                    break  # a record cut by the kill: never acknowledged
                msgs.append(data[i + 4:i + 4 + n])
                i += 4 + n
        return msgs


def proc_state(pid):
    """The state letter of /proc/PID/stat (T: stopped)."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rpartition(")")[2].split()[0]


def one_run(work, b, fmt):
    r = Recv(work, b, fmt)
    r.start()
    spool = Spool(work, {"a": {"address": b, "port": r.port, "send_timeout_ms": T_MS}},
                  name="spool-" + fmt).mount()
    check(spool.status("a")["confirm"] == "receiver", "not receiver-confirmed: %s" % spool.status("a"))
    fd = os.open(spool.file("a"), os.O_WRONLY)
    written, confirmed, reported, kills, seq = [], set(), 0, 0, 0
    every = max(1, BATCHES // (KILLS + 1))
    def kill_and_restart():
        r.proc.kill()
        r.proc.wait()
        spool.wait_state("a", "reconnecting")
        r.start()
        spool.wait_state("a", "connected")

    def fsync_ok():
        """fsync(fd): False (counted as reported) when it said EIO."""
        nonlocal reported
        try:
            os.fsync(fd)
            return True
        except OSError as e:
            check(e.errno == errno.EIO, "fsync: %s" % e)
            reported += 1
            return False

    for batch in range(BATCHES):
        ok_batch, clean = [], True
        kill_here = kills < KILLS and batch % every == every // 2
        for i in range(BATCH):
            if kill_here and i == BATCH // 2 - STOPPED:
                clean = fsync_ok() and clean  # nothing held back when the receiver stops
                r.proc.send_signal(signal.SIGSTOP)
                wait_until(lambda: proc_state(r.proc.pid) == "T", SAFETY_S, "rpma-recv to stop")
            if kill_here and i == BATCH // 2:
                # SIGKILL in the middle of a batch, STOPPED messages not
                # acknowledged; the writer goes on once the spool is back
                kill_and_restart()
                kills += 1
            try:
                os.write(fd, message(1, seq, 64))
                ok_batch.append(seq)
            except OSError as e:
                # EIO: an earlier message failed; not connected: the
                # link's cause (docs/design.md §4.2)
                check(e.errno in (errno.EIO, errno.ENOTCONN, errno.ETIMEDOUT,
                                  errno.ECONNREFUSED, errno.EHOSTUNREACH), "write: %s" % e)
                clean = False
                reported += 1
            seq += 1
        written += ok_batch
        clean = fsync_ok() and clean
        if clean:
            confirmed.update(ok_batch)
    os.close(fd)
    st = spool.settled("a")
    check(r.proc.poll() is None, "rpma-recv died")
    r.proc.terminate()
    r.proc.wait()
    by, _ = received_by_writer(r.messages())
    got = by.get(1, [])
    gotset = set(got)
    missing = sorted(confirmed - gotset)
    extra = gotset - set(written)
    dups = len(got) - len(gotset)
    check(not extra, "%s: %d messages arrived that no write sent" % (fmt, len(extra)))
    check(not missing, "%s: %d confirmed messages missing: %s" % (fmt, len(missing), missing[:10]))
    lost_unreported = sorted(set(written) - gotset)
    check(not lost_unreported or reported > 0,
          "%s: %d written messages never arrived and no error said so" % (fmt, len(lost_unreported)))
    check(kills == KILLS and st["reconnects"] >= KILLS, "%s: %d kills, status %s" % (fmt, kills, st))
    check(st["resent"] >= KILLS * STOPPED,
          "%s: %d kills with %d messages unacknowledged each, but resent %d: %s" %
          (fmt, KILLS, STOPPED, st["resent"], st))
    check(reported == 0 and st["failed"] == 0,
          "%s: the receiver came back within send_timeout_ms, yet %d errors reported, %d failed: %s" %
          (fmt, reported, st["failed"], st))
    check(st["bad_acks"] == 0, "%s: bad acks: %s" % (fmt, st))
    spool.unmount()
    return {"what": "receiver SIGKILL x%d, confirm = receiver, %s" % (KILLS, fmt
            if fmt == "len" else "dir --fsync"), "writes": seq, "written_ok": len(written),
            "confirmed": len(confirmed), "missing_confirmed": len(missing), "received": len(got),
            "duplicates": dups, "errors_reported": reported, "resent": st["resent"],
            "acked": st["acked"], "failed": st["failed"], "reconnects": st["reconnects"]}


def body(work):
    _, b = need_lab()
    rows = [one_run(work, b, "len"), one_run(work, b, "dir")]
    report(rows, "recv-kill-confirm")


sys.exit(run("faults-recv-kill-confirm", body))
