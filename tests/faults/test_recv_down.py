#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: the receiver stays down past send_timeout_ms (issue 24,
docs/design.md §8.5, §8.6): the writer is told, and nothing it was told
succeeded is lost.

rpma-recv --format len --output FILE, as a service runs it; one async,
receiver-confirmed spool, send_timeout_ms T = 3 s. A writer sends batches
of BATCH (500) messages "batch-BB msg-MMM\\n" through one descriptor, an
fsync after each. After GOOD (4) batches, at a random point of batch GOOD
(seeded, printed; FAULTS_SEED repeats it), rpma-recv is SIGKILLed and not
started again. The writer goes on: its messages wait for a connection that
does not come; after T the unacknowledged ones fail and its descriptor
reports EIO at its next write, fsync or close (§8.6), and further writes
are refused while the spool has given up (§8.5: ECONNREFUSED, the last
attempt having been rejected by nobody listening). The writer stops after
the batch that saw the error and closes. Then rpma-recv is started again
with the same command on the same output, and AFTER (2) more batches are
sent on a new descriptor.

Checked: the writer saw an error, and it was EIO on the descriptor (write,
fsync or close), or a refusal of §4.2 for a write (ETIMEDOUT,
ECONNREFUSED, EHOSTUNREACH); the first error came no sooner than T after
the kill (the re-sends wait T); the spool counted the unacknowledged
messages `failed` and the writes that waited in vain `refused`; the batches after the restart succeeded; every message
of a confirmed batch (writes and fsync returned 0: the GOOD before the
kill and the AFTER) is in FILE exactly once, in order; a message of the
failed batch is there at most once; nothing that no write sent.

Before issue 24: the restart truncates FILE (O_TRUNC), so the GOOD batches
confirmed before the kill are missing.
"""
import sys

from exactly import *

BATCH = int(os.environ.get("FAULTS_DOWN_BATCH", "500"))
GOOD, AFTER = 4, 2
MAX_BATCHES = 8  # the batch of the kill and what follows until the error
T_MS = 3000
WRITE_REFUSALS = (errno.ETIMEDOUT, errno.ECONNREFUSED, errno.EHOSTUNREACH)


def body(work):
    _, b = need_lab()
    rng, seed = seeded("faults-recv-down")
    r = RecvService(work, b, "len", name="recv-down").start()
    spool = Spool(work, {"a": {"address": b, "port": r.port, "send_timeout_ms": T_MS}},
                  name="spool-down").mount()
    check(spool.status("a")["confirm"] == "receiver", "not receiver-confirmed: %s" % spool.status("a"))
    point = GOOD * BATCH + rng.randrange(1, BATCH)
    killed = []

    def hook(n):
        if n == point:
            r.kill()
            killed.append(time.monotonic())

    w1 = BatchWriter(spool.file("a"), GOOD + MAX_BATCHES, BATCH, hook=hook, stop_after_error=True)
    w1.start()
    w1.join_ok()
    check(killed, "the kill point (write %d) was never reached: %d writes" % (point, w1.n))
    st_down = spool.settled("a")
    first = min((e[4] for e in w1.errors), default=None)
    waited = first - killed[0] if first is not None else None
    print("killed after write %d; first error %s s later: %s" %
          (point, None if waited is None else round(waited, 2), w1.errors[:3]), flush=True)

    r.start()  # the same command, the same output
    wait_until(lambda: spool.status("a")["state"] == "connected", SAFETY_S,
               lambda: "the spool to reconnect: %s" % spool.status("a"))
    w2 = BatchWriter(spool.file("a"), AFTER, BATCH, first=GOOD + MAX_BATCHES)
    w2.start()
    w2.join_ok()
    st = spool.settled("a")
    rc = r.stop()
    msgs = r.messages()
    sent = w1.written + w2.written
    confirmed = w1.confirmed_msgs() + w2.confirmed_msgs()
    t = tally(sent, confirmed, msgs)
    failed_batches = sorted(set(b for b, _ in w1.written) - set(w1.confirmed))
    failed_msgs = set(p for p in w1.written if p[0] in failed_batches)
    counts = {}
    for m in msgs:
        p = parse_msg(m)
        if p in failed_msgs:
            counts[p] = counts.get(p, 0) + 1
    row = {"what": "rpma-recv down past send_timeout_ms %d ms, then restarted on the same output" % T_MS,
           "seed": seed, "killed_after_write": point, "writes": w1.n + w2.n,
           "write_ok": len(sent), "confirmed": len(confirmed),
           "batches_confirmed_before": len(w1.confirmed), "batches_failed": failed_batches,
           "errors": w1.error_summary(), "errors_after": w2.error_summary(),
           "first_error_s_after_kill": None if waited is None else round(waited, 3),
           "failed_batch_msgs_arrived": len(counts), "failed_batch_msgs_twice": sum(
               1 for c in counts.values() if c > 1),
           "failed_while_down": st_down["failed"], "refused_while_down": st_down["refused"],
           "resent": st["resent"], "failed": st["failed"], "refused": st["refused"],
           "reconnects": st["reconnects"], "session": st.get("session", "n/a (no session key)"),
           "recv_duplicates": r.metric_sum("rpma_recv_duplicates_total"), "recv_exit": rc}
    row.update(t)
    print("FIGURES " + json.dumps(row, sort_keys=True), flush=True)
    save_rows([row], "recv-down")
    v = "recv-down"
    others = [e for e in w1.errors if e[3] != errno.EIO and not (e[0] == "write" and e[3] in WRITE_REFUSALS)]
    check_all([
        lambda: check(w1.errors, "%s: the receiver stayed down past send_timeout_ms and the writer "
                      "saw no error" % v),
        # which one the writer meets first depends on whether anything was
        # still unacknowledged at the kill (then EIO on the descriptor) or
        # only its next writes waited (then the refusal of §4.2)
        lambda: check(not others, "%s: want EIO at a write, fsync or close, or a refusal of §4.2 "
                      "for a write, got %s" % (v, row["errors"])),
        lambda: check(waited is not None and waited >= T_MS / 1000 - 0.25,
                      "%s: the first error came %s s after the kill, before send_timeout_ms" % (v, waited)),
        # failed: sent and never acknowledged (nothing may have been
        # outstanding at the kill); refused: waited and never sent
        lambda: check(st_down["failed"] + st_down["refused"] > 0,
                      "%s: nothing counted failed or refused: %s" % (v, st_down)),
        lambda: check(len(w1.confirmed) >= GOOD, "%s: only %d batches confirmed before the kill" %
                      (v, len(w1.confirmed))),
        lambda: check(not w2.errors and len(w2.confirmed) == AFTER,
                      "%s: after the restart: errors %s, %d of %d batches confirmed" %
                      (v, row["errors_after"], len(w2.confirmed), AFTER)),
        lambda: check(row["missing_confirmed"] == 0,
                      "%s: %d of %d confirmed messages missing from the output (%d received; batches %s; "
                      "e.g. %s)" % (v, row["missing_confirmed"], len(confirmed), row["received"],
                                    row["missing_batches"], row["missing_sample"])),
        lambda: check(row["written_twice"] == 0, "%s: %d messages written twice (e.g. %s)" %
                      (v, row["written_twice"], row["twice_sample"])),
        lambda: check(row["never_sent"] == 0, "%s: %d messages no write sent" % (v, row["never_sent"])),
        lambda: check(row["first_out_of_order"] is None, "%s: out of order at %s" %
                      (v, row["first_out_of_order"])),
        lambda: check(rc == 0, "%s: rpma-recv exit %d" % (v, rc)),
    ])
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("faults-recv-down", body))
