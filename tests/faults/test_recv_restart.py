#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: exactly once across restarts of rpma-recv (issue 24,
docs/design.md §8.6).

rpma-recv runs as a service manager runs it: the SAME command line and the
same output each time (`--output FILE --format len`, or `--output DIR
--format dir`). One async, receiver-confirmed spool with send_timeout_ms
T = 20 s, far above a restart (well under 5 s in the lab). A writer sends
BATCHES (40; 20 in CI, FAULTS_FULL=1 for 40) batches of BATCH (500) messages through one descriptor, each
"batch-BB msg-MMM\\n" (unique), each batch ended by an fsync. Meanwhile
rpma-recv is SIGKILLed KILLS (8) times at random points of the stream
(after the n-th write returned, n drawn from a seeded random.Random, the
seed printed; FAULTS_SEED repeats it), started again at once with the same
command, and the next kill waits until the spool has reconnected.

Checked, per variant: every write, every fsync and the close succeeded
(the receiver was back well within T: a restart must not surface); every
message is in the output exactly once (none missing, none twice, none that
no write sent) and in the order written; `resent` > 0 (the unacknowledged
messages were sent again on the next connection); the spool reconnected
after every kill. Reported, not checked: rpma-recv's
`rpma_recv_duplicates_total` (its --metrics file, summed over the runs:
each run's last figures before its kill, at most 100 ms old), and the
spool's `session`, when there is one.

Variants (FAULTS_RESTART_VARIANTS, comma-separated, default all three):
len (--format len, no --fsync), len-fsync, dir-fsync. Three of the four
combinations: both outputs and both --fsync settings, in the lab time of
one faults test.

Before issue 24: rpma-recv opens FILE with O_TRUNC, so each restart wipes
what earlier runs wrote and acknowledged (the confirmed messages are
missing); the directory keeps its files, but a message written out and not
yet acknowledged when rpma-recv died is written again by the next run (a
re-send on a new connection is not recognised: written twice).
"""
import sys

from exactly import *

# CI runs half the stream (20 batches: the same 8 kills, 1,250 writes apart
# on average); FAULTS_FULL=1 the 40
BATCHES = int(os.environ.get("FAULTS_RESTART_BATCHES",
                             "40" if os.environ.get("FAULTS_FULL") == "1" else "20"))
BATCH = int(os.environ.get("FAULTS_RESTART_BATCH", "500"))
KILLS = int(os.environ.get("FAULTS_RESTART_KILLS", "8"))
T_MS = 20000
VARIANTS = {"len": ("len", False), "len-fsync": ("len", True), "dir-fsync": ("dir", True)}
GAP = 300  # writes at least between two kill points, and from the ends


def kill_points(rng, total):
    while True:
        pts = sorted(rng.sample(range(GAP, total - GAP), KILLS))
        if all(b - a >= GAP for a, b in zip(pts, pts[1:])):
            return pts


def one_run(work, b, variant, rng):
    fmt, fsync = VARIANTS[variant]
    r = RecvService(work, b, fmt, fsync, name="recv-" + variant).start()
    spool = Spool(work, {"a": {"address": b, "port": r.port, "send_timeout_ms": T_MS}},
                  name="spool-" + variant).mount()
    st0 = spool.status("a")
    check(st0["confirm"] == "receiver", "not receiver-confirmed: %s" % st0)
    points = kill_points(rng, BATCHES * BATCH)
    print("%s: kills after writes %s" % (variant, points), flush=True)
    dog_ref = []
    w = BatchWriter(spool.file("a"), BATCHES, BATCH,
                    hook=lambda n: dog_ref and setattr(dog_ref[0], "last", time.monotonic()))
    killer_exc, kills, restart_s = [], [], []
    dog = Watchdog(SAFETY_S - 60, lambda: [("rpmafs", spool.proc.pid)] +
                   ([("rpma-recv", r.proc.pid)] if r.proc.poll() is None else []),
                   lambda: [spool.log, r.log])
    dog_ref.append(dog)
    dog.start()

    def killer():
        try:
            for k, p in enumerate(points, 1):
                w.wait_for(p, "write %d (kill %d)" % (p, k))
                if not w.is_alive():
                    break
                t0 = time.monotonic()
                r.kill()
                kills.append(w.n)
                dog.progress("%s: kill %d after write %d" % (variant, k, w.n))
                r.start()  # the same command, the same output
                restart_s.append(time.monotonic() - t0)
                dog.progress("%s: rpma-recv listens again (%.2f s)" % (variant, restart_s[-1]))
                # the next kill once the spool is back: reconnected k times
                wait_until(lambda: (lambda s: s["reconnects"] >= k and s["state"] == "connected")(
                    spool.status("a")), SAFETY_S,
                    lambda: "%s: the spool to reconnect after kill %d: %s" % (variant, k, spool.status("a")))
                dog.progress("%s: reconnected (%d writes)" % (variant, w.n))
        except BaseException as e:  # given to the test's thread
            killer_exc.append(e)

    t0 = time.monotonic()
    kt = threading.Thread(target=killer, daemon=True)
    w.start()
    kt.start()
    w.join_ok()
    kt.join(SAFETY_S)
    check(not kt.is_alive(), "%s: the killer thread is stuck" % variant)
    if killer_exc:
        raise killer_exc[0]
    secs = time.monotonic() - t0
    dog.progress("%s: the writer is done" % variant)
    st = spool.settled("a")
    dog.stop()
    check(r.proc.poll() is None, "%s: rpma-recv died by itself: see %s" % (variant, r.log))
    rc = r.stop()
    msgs = r.messages()
    sent = w.written
    t = tally(sent, w.confirmed_msgs(), msgs)
    row = {"what": "rpma-recv SIGKILL x%d, same command and output: --format %s%s" %
           (len(kills), fmt, " --fsync" if fsync else ""),
           "writes": w.n, "write_ok": len(sent), "batches_confirmed": len(w.confirmed),
           "errors": w.error_summary(), "kills_after_writes": kills,
           "restart_s_max": round(max(restart_s, default=0), 2), "seconds": round(secs, 1),
           "resent": st["resent"], "acked": st["acked"], "failed": st["failed"],
           "refused": st["refused"], "reconnects": st["reconnects"],
           "session": st.get("session", "n/a (no session key)"),
           "recv_duplicates": r.metric_sum("rpma_recv_duplicates_total"),
           "recv_duplicates_per_run": [int(x.get("rpma_recv_duplicates_total", -1)) for x in r.runs],
           "recv_messages_per_run": [int(x.get("rpma_recv_messages_total", -1)) for x in r.runs],
           "recv_exit": rc}
    row.update(t)
    print("FIGURES " + json.dumps(row, sort_keys=True), flush=True)
    spool.unmount()
    return row


def check_row(row):
    v = row["what"]
    check(not row["errors"], "%s: the writer saw errors %s (the receiver was back within "
          "send_timeout_ms %d ms; restarts took at most %.2f s)" % (v, row["errors"], T_MS,
                                                                   row["restart_s_max"]))
    check(row["batches_confirmed"] == BATCHES, "%s: %d of %d batches confirmed" %
          (v, row["batches_confirmed"], BATCHES))
    check(row["missing_confirmed"] == 0,
          "%s: %d of %d confirmed messages missing from the output (%d received, %d distinct; "
          "batches %s; e.g. %s)" % (v, row["missing_confirmed"], row["write_ok"], row["received"],
                                   row["distinct"], row["missing_batches"], row["missing_sample"]))
    check(row["written_twice"] == 0, "%s: %d messages written twice (%d extra copies; e.g. %s)" %
          (v, row["written_twice"], row["extra_copies"], row["twice_sample"]))
    check(row["never_sent"] == 0, "%s: %d messages that no write sent" % (v, row["never_sent"]))
    check(row["first_out_of_order"] is None, "%s: out of order at arrival %s" %
          (v, row["first_out_of_order"]))
    check(row["received"] == row["write_ok"], "%s: %d written, %d received" %
          (v, row["write_ok"], row["received"]))
    check(len(row["kills_after_writes"]) == KILLS and row["reconnects"] >= KILLS,
          "%s: %d kills, %d reconnects" % (v, len(row["kills_after_writes"]), row["reconnects"]))
    check(row["resent"] > 0, "%s: resent 0 over %d kills" % (v, KILLS))
    check(row["failed"] == 0 and row["recv_exit"] == 0, "%s: failed %d, rpma-recv exit %d" %
          (v, row["failed"], row["recv_exit"]))


def body(work):
    _, b = need_lab()
    rng, seed = seeded("faults-recv-restart")
    variants = os.environ.get("FAULTS_RESTART_VARIANTS", "len,len-fsync,dir-fsync").split(",")
    for v in variants:
        check(v in VARIANTS, "FAULTS_RESTART_VARIANTS: no variant %r (%s)" % (v, sorted(VARIANTS)))
    rows = [one_run(work, b, v, rng) for v in variants]
    for r in rows:
        r["seed"] = seed
    save_rows(rows, "recv-restart")
    # every variant ran before the first check: a failure still shows all figures
    check_all([lambda r=r: check_row(r) for r in rows])


sys.exit(run("faults-recv-restart", body))
