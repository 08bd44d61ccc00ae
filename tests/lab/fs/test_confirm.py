#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Receiver confirmation (docs/design.md §8.6, §11.1): against rpma-recv a spool
is receiver-confirmed by default; a sync write and close (close = wait) return
only once rpma-recv acknowledged what it wrote out, so the figures are final
when the command returns; --no-srq --fsync acknowledges after the sync;
confirm = transport sends no numbers; confirm = receiver against a plain
librpma receiver is a clear failure, not a downgrade."""
import sys

from fslab import *


def body(work):
    _, b = need_lab()
    r = Receiver(work, b, name="recv-srq").start()
    r2 = Receiver(work, b, args=["--no-srq", "--slots", "8", "--fsync"], name="recv-fsync").start()
    r3 = Receiver(work, b, name="recv-transport").start()
    spool = Spool(work, {
        "s": {"address": b, "port": r.port, "mode": "sync"},
        "a": {"address": b, "port": r.port},
        "f": {"address": b, "port": r2.port},
        "t": {"address": b, "port": r3.port, "confirm": "transport"},
    }).mount()
    for peer in ("s", "a", "f"):
        check(spool.status(peer)["confirm"] == "receiver", "%s: %s" % (peer, spool.status(peer)))
    check(spool.status("t")["confirm"] == "transport", "t: %s" % spool.status("t"))
    check(spool.xattrs("s")["confirm"] == "receiver", "xattr confirm: %s" % spool.xattrs("s"))

    # sync: when the write returns, rpma-recv has written it out and said so
    for i in range(20):
        check(spool.write("s", b"m%d" % i) == 0, "sync write %d failed" % i)
        st = spool.status("s")
        check(st["acked"] == i + 1 and st["unacked"] == 0 and st["in_flight"] == 0,
              "after sync write %d: %s" % (i, st))
        check(os.stat(spool.file("s")).st_size == sum(len(b"m%d" % j) for j in range(i + 1)),
              "st_size counts acknowledged bytes")

    # the shell loop: writes stay asynchronous, close waits for every ack
    n = 300
    spool.sh("i=0; while [ $i -lt %d ]; do echo $i; i=$((i+1)); done > a" % n)
    st = spool.status("a")
    check(st["acked"] == n and st["completed"] == n and st["failed"] == 0,
          "after the loop's close: %s" % st)
    check(st["bytes_confirmed"] == sum(len(b"%d\n" % i) for i in range(n)), "bytes: %s" % st)

    # --no-srq --fsync: acknowledged once synced; fsync (dd conv=fsync) waits for it
    with open(work.path("blob"), "wb") as f:
        f.write(os.urandom(64 * 1024))
    spool.sh("dd if=%s of=f bs=4k conv=fsync status=none" % work.path("blob"))
    st = spool.status("f")
    check(st["acked"] == 16 and st["unacked"] == 0, "after dd conv=fsync: %s" % st)
    check(st["bad_acks"] == 0 and st["reconnects"] == 0, "f: %s" % st)

    # transport: the old confirmation, the same bytes
    spool.sh("echo plain > t")
    st = spool.settled("t")
    check(st["completed"] == 1 and st["acked"] == 0, "t: %s" % st)

    # a plain librpma receiver with confirm = receiver: failed, said so
    plain = os.environ.get("PLAIN_RECV")
    if plain:
        port = next_port()
        ready = work.path("ready")
        log = open(work.path("plain.log"), "w")
        p = subprocess.Popen([plain, b, str(port), "1", ready, work.path("plain.bin")],
                             stdout=log, stderr=log)
        work.procs.append(p)
        wait_until(lambda: os.path.exists(ready) or p.poll() is not None, SAFETY_S,
                   "plain-recv to listen")
        strict = Spool(work, {"x": {"address": b, "port": port, "confirm": "receiver"}},
                       name="strict").mount(wait_connected=False)
        strict.wait_state("x", "failed")
        st = strict.status("x")
        check("confirm = receiver" in st["last_error"], "x: %s" % st)
        check("confirm = receiver" in open(strict.log).read(), "not in the log")
        strict.unmount()
        p.kill()
    else:
        print("note: no plain-recv (Debian's librpma-dev): confirm = receiver refusal not run")

    spool.unmount()
    for rr in (r, r2, r3):
        check(rr.stop() == 0, "rpma-recv exit status")
    got = r.messages()
    check([m for m in got if m.startswith(b"m")] == [b"m%d" % i for i in range(20)],
          "sync messages: %r" % got[:20])
    check([m for m in got if not m.startswith(b"m")] == [b"%d\n" % i for i in range(n)],
          "loop messages")
    check(b"".join(r2.messages()) == open(work.path("blob"), "rb").read(), "dd bytes")
    check(r3.messages() == [b"plain\n"], "transport bytes: %r" % r3.messages())
    log = open(r.log).read()
    check("acknowledged" in log, "rpma-recv did not log an acknowledged connection")


sys.exit(run("confirm", body))
