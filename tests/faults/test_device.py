#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: the receiver's RDMA device deleted and re-added mid-stream
(`rdma link delete LAB_DEV_B`, `rdma link add LAB_DEV_B type rxe netdev
LAB_NETDEV_B`).

The kernel cannot take an rxe device from a process that has it open
(rxe has no "disassociate"): `rdma link delete` waits, in the kernel, for
every user to let go. rpma-recv must notice that its endpoint is dead
(DEVICE_REMOVAL), write out what has arrived, let go of the device and
exit 1; then the deletion completes. Re-added, a new rpma-recv listens on
the same port and rpmafs reconnects. The receivers were not killed: every
sync write that succeeded must have arrived exactly once.

rpmafs's own device (LAB_DEV_A) is not deleted here: rpmafs keeps the
device it sends from until it is unmounted (see tests/RELIABILITY.md).
With confirm = transport: these figures are the transport's
(test_recv_kill_confirm.py has receiver confirmation).
"""
import sys

from faults import *

T_MS = 1500
AFTER = 200


def body(work):
    _, b = need_lab()
    net = Net()
    rs = Receiver(work, b, name="recv-s").start()
    ra = Receiver(work, b, name="recv-a").start()
    spool = Spool(work, {
        "s": {"address": b, "port": rs.port, "mode": "sync", "send_timeout_ms": T_MS, "confirm": "transport"},
        "a": {"address": b, "port": ra.port, "send_timeout_ms": T_MS, "confirm": "transport"},
    }).mount()
    res0 = resources(spool)
    sizes = (16, 300, 2000, 64)
    stop = threading.Event()
    ws = [Writer(spool, "s", i, 10**7, sizes, pause=0.002, stop=stop) for i in (0, 1)]
    wa = [Writer(spool, "a", i, 10**7, sizes, pause=0.002, stop=stop) for i in (2, 3)]
    for w in ws + wa:
        w.start()
    wait_until(lambda: all(len(w.ok()) > 300 for w in ws + wa), SAFETY_S, "300 messages from every writer")

    t0 = time.monotonic()
    # a safety net: the delete waits in the kernel for whoever holds the
    # device, and the receivers let go as soon as they see it removed
    rc, p = rdma("link", "delete", net.db, timeout=SAFETY_S)
    took = time.monotonic() - t0
    if rc is None:
        # still waiting in the kernel: whoever holds the device must go, or the lab hangs
        alive = [r.name for r in (rs, ra) if r.proc.poll() is None]
        for r in (rs, ra):
            if r.proc.poll() is None:
                r.proc.kill()
        p.wait(60)
        fail("`rdma link delete %s` still waiting after %d s: receivers %s held the device" %
             (net.db, SAFETY_S, alive))
    check(rc == 0, "rdma link delete: %s" % p)
    codes = [r.proc.wait(SAFETY_S) for r in (rs, ra)]
    check(codes == [1, 1], "rpma-recv exit status %s after its device was removed, want 1" % codes)
    for r in (rs, ra):
        check("endpoint listening on" in open(r.log).read(), "%s did not say why it stopped" % r.name)
    # the device is gone once rdma no longer lists it; then it can be added again
    wait_until(lambda: not net.device_present(net.db), SAFETY_S, "%s to be gone" % net.db)
    ret, out = rdma("link", "add", net.db, "type", "rxe", "netdev", net.nb)
    check(ret == 0, "rdma link add: %s" % out)
    wait_until(lambda: net.port_active(net.db), SAFETY_S, "the re-added device to be ACTIVE")
    n_back = {w.wid: len(w.results) for w in ws + wa}
    rs.start()
    ra.start()
    wait_until(lambda: all(len(w.ok()) > AFTER and len(w.results) > n_back[w.wid] + AFTER for w in ws + wa),
               SAFETY_S, "%d more messages from every writer after the device came back" % AFTER)
    stop.set()
    wait_writers(ws + wa)
    spool.settled("s")
    spool.settled("a")
    check_resources(spool, res0, "after the reconnection")
    check([rs.stop(), ra.stop()] == [0, 0], "a receiver did not exit 0")
    rows = [account("receiver's rxe deleted + re-added (sync)", spool, "s", ws, rs.messages(), "sync"),
            account("receiver's rxe deleted + re-added (async)", spool, "a", wa, ra.messages(), "async")]
    for r in rows:
        check(r["reconnects"] >= 1, "%s: no reconnection" % r["what"])
        check(r["max_wait_s"] <= T_MS / 1000 + 3.0, "%s: a writer waited %.2fs" % (r["what"], r["max_wait_s"]))
    check(net.snapshot() == net.before, "the lab network changed")
    print("rdma link delete took %.2fs" % took)
    report(rows, "device")
    check(spool.unmount() == 0, "rpmafs exit status")


def guarded(work):
    """The test, and the device put back whatever happened: later tests need it."""
    try:
        body(work)
    finally:
        db, nb = os.environ.get("LAB_DEV_B"), os.environ.get("LAB_NETDEV_B")
        if db and nb:
            rc, out = rdma("link", "show", timeout=60)
            if rc == 0 and (db + "/") not in out:
                rdma("link", "add", db, "type", "rxe", "netdev", nb, timeout=60)


sys.exit(run("faults-device", guarded))
