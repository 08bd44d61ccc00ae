#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""completion = on_error: a message sent while the previous fence is still
in flight is confirmed too, without waiting for the in-flight timeout.

Found by the full-size load test: at the end of a stream, two unsignaled
sends posted while a fence was in flight were never fenced; after
send_timeout_ms the connection was dropped and the two (delivered)
messages were counted failed. Here the fence is held in flight on purpose:
the receiver is stopped (SIGSTOP) with its receives used up, so a send
waits for RNR retries and the fence posted behind it waits too; one more
send goes out while that fence is in flight; then the receiver resumes.
Every message must be confirmed by that fence once the receiver resumes,
not by the in-flight timeout (10 s here), which would drop the connection:
none failed, no reconnection; and fsync succeeds without dropping anything.
The times are printed, not judged. Repeated 5 times.
"""
import sys

from faults import *

SLOTS = 64


def body(work):
    _, b = need_lab()
    recv = Receiver(work, b, args=["--slots", str(SLOTS)]).start()
    spool = Spool(work, {"p": {"address": b, "port": recv.port, "completion": "on_error",
                               "send_timeout_ms": 10000}}).mount()
    sent = []

    def send(data, flags=0):
        check(spool.write("p", data, flags) == 0, "a write failed")
        sent.append(data)

    for rnd in range(5):
        # everything so far written out, so every receive is posted again
        # (the fsync's O_APPEND open sends no 0-byte message: no intent,
        # docs/design.md §4.1)
        wait_until(lambda: len(recv.messages()) == len(sent), SAFETY_S, "the receiver to catch up")
        time.sleep(0.05)
        recv.proc.send_signal(signal.SIGSTOP)
        try:
            # use up the stopped receiver's receives (the kernel still takes them in)
            for i in range(SLOTS):
                send(b"fill %d %d" % (rnd, i))
            wait_until(lambda: spool.status("p")["in_flight"] == 0, SAFETY_S, "the receives to be used up")
            send(b"rnr %d" % rnd)          # no receive left: retried until the receiver resumes
            time.sleep(0.05)                # quiet: a fence goes out behind it and waits too
            send(b"behind %d" % rnd)       # posted while that fence is in flight
            st = spool.status("p")         # posted when the write returned: no wait
            check(st["in_flight"] == 2, "round %d: in flight %d, want 2: %s" % (rnd, st["in_flight"], st))
        finally:
            recv.proc.send_signal(signal.SIGCONT)
        t0 = time.monotonic()
        # settled by the fence's completion: had it waited for the in-flight
        # timeout instead, the connection would have been dropped (failed,
        # reconnects) -- that, not a clock, is what tells the two apart
        st = spool.settled("p")
        took = time.monotonic() - t0
        check(st["failed"] == 0 and st["reconnects"] == 0, "round %d: %s" % (rnd, st))
        fd = os.open(spool.file("p"), os.O_WRONLY | os.O_APPEND)
        t1 = time.monotonic()
        os.fsync(fd)
        os.close(fd)
        fsync_s = time.monotonic() - t1
        # nothing was outstanding: the fsync neither waited for nor dropped anything
        st2 = spool.status("p")
        check(st2["failed"] == 0 and st2["reconnects"] == 0,
              "round %d: after fsync: %s" % (rnd, st2))
        print("round %d: settled %.3fs after the receiver resumed, fsync %.3fs" % (rnd, took, fsync_s))
    st = spool.settled("p")
    check(st["completed"] == len(sent), "completed %d, sent %d" % (st["completed"], len(sent)))
    check(recv.stop() == 0, "receiver exit status")
    got = recv.messages()
    check(got == sent, "received %d of %d, in order: %s" % (len(got), len(sent), got == sent[:len(got)]))
    check(spool.unmount() == 0, "rpmafs exit status")


sys.exit(run("faults-onerror-fence", body))
