#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fault: unmount while writers wait on a dead peer (the link down, so the
peer is gone without a word). tests/lab/fs/test_unmount.py covers the
stopped receiver and SIGTERM; here the writers are blocked in sync writes
on a silent link, and the mount is taken away lazily (`fusermount3 -uz`).

The writers' blocked writes fail within send_timeout_ms + 3 s (EIO: the
message was in flight; ETIMEDOUT, EHOSTUNREACH, ESHUTDOWN: it was not sent), the ones after fail at
once; once they close their files rpmafs exits 0 by itself; nothing
crashes; every write that succeeded had arrived. The link is put back.
"""
import sys

from faults import *

T_MS = 2000


def body(work):
    _, b = need_lab()
    net = Net()
    recv = Receiver(work, b).start()
    spool = Spool(work, {"s": {"address": b, "port": recv.port, "mode": "sync", "send_timeout_ms": T_MS}}).mount()
    stop = threading.Event()
    ws = [Writer(spool, "s", i, 10**7, (64, 1000), pause=0.001, stop=stop) for i in range(4)]
    for w in ws:
        w.start()
    wait_until(lambda: all(len(w.ok()) > 50 for w in ws), SAFETY_S, "50 messages from every writer")
    try:
        net.link_down()
        # every writer blocked in its sync write on the dead link (until the
        # in-flight timeout, T_MS): the state the unmount is tested in. Each
        # one sleeps in write(2) and has finished no write since the last
        # look (on a live link a writer finishes dozens between two looks).
        # Only /proc is read: a status read would be a FUSE request.
        last = [None]

        def blocked():
            now = [len(w.results) if in_write(w) else None for w in ws]
            frozen = None not in now and now == last[0]
            last[0] = now
            return frozen

        wait_until(blocked, SAFETY_S, lambda: "every writer to block in write(2): %s" % last[0])
        r = subprocess.run(["fusermount3", "-u", spool.mnt], capture_output=True, text=True)
        check(r.returncode != 0, "fusermount3 -u succeeded with files open")
        r = subprocess.run(["fusermount3", "-uz", spool.mnt], capture_output=True, text=True)
        check(r.returncode == 0, "fusermount3 -uz: %s" % r.stderr)
        t_uz = time.monotonic()
        check(not os.path.ismount(spool.mnt), "still mounted after -uz")
        # every writer has seen its blocked write fail
        wait_until(lambda: all(any(e for _, e, t, _ in w.results if t > t_uz) for w in ws), T_MS / 1000 + 10,
                   "the blocked writes to fail")
        stop.set()
        wait_writers(ws)
        rc = spool.proc.wait(T_MS / 1000 + 15)
    finally:
        net.link_up()
    check(rc == 0, "rpmafs exit status %d" % rc)
    check(recv.stop() == 0, "the receiver did not exit 0")
    got, _ = received_by_writer(recv.messages())
    dups = sum(len(v) - len(set(v)) for v in got.values())
    check(dups == 0, "%d duplicates" % dups)
    for w in ws:
        check(set(w.ok()) <= set(got.get(w.wid, [])), "writer %d: a successful write did not arrive" % w.wid)
        errs = set(e for _, e in w.errors())
        check(errs <= {errno.EIO, errno.ESHUTDOWN} | set(NOT_SENT), "writer %d: errors %s" % (w.wid, errs))
    mw = max(w.max_wait() for w in ws)
    check(mw <= T_MS / 1000 + 3.0, "a writer waited %.2fs" % mw)
    errs = [e for w in ws for _, e in w.errors()]
    report([{"what": "fusermount3 -uz, writers blocked on a silent link (sync)", "mode": "sync",
             "writes": sum(len(w.results) for w in ws), "ok": sum(len(w.ok()) for w in ws),
             "errors": {errno.errorcode.get(e, str(e)): errs.count(e) for e in set(errs)},
             "posted": "n/a (unmounted)", "completed": "n/a", "failed": "n/a", "refused": "n/a",
             "received": sum(len(v) for v in got.values()), "duplicates": dups, "max_wait_s": round(mw, 3),
             "rpmafs_exit": rc}], "unmount-dead")


sys.exit(run("faults-unmount-dead", body))
