#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: exactly once into a mount's inbox across broken sending links
(issue 24, docs/design.md §8.6, §13.4).

Mount B listens (`[rpmafs] listen`, inbox_slots 128: a receiver-confirmed
sender's share is 32, credits 31); mount A's spool `b` sends to it, async,
receiver-confirmed, send_timeout_ms T = 6 s. A reader thread in this
process reads B's /inbox all along (O_NONBLOCK and poll(2)). A writer sends
BATCHES batches of BATCH messages "batch-BBB msg-MMM\\n" through one
descriptor, each batch ended by an fsync. Meanwhile the sending link is
broken CYCLES times at random points of the stream (after the n-th write,
n from a seeded random.Random, the seed printed; FAULTS_SEED repeats it;
the inbox lives as long as its mount, so the link, not the receiver, is
what is restarted). FAULTS_INBOX_BREAK says how: `loss` (the default), a
netem qdisc dropping everything LAB_NETDEV_B sends, removed to heal (a
silent link, as a pulled cable or a dead switch port looks to RDMA, with
the netdev left up); `down`, LAB_NETDEV_B taken down and up again with
the routes and neighbours tools/rdma-lab made put back (faults.Net). In
the lab, Soft-RoCE stops establishing connections after three or four
such flaps (every connect times out, a fresh one's too), so `down` is not
the default. Once A's spool has noticed (its in-flight or acknowledgement
timeout, T: nothing says goodbye on a silent link) the link is healed, and
the next break waits until the spool has reconnected.

Why batches of BATCH = 20, below the credits: the silent link is noticed
only by the timeout of §8.5, and that timeout gives up and refuses what is
*pending* (not yet posted) at once with ETIMEDOUT, so a writer with more
queued than the window would be told of an error whatever the receivers
do. With every message of a batch posted, what was in flight or parked
goes back to pending and is sent again on the next connection, and the
writer's fsync must simply return 0.

Checked: every write, fsync and the close succeeded; every message was
read from /inbox exactly once (none missing, none twice, none that no
write sent), in the order written; `resent` > 0; the spool reconnected
after every break; the lab network is as tools/rdma-lab made it. Reported:
the inbox's `duplicates` and `withdrawn`, A's `session` when there is one.

Before issue 24: the inbox drops a duplicate only within one connection; a
message B's reader had read whose acknowledgement was lost with the link
is sent again on the next connection and read again (written twice).
"""
import select
import sys

import faults

from exactly import *

BATCHES = int(os.environ.get("FAULTS_INBOX_BATCHES", "300"))
BATCH = int(os.environ.get("FAULTS_INBOX_BATCH", "20"))
CYCLES = int(os.environ.get("FAULTS_INBOX_CYCLES", "4"))
T_MS = 6000
GAP = 400
BREAK = os.environ.get("FAULTS_INBOX_BREAK", "loss")


def inbox_status(m):
    st = {}
    with open(os.path.join(m.mnt, "inbox.status")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition(": ")
            st[k] = int(v) if v.isdigit() else v
    return st


class Reader(threading.Thread):
    """Reads the inbox until told to stop; keeps every byte in order."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.data = bytearray()
        self.reads = 0
        self.done = threading.Event()
        self.exc = None

    def run(self):
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            p = select.poll()
            p.register(fd, select.POLLIN)
            while not self.done.is_set():
                # wakes on an arrival; 200 ms only to look at done again
                if not p.poll(200):
                    continue
                while True:
                    try:
                        b = os.read(fd, 65536)
                    except BlockingIOError:
                        break
                    if not b:
                        break
                    self.data += b
                    self.reads += 1
            os.close(fd)
        except BaseException as e:  # given to the test's thread
            self.exc = e

    def stop(self):
        self.done.set()
        self.join(SAFETY_S)
        check(not self.is_alive(), "the inbox reader did not stop")
        if self.exc:
            raise self.exc

    def messages(self):
        lines = bytes(self.data).split(b"\n")
        check(lines[-1] == b"", "the inbox's last bytes are not a whole line: %r" % lines[-1][:40])
        return [x + b"\n" for x in lines[:-1]]


def body(work):
    a, b = need_lab()
    rng, seed = seeded("faults-inbox-link")
    # `ip` and `rdma` run by a process that holds no spool file (exactly.Spawner)
    sp = Spawner(work)

    def ip_via(*args):
        r = sp.call(op="run", argv=["ip"] + list(args))
        check(r["rc"] == 0, "ip %s: %s" % (" ".join(args), r["stderr"].strip()))
        return r["stdout"]

    def rdma_via(*args, timeout=30):
        r = sp.call(op="run", argv=["rdma"] + list(args))
        return r["rc"], r["stdout"] + r["stderr"]

    def tc_via(*args):
        r = sp.call(op="run", argv=["tc"] + list(args))
        check(r["rc"] == 0, "tc %s: %s" % (" ".join(args), r["stderr"].strip()))

    faults.ip, faults.rdma = ip_via, rdma_via
    net = Net()
    check(BREAK in ("loss", "down"), "FAULTS_INBOX_BREAK: loss or down, not %r" % BREAK)
    if BREAK == "loss":
        # tc does not load the qdisc's module by itself here
        r = sp.call(op="run", argv=["modprobe", "sch_netem"])
        check(r["rc"] == 0, "modprobe sch_netem: %s" % r["stderr"].strip())

    def link_break():
        if BREAK == "down":
            net.link_down()
        else:
            tc_via("qdisc", "add", "dev", net.nb, "root", "netem", "loss", "100%")

    def link_heal():
        if BREAK == "down":
            net.link_up()
        else:
            tc_via("qdisc", "del", "dev", net.nb, "root")
    pb = next_port()
    mb = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pb), "inbox_slots": 128}},
               name="inbox").mount(wait_connected=False)
    check(inbox_status(mb)["state"] == "listening", "inbox: %s" % inbox_status(mb))
    reader = Reader(os.path.join(mb.mnt, "inbox"))
    reader.start()
    ma = Spool(work, {"b": {"address": b, "port": pb, "send_timeout_ms": T_MS}}, name="sender").mount()
    check(ma.status("b")["confirm"] == "receiver", "not receiver-confirmed: %s" % ma.status("b"))
    total = BATCHES * BATCH
    while True:
        points = sorted(rng.sample(range(GAP, total - GAP), CYCLES))
        if all(y - x >= GAP for x, y in zip(points, points[1:])):
            break
    print("breaks after writes %s" % points, flush=True)
    w = BatchWriter(ma.file("b"), BATCHES, BATCH)
    breaks, detect_s, back_s, exc = [], [], [], []

    def breaker():
        try:
            for k, p in enumerate(points, 1):
                w.wait_for(p, "write %d (break %d)" % (p, k))
                if not w.is_alive():
                    break
                t0 = time.monotonic()
                link_break()
                try:
                    breaks.append(w.n)
                    # the event: the spool saw the link go (§8.5), not a guessed outage
                    wait_until(lambda: ma.status("b")["state"] != "connected", SAFETY_S,
                               lambda: "the spool to notice break %d: %s" % (k, ma.status("b")))
                    detect_s.append(time.monotonic() - t0)
                finally:
                    link_heal()
                t1 = time.monotonic()
                wait_until(lambda: (lambda s: s["reconnects"] >= k and s["state"] == "connected")(
                    ma.status("b")), SAFETY_S,
                    lambda: "the spool to reconnect after break %d: %s" % (k, ma.status("b")))
                back_s.append(time.monotonic() - t1)
        except BaseException as e:  # given to the test's thread
            exc.append(e)

    t0 = time.monotonic()
    bt = threading.Thread(target=breaker, daemon=True)
    w.start()
    bt.start()
    w.join_ok()
    bt.join(SAFETY_S)
    check(not bt.is_alive(), "the link breaker is stuck")
    if exc:
        raise exc[0]
    secs = time.monotonic() - t0
    # everything acknowledged means everything read, the copies of re-sends too
    st = wait_until(lambda: (lambda s: s if s["in_flight"] == 0 and s["pending"] == 0 and
                             s["unacked"] == 0 else None)(ma.status("b")), SAFETY_S,
                    lambda: "the spool to settle: %s" % ma.status("b"))
    wait_until(lambda: inbox_status(mb)["waiting"] == 0, SAFETY_S,
               lambda: "the inbox to be read empty: %s" % inbox_status(mb))
    ib = inbox_status(mb)
    wait_until(lambda: reader.data.count(b"\n") >= ib["read"], SAFETY_S,
               lambda: "the reader to hold the %d messages read (%d)" % (ib["read"], reader.data.count(b"\n")))
    reader.stop()
    msgs = reader.messages()
    t = tally(w.written, w.confirmed_msgs(), msgs)
    row = {"what": "sending link broken (%s) x%d into an inbox (batches of %d, T %d ms)" %
           (BREAK, len(breaks), BATCH, T_MS), "seed": seed,
           "writes": w.n, "write_ok": len(w.written), "batches_confirmed": len(w.confirmed),
           "errors": w.error_summary(), "breaks_after_writes": breaks,
           "detect_s": [round(x, 2) for x in detect_s], "reconnect_s": [round(x, 2) for x in back_s],
           "seconds": round(secs, 1), "resent": st["resent"], "acked": st["acked"],
           "failed": st["failed"], "refused": st["refused"], "reconnects": st["reconnects"],
           "session": st.get("session", "n/a (no session key)"), "inbox_received": ib["received"],
           "inbox_read": ib["read"], "inbox_duplicates": ib.get("duplicates"),
           "inbox_withdrawn": ib.get("withdrawn"), "inbox_connections": ib.get("connections"),
           "inbox_accepted": ib.get("accepted"), "inbox_failed": ib.get("failed"), "reads": reader.reads}
    row.update(t)
    print("FIGURES " + json.dumps(row, sort_keys=True), flush=True)
    save_rows([row], "inbox-link")
    v = row["what"]
    check_all([
        lambda: check(not row["errors"], "%s: the writer saw errors %s" % (v, row["errors"])),
        lambda: check(row["missing_confirmed"] == 0,
                      "%s: %d of %d confirmed messages never read (batches %s; e.g. %s)" %
                      (v, row["missing_confirmed"], row["write_ok"], row["missing_batches"],
                       row["missing_sample"])),
        lambda: check(row["written_twice"] == 0, "%s: %d messages read twice (%d extra copies; e.g. %s); "
                      "inbox duplicates %s" % (v, row["written_twice"], row["extra_copies"],
                                               row["twice_sample"], row["inbox_duplicates"])),
        lambda: check(row["never_sent"] == 0, "%s: %d messages no write sent" % (v, row["never_sent"])),
        lambda: check(row["first_out_of_order"] is None, "%s: out of order at %s" %
                      (v, row["first_out_of_order"])),
        lambda: check(len(breaks) == CYCLES and row["reconnects"] >= CYCLES,
                      "%s: %d breaks, %d reconnects" % (v, len(breaks), row["reconnects"])),
        lambda: check(row["resent"] > 0, "%s: resent 0 over %d breaks" % (v, CYCLES)),
        lambda: check(row["failed"] == 0, "%s: failed %d" % (v, row["failed"])),
    ])
    check(ma.unmount() == 0, "unmount of the sender")
    check(mb.unmount() == 0, "unmount of the inbox")


sys.exit(run("faults-inbox-link", body))
