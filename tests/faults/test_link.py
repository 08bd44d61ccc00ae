#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: the veth link down for 5 s, then up (`ip link set LAB_NETDEV_B down`).

Nobody says goodbye: packets just vanish, and rxe retries a send forever.
rpmafs must notice by its in-flight timeout (send_timeout_ms, at least 1 s),
fail what was in flight (EIO for sync writes, counted failed), fail writes
that wait longer than send_timeout_ms (ENOTCONN), and reconnect once the
link is back (a third spool has send_timeout_ms = 0: its in-flight timeout
is the minimum, 1 s). The receivers are not killed: every sync write that
succeeded must have arrived exactly once. The lab network (routes in the
policy tables, static neighbours) is put back and compared afterwards.
With confirm = transport: these figures are the transport's
(test_recv_kill_confirm.py has receiver confirmation).
"""
import sys

from faults import *

T_MS = 1500
DOWN_S = 5.0
AFTER = 300  # successful writes per writer after the link is back


def body(work):
    _, b = need_lab()
    net = Net()
    rs = Receiver(work, b, name="recv-s").start()
    ra = Receiver(work, b, name="recv-a").start()
    rz = Receiver(work, b, name="recv-z").start()
    spool = Spool(work, {
        "s": {"address": b, "port": rs.port, "mode": "sync", "send_timeout_ms": T_MS, "confirm": "transport"},
        "a": {"address": b, "port": ra.port, "send_timeout_ms": T_MS, "confirm": "transport"},
        # no wait for a connection at all; the in-flight timeout is then its minimum, 1 s
        "z": {"address": b, "port": rz.port, "send_timeout_ms": 0, "confirm": "transport"},
    }).mount()
    res0 = resources(spool)
    sizes = (16, 300, 2000, 64)
    # paced, so that the stream is still going when the link comes back
    stop = threading.Event()
    ws = [Writer(spool, "s", i, 10**7, sizes, pause=0.002, stop=stop) for i in (0, 1)]
    wa = [Writer(spool, "a", i, 10**7, sizes, pause=0.002, stop=stop) for i in (2, 3)]
    wz = [Writer(spool, "z", 4, 10**7, sizes, pause=0.002, stop=stop)]
    for w in ws + wa + wz:
        w.start()
    wait_until(lambda: all(len(w.ok()) > 300 for w in ws + wa + wz), SAFETY_S, "300 messages from every writer")
    down_at = time.monotonic()
    try:
        net.link_down()
        # down until every spool has noticed (its in-flight timeout), and at
        # least DOWN_S: the event, not a guess at how long noticing takes
        wait_until(lambda: all(spool.status(p)["state"] != "connected" for p in ("s", "a", "z")),
                   SAFETY_S, "every spool to notice the link is down")
        states = tuple(spool.status(p)["state"] for p in ("s", "a", "z"))
        time.sleep(max(0.0, down_at + DOWN_S - time.monotonic()))
    finally:
        net.link_up()
    up_at = time.monotonic()
    check(all(s != "connected" for s in states), "still connected with the link down: %s" % (states,))
    n_up = {w.wid: len(w.results) for w in ws + wa + wz}
    wait_until(lambda: all(len(w.ok()) > AFTER and len(w.results) > n_up[w.wid] + AFTER for w in ws + wa + wz),
               SAFETY_S, "%d more messages from every writer after the link came back" % AFTER)
    stop.set()
    wait_writers(ws + wa + wz)
    for p in ("s", "a", "z"):
        spool.wait_state(p, "connected")
    rows = []
    for p in ("s", "a", "z"):
        spool.settled(p)
    check_resources(spool, res0, "after the reconnection")
    check([rs.stop(), ra.stop(), rz.stop()] == [0, 0, 0], "a receiver did not exit 0")
    rows.append(account("veth down 5 s + up (sync)", spool, "s", ws, rs.messages(), "sync"))
    rows.append(account("veth down 5 s + up (async)", spool, "a", wa, ra.messages(), "async"))
    rows.append(account("veth down 5 s + up (async, send_timeout_ms 0)", spool, "z", wz, rz.messages(), "async"))
    # the silent peer was found by the in-flight timeout: send_timeout_ms, at least 1 s
    log = open(spool.log).read()
    for p, ms in (("s", T_MS), ("a", T_MS), ("z", 1000)):
        check("%s: connection to %s lost: no completion within %d ms" % (p, b, ms) in log,
              "%s: the loss was not found by the in-flight timeout of %d ms:\n%s" % (p, ms, log))
    for r in rows:
        check(r["reconnects"] >= 1, "%s: no reconnection" % r["what"])
        check(r["max_wait_s"] <= T_MS / 1000 + 3.0, "%s: a writer waited %.2fs, send_timeout_ms is %.1fs" %
              (r["what"], r["max_wait_s"], T_MS / 1000))
    check(all(w.errors() for w in ws + wa + wz), "a writer saw no failure while the link was down")
    # once reconnected, the stream flows again: the last writes all went through
    for w in ws + wa + wz:
        late = [e for s, e, t, _ in w.results[-AFTER // 2:]]
        check(all(e == 0 for e in late), "writer %d: writes after the link returned: %s" % (w.wid, set(late)))
    print("link down at +0, up after %.1fs" % (up_at - down_at))
    report(rows, "link")
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("faults-link", body))
