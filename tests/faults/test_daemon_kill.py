#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: rpmafs killed with SIGKILL mid-stream.

The mount answers ENOTCONN at once (writers do not hang), `fusermount3 -uz`
clears it, and a new rpmafs on the same mount point connects and sends.
The receivers see the disconnect (the dead process's kernel sends it),
keep running and hold no more descriptors than before the connection.

What can be accounted: the daemon's counters died with it. Every sync write
that succeeded before the kill arrived exactly once (the receivers live
on); a message the daemon had posted may arrive although its write failed
(RDMA cannot tell a sender that died). Async writes that succeeded were
only posted: those that did not arrive are counted and reported, not
hidden (a SIGKILLed sender loses what it had in flight).
"""
import sys

from faults import *


def body(work):
    _, b = need_lab()
    rs = Receiver(work, b, name="recv-s").start()
    ra = Receiver(work, b, name="recv-a").start()
    rfds0 = [open_fds(r.proc.pid) for r in (rs, ra)]
    sections = {
        "s": {"address": b, "port": rs.port, "mode": "sync", "send_timeout_ms": 2000},
        "a": {"address": b, "port": ra.port, "send_timeout_ms": 2000},
    }
    spool = Spool(work, sections).mount()
    sizes = (16, 300, 2000, 64)
    ws = [Writer(spool, "s", i, 10**7, sizes) for i in (0, 1)]
    wa = [Writer(spool, "a", i, 10**7, sizes) for i in (2, 3)]
    for w in ws + wa:
        w.start()
    wait_until(lambda: all(len(w.ok()) > 300 for w in ws + wa), SAFETY_S, "300 messages from every writer")
    spool.proc.kill()
    spool.proc.wait()
    t_dead = time.monotonic()
    wait_writers(ws + wa, 10)
    ended = max(t for w in ws + wa for _, _, t, _ in w.results[-1:])
    check(ended - t_dead < 5, "writers went on %.1fs after the daemon died" % (ended - t_dead))
    for w in ws + wa:
        # started after the death: ENOTCONN. The one in flight at the kill
        # (started before, returned after; t_dead is taken once wait()
        # returns) fails with ECONNABORTED, or got its answer just before.
        after = [e for _, e, t, d in w.results if t - d > t_dead]
        check(all(e == errno.ENOTCONN for e in after),
              "writer %d: writes started after the daemon died: %s" % (w.wid, set(after)))
        across = [e for _, e, t, d in w.results if t > t_dead >= t - d]
        check(len(across) <= 1 and all(e in (0, errno.ECONNABORTED, errno.ENOTCONN) for e in across),
              "writer %d: writes in flight at the kill: %s" % (w.wid, across))
    # (stat may still answer from the kernel's cached attributes; opening cannot)
    for path, flags in ((spool.file("s"), os.O_WRONLY), (spool.file("a") + ".status", os.O_RDONLY)):
        try:
            os.close(os.open(path, flags))
            fail("open on the dead mount worked")
        except OSError as e:
            check(e.errno == errno.ENOTCONN, "open on the dead mount: %s" % errno.errorcode.get(e.errno))
    for r in (rs, ra):
        wait_until(lambda: "closed by peer" in open(r.log).read(), SAFETY_S, "%s to see the disconnect" % r.name)
        check(r.proc.poll() is None, "%s died" % r.name)
    wait_until(lambda: [open_fds(r.proc.pid) for r in (rs, ra)] == rfds0, SAFETY_S,
               "the receivers to close the dead connection's descriptors")

    r = subprocess.run(["fusermount3", "-uz", spool.mnt], capture_output=True, text=True)
    check(r.returncode == 0, "fusermount3 -uz: %s" % r.stderr)
    spool2 = Spool(work, sections, name="spool2")
    spool2.mnt = spool.mnt
    spool2.mount()
    w2 = [Writer(spool2, "s", 10, 100, sizes), Writer(spool2, "a", 11, 100, sizes)]
    for w in w2:
        w.start()
    wait_writers(w2, 120)
    for p in ("s", "a"):
        spool2.settled(p)
    check([rs.stop(), ra.stop()] == [0, 0], "a receiver did not exit 0")

    rows = []
    for what, rcv, writers, w_new, mode in (("sync", rs, ws, w2[0], "sync"), ("async", ra, wa, w2[1], "async")):
        by, empty = received_by_writer(rcv.messages())
        check(empty == 0, "0-byte messages nobody sent")
        dups = lost = 0
        for w in writers:
            got = by.get(w.wid, [])
            dups += len(got) - len(set(got))
            check(got == sorted(got), "writer %d: out of order" % w.wid)
            check(set(got) <= set(s for s, _, _, _ in w.results), "writer %d: messages never written" % w.wid)
            missing = set(w.ok()) - set(got)
            if mode == "sync":
                check(not missing, "writer %d: %d sync writes succeeded, never arrived: %s" %
                      (w.wid, len(missing), sorted(missing)[:10]))
            lost += len(missing)
        check(dups == 0, "%d duplicates" % dups)
        check(by.get(w_new.wid) == list(range(100)) and w_new.ok() == list(range(100)),
              "the new mount's messages: %s" % by.get(w_new.wid, [])[:10])
        errs = [e for w in writers for _, e in w.errors()]
        rows.append({"what": "rpmafs SIGKILL, -uz, new mount (%s)" % what, "mode": mode,
                     "writes": sum(len(w.results) for w in writers),
                     "ok": sum(len(w.ok()) for w in writers),
                     "errors": {errno.errorcode.get(e, str(e)): errs.count(e) for e in set(errs)},
                     "posted": "n/a (daemon killed)", "completed": "n/a", "failed": "n/a", "refused": "n/a",
                     "received": sum(len(by.get(w.wid, [])) for w in writers),
                     "duplicates": dups, "lost_confirmed" if mode == "sync" else "lost_posted": lost,
                     "max_wait_s": round(max(w.max_wait() for w in writers), 3),
                     "new_mount_received": len(by.get(w_new.wid, []))})
    report(rows, "daemon-kill")
    check(spool2.unmount() == 0, "the new rpmafs's exit status")


sys.exit(run("faults-daemon-kill", body))
