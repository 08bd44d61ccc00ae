#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A receiver killed and restarted mid-stream (docs/design.md §4.2): the spool
reconnects; every message is either confirmed or counted failed, none is
unaccounted, none arrives twice, none arrives that no write sent."""
import sys
import threading

from fslab import *

N = 3000


def body(work):
    _, b = need_lab()
    recv = Receiver(work, b).start()
    spool = Spool(work, {"alpha": {"address": b, "port": recv.port, "send_timeout_ms": 3000}}).mount()

    ok, failed = [], []

    def writer():
        fd = os.open(spool.file("alpha"), os.O_WRONLY)
        for i in range(N):
            try:
                os.write(fd, b"seq %06d" % i)
                ok.append(i)
            except OSError as e:
                failed.append((i, e.errno))
                # once a write has waited send_timeout_ms in vain the next ones
                # fail at once until the spool reconnects: do not burn the
                # stream before it has
                time.sleep(0.01)
        try:
            os.close(fd)
        except OSError:
            pass

    t = threading.Thread(target=writer)
    t.start()
    wait_until(lambda: len(ok) > N // 4, SAFETY_S, "a quarter of the stream")
    recv.stop(signal.SIGKILL)
    # restart once the spool has seen the receiver go
    spool.wait_state("alpha", "reconnecting")
    recv.start()
    t.join(SAFETY_S)
    check(not t.is_alive(), "the writer is stuck (status: %s)" % spool.status("alpha"))

    st = spool.settled("alpha")
    recv.stop()
    got = recv.messages()
    seqs = [int(m.split()[1]) for m in got]
    check(len(seqs) == len(set(seqs)), "duplicates: %d received, %d distinct" % (len(seqs), len(set(seqs))))
    check(set(seqs) <= set(ok), "received messages no successful write sent: %s" %
          sorted(set(seqs) - set(ok))[:10])
    # every write is posted or refused (an async write returns once queued,
    # §4.2: one queued while the receiver was away and refused when
    # send_timeout_ms passed returned 0, its refusal is the next write's EIO)
    check(st["posted"] + st["refused"] == len(ok) + len(failed),
          "posted %s + refused %s, writes %d" % (st["posted"], st["refused"], len(ok) + len(failed)))
    check(st["posted"] <= len(ok), "posted %s, successful writes %d" % (st["posted"], len(ok)))
    check(st["posted"] == st["completed"] + st["failed"], "unaccounted: %s" % st)
    check(len(seqs) <= st["completed"] + st["failed"], "more received than posted")
    check(st["reconnects"] >= 1, "no reconnection: %s" % st)
    check(all(e in (errno.EIO,) + NOT_SENT for _, e in failed),
          "writes failed with %s" % set(errno.errorcode.get(e, e) for _, e in failed))
    # after the reconnection the stream flows again, in order
    tail = [s for s in seqs if s > max(i for i, _ in failed)] if failed else seqs
    check(tail == sorted(tail) and len(tail) > 0, "the stream after reconnection is out of order")
    print("writes ok %d failed %d; posted %d refused %d completed %d failed %d; received %d" %
          (len(ok), len(failed), st["posted"], st["refused"], st["completed"], st["failed"], len(seqs)))
    spool.unmount()


sys.exit(run("reconnect", body))
