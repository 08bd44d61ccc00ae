#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unmounting with writers blocked on a dead peer does not hang (docs/design.md §4.2,
rpmafs(8)): fusermount3 -u refuses at once (the files are open), SIGTERM
makes rpmafs give up on what cannot complete and exit, and the blocked
writers get an error instead of waiting forever. Then a fresh mount works."""
import sys
import threading

from fslab import *


def body(work):
    _, b = need_lab()
    # few receives posted: once they are used up the stopped receiver
    # answers RNR forever, and sync writes wait for completions
    recv = Receiver(work, b, args=["--slots", "2"]).start()
    # sync writers held by sends a stopped receiver's adapter will not
    # complete: transport confirmation (with receiver confirmation they
    # would wait for acknowledgements instead, the same in effect)
    spool = Spool(work, {"alpha": {"address": b, "port": recv.port, "mode": "sync",
                                   "send_timeout_ms": 8000, "confirm": "transport"}}).mount()
    check(spool.write("alpha", b"first") == 0, "the first write failed")
    recv.proc.send_signal(signal.SIGSTOP)

    results = {}

    def writer(k):
        results[k] = spool.write("alpha", b"blocked %d" % k)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()

    seen = []

    def stuck():
        """A send is held by the stopped receiver, each write that
        completed has returned to its writer, and every writer still alive
        is inside write(2): they stay blocked."""
        s = spool.status("alpha")
        alive = [t for t in threads if t.is_alive()]
        seen[:] = [s, len(threads) - len(alive), [in_write(t) for t in alive]]
        return (s["in_flight"] >= 1 and len(threads) - len(alive) == s["completed"] + s["failed"] - 1
                and all(in_write(t) for t in alive))

    wait_until(stuck, SAFETY_S, lambda: "the writers to block (status, writers done, in write): %s" % seen)
    # the receives still posted (one or two) take some of them; the others wait
    blocked = [k for k, t in enumerate(threads) if t.is_alive()]
    check(len(blocked) >= 2, "only %d writers blocked: the test proves little" % len(blocked))

    r = subprocess.run(["fusermount3", "-u", spool.mnt], capture_output=True, text=True, timeout=SAFETY_S)
    check(r.returncode != 0, "fusermount3 -u succeeded with files open")

    t0 = time.monotonic()
    spool.proc.send_signal(signal.SIGTERM)
    rc = spool.proc.wait(SAFETY_S)
    took = time.monotonic() - t0
    for t in threads:
        t.join(SAFETY_S)
    check(not any(t.is_alive() for t in threads), "writers still blocked after rpmafs exited")
    check(rc == 0, "rpmafs exit status %d" % rc)
    # it waits for in-flight messages at most send_timeout_ms + 2 s
    check(took < 8.0 + 2.0 + 3.0, "rpmafs took %.1fs to exit" % took)
    check(all(results[k] != 0 for k in blocked), "a blocked write reported success: %s" % results)
    log = open(spool.log).read()
    check("signal 15" in log, "rpmafs did not log the signal:\n%s" % log)
    print("exit after %.2fs; writers: %s" % (took, {k: errno.errorcode.get(e, e) for k, e in results.items()}))

    recv.proc.send_signal(signal.SIGCONT)
    recv.stop()
    subprocess.run(["fusermount3", "-uz", spool.mnt], capture_output=True)

    # the mount point is usable again
    recv2 = Receiver(work, b, name="recv2").start()
    spool2 = Spool(work, {"alpha": {"address": b, "port": recv2.port}}, name="spool2").mount()
    check(spool2.write("alpha", b"again") == 0, "a write on the new mount failed")
    spool2.settled("alpha")
    spool2.unmount()
    recv2.stop()
    check(recv2.messages() == [b"again"], "the new mount's message: %r" % recv2.messages())


sys.exit(run("unmount", body))
