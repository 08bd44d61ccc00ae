#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: receiver confirmation (docs/design.md §8.6) against a receiver
SIGKILLed and restarted under load.

One async spool, receiver-confirmed (the default against rpma-recv). A writer
sends batches of BATCH messages through one descriptor, each batch ended by
an fsync; meanwhile rpma-recv is SIGKILLed and restarted KILLS times. A
message is confirmed when its write returned 0 and the fsync that ended its
batch returned 0. Checked: not one confirmed message is missing from the
receivers' outputs (over every run), nothing arrives that no write sent,
every message whose write returned 0 arrived or was reported failed
(EIO at a later write or fsync, never silently). Duplicates (a receiver
killed between writing a record and acknowledging it, the message sent
again) are counted, not refused. Run twice: --format len, and --format dir
with --fsync.
"""
import struct
import sys

from faults import *

BATCH = int(os.environ.get("FAULTS_CONFIRM_BATCH", "500"))
BATCHES = int(os.environ.get("FAULTS_CONFIRM_BATCHES", "24"))
KILLS = 3
T_MS = 5000


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


def one_run(work, b, fmt):
    r = Recv(work, b, fmt)
    r.start()
    spool = Spool(work, {"a": {"address": b, "port": r.port, "send_timeout_ms": T_MS}},
                  name="spool-" + fmt).mount()
    check(spool.status("a")["confirm"] == "receiver", "not receiver-confirmed: %s" % spool.status("a"))
    fd = os.open(spool.file("a"), os.O_WRONLY)
    written, confirmed, reported, kills, seq = [], set(), 0, 0, 0
    every = max(1, BATCHES // (KILLS + 1))
    for batch in range(BATCHES):
        ok_batch, clean = [], True
        for _ in range(BATCH):
            try:
                os.write(fd, message(1, seq, 64))
                ok_batch.append(seq)
            except OSError as e:
                check(e.errno in (errno.EIO, errno.ENOTCONN), "write: %s" % e)
                clean = False
                reported += 1
            seq += 1
        written += ok_batch
        try:
            os.fsync(fd)
        except OSError as e:
            check(e.errno == errno.EIO, "fsync: %s" % e)
            clean = False
            reported += 1
        if clean:
            confirmed.update(ok_batch)
        if kills < KILLS and batch % every == every // 2:
            # SIGKILL while the next batch is on its way
            r.proc.kill()
            r.proc.wait()
            kills += 1
            spool.wait_state("a", "reconnecting")
            r.start()
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
