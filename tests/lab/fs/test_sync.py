#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Completions (docs/design.md §4.2): a sync write returns after its completion
(its worker reaps it itself, §8.4: sync_reaped) and fails with EIO once the
receiver is gone; O_SYNC makes an async spool sync for that file; fsync (dd
conv=fsync) waits for the handle's messages; writes while disconnected fail
after send_timeout_ms with an errno that says why."""
import sys

from fslab import *


def body(work):
    _, b = need_lab()
    r_sync = Receiver(work, b, name="recv-sync").start()
    r_async = Receiver(work, b, name="recv-async").start()
    spool = Spool(work, {
        "s": {"address": b, "port": r_sync.port, "mode": "sync", "send_timeout_ms": 1500},
        "a": {"address": b, "port": r_async.port, "send_timeout_ms": 1500},
    }).mount()

    # sync: when write returns, the completion is in
    for i in range(20):
        check(spool.write("s", b"m%d" % i) == 0, "sync write %d failed" % i)
        st = spool.status("s")
        check(st["completed"] == i + 1 and st["in_flight"] == 0,
              "after sync write %d: %s" % (i, st))

    # the worker that wrote a sync message polls the CQ for its completion
    # (fs/spool/await.c): of 200 more (dd, one write each), some are
    # answered without the loop thread, counted in sync_reaped, never more
    # than completed
    spool.sh("dd if=/dev/zero of=s bs=64 count=200 status=none")
    st = spool.settled("s")
    check(0 < st["sync_reaped"] <= st["completed"], "sync_reaped: %s" % st)
    print("sync: %d of %d sync writes answered by their worker" % (st["sync_reaped"],
                                                                  st["completed"]))

    # O_SYNC on an async spool
    check(spool.write("a", b"osync", os.O_SYNC) == 0, "O_SYNC write failed")
    st = spool.status("a")
    check(st["completed"] == 1 and st["in_flight"] == 0, "after an O_SYNC write: %s" % st)

    # fsync confirms: dd conv=fsync succeeds and everything is confirmed
    with open(work.path("blob"), "wb") as f:
        f.write(os.urandom(64 * 1024))
    spool.sh("dd if=%s of=a bs=8k conv=fsync status=none" % work.path("blob"))
    st = spool.status("a")
    check(st["completed"] == 9 and st["in_flight"] == 0, "after dd conv=fsync: %s" % st)

    # the receiver vanishes: sync writes fail with EIO (message posted, failed)
    # or, not posted within send_timeout_ms, an errno that says why
    # (docs/design.md §4.2): ECONNREFUSED (nobody listens now) or ETIMEDOUT;
    # never success
    r_sync.stop(signal.SIGKILL)
    t0 = time.monotonic()
    errs = []
    for i in range(6):
        errs.append(spool.write("s", b"after%d" % i))
    took = time.monotonic() - t0
    check(all(e in (errno.EIO,) + NOT_SENT for e in errs[1:]),
          "writes after the receiver died: %s" % [errno.errorcode.get(e, e) for e in errs])
    check(any(e != 0 for e in errs), "no write failed: %s" % errs)
    check(took < 6 * (1.5 + 2.0), "writes took %.1fs: longer than send_timeout_ms allows" % took)
    st = spool.status("s")
    check(st["state"] in ("reconnecting", "connecting", "failed"), "state %s" % st["state"])
    check(st["posted"] == st["completed"] + st["failed"] + st["in_flight"],
          "unaccounted messages: %s" % st)
    got = r_sync.messages()
    check(got[:20] == [b"m%d" % i for i in range(20)], "the sync messages: %r" % got[:20])
    check(got[20:220] == [bytes(64)] * 200, "dd's 200 sync messages: sizes %s" % (
        [len(m) for m in got[20:220]]))

    # async writes while disconnected: after send_timeout_ms, "Connection
    # refused" (the receiver's port has no listener: the CM rejects us) or,
    # should no attempt have ended yet, "Connection timed out"
    r_async.stop(signal.SIGKILL)
    spool.wait_state("a", "reconnecting")
    t0 = time.monotonic()
    e = spool.write("a", b"nobody")
    took = time.monotonic() - t0
    check(e in (errno.ECONNREFUSED, errno.ETIMEDOUT),
          "async write while disconnected: %s" % errno.errorcode.get(e, e))
    check(1.3 < took < 4.0, "%s after %.2fs, send_timeout_ms is 1.5s" % (errno.errorcode[e], took))
    st = spool.status("a")
    check(e != errno.ECONNREFUSED or "rejected" in st["last_error"],
          "ECONNREFUSED, yet last_error says %r" % st["last_error"])
    e = spool.write("a", b"nobody", os.O_NONBLOCK)
    check(e == errno.EAGAIN, "O_NONBLOCK write while disconnected: %s" % errno.errorcode.get(e, e))

    # the receiver returns: the spool reconnects, writes flow again
    r_sync.start()
    spool.wait_state("s", "connected")
    check(spool.write("s", b"back") == 0, "sync write after reconnection failed")
    st = spool.status("s")
    check(st["reconnects"] >= 1, "reconnects %s" % st["reconnects"])
    r_sync.stop()
    check(r_sync.messages()[-1] == b"back", "the last message is not 'back'")
    spool.unmount()


sys.exit(run("sync", body))
