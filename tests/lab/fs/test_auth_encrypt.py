#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""key = with protect = encrypt (issue 25, docs/design.md §11.2), the
sender's side, against rpma-recv --keys DIR.

Delivery: a spool with protect = encrypt delivers the exact bytes of echo,
a 0-byte message, cat of a file, dd blocks and dd bs=1020K, as the same
writes through a protect = mac spool do, with the same payload copies
(encrypt works in place).

The wire: tcpdump on the veth of the receiver's side (LAB_NETDEV_B) sees no
marker written through the encrypt spool; a marker written through the mac
spool afterwards, in the same capture, is there (the capture works; it
arriving is also the event that the capture holds everything before it).

The re-send: rpma-recv is stopped (SIGSTOP) so that messages written next
are surely not acknowledged, then SIGKILLed and restarted; the encrypt
spool (confirm = receiver) sends them again on the new connection, sealed
under its keys, and the new receiver writes out each one's plaintext
exactly once. Without the unseal of a re-send the new receiver would write
the old connection's ciphertext."""
import shutil
import sys

from fslab import *

ENC_MARK = b"RPMAFS-ENC-MARK-%08x" % int.from_bytes(os.urandom(4), "little")
MAC_MARK = b"RPMAFS-MAC-MARK-%08x" % int.from_bytes(os.urandom(4), "little")


def proc_state(pid):
    """the state letter of /proc/PID/stat (T: stopped)"""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rpartition(")")[2].split()[0]


def writes(spool, peer, work, mark):
    """echo, 0-byte, cat, dd bs=4k, dd bs=1020K through peer, each carrying mark; the messages"""
    blob = (mark + b" ") * 4 + os.urandom(64 * 1024) + (mark + b"\n") * 64
    with open(work.path("blob-" + peer), "wb") as f:
        f.write(blob)
    big = os.urandom(1020 * 1024 - 4096) + (mark + b".") * 128
    big += os.urandom(1020 * 1024 - len(big))
    with open(work.path("big-" + peer), "wb") as f:
        f.write(big)
    spool.sh("echo %s > %s" % (mark.decode(), peer))
    spool.sh(": > %s" % peer)
    spool.sh("cat %s > %s" % (work.path("blob-" + peer), peer))
    spool.sh("dd if=%s of=%s bs=4k count=3 status=none" % (work.path("blob-" + peer), peer))
    spool.sh("dd if=%s of=%s bs=1020K status=none" % (work.path("big-" + peer), peer))
    want = [mark + b"\n", b"", blob]
    want += [blob[i * 4096:(i + 1) * 4096] for i in range(3)]
    return want + [big]


def body(work):
    _, b = need_lab()
    netdev = os.environ.get("LAB_NETDEV_B")
    check(netdev, "LAB_NETDEV_B is not set (tools/rdma-lab sets it)")
    check(shutil.which("tcpdump"), "no tcpdump: tools/rdma-lab installs it (PACKAGES)")
    keys = work.path("keys")
    os.mkdir(keys)
    alpha = key_file(os.path.join(keys, "alpha.key"))

    r = Receiver(work, b, args=["--keys", keys, "--max-message", "1MiB", "--slots", "16"],
                 name="recv-keys").start()
    spool = Spool(work, {"e": {"address": b, "port": r.port, "key": alpha, "protect": "encrypt"},
                         "m": {"address": b, "port": r.port, "key": alpha}}).mount()
    # the spool is connected at the ESTABLISHED event; rpma-recv logs the
    # connection once its proof has come, which may be a moment later
    wait_until(lambda: (lambda log: "key alpha, encrypt" in log and "key alpha, mac" in log)(
        open(r.log).read()), SAFETY_S,
        lambda: "rpma-recv to log one encrypt and one mac connection: see %s" % r.log)

    # the capture (fslab.Capture), in memory (/dev/shm, not the 9p root)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else work.dir
    pcap = os.path.join(shm, "rpmafs-auth-encrypt-%d.pcap" % os.getpid())
    cap = Capture(work, netdev, pcap)

    want_e = writes(spool, "e", work, ENC_MARK)
    st_e = spool.settled("e", acked=True)
    check(st_e["acked"] == len(want_e) and st_e["failed"] == 0 and st_e["bad_acks"] == 0,
          "e after the writes: %s" % st_e)
    # then the mac control: once its marker is in the file, so is all that went before it
    want_m = writes(spool, "m", work, MAC_MARK)
    st_m = spool.settled("m", acked=True)
    check(st_m["acked"] == len(want_m) and st_m["failed"] == 0, "m after the writes: %s" % st_m)
    wire, tcp = cap.until(MAC_MARK)
    os.unlink(pcap)
    print("capture: %d bytes; mac marker %d times, encrypt marker %d times; tcpdump: %s" % (
        len(wire), wire.count(MAC_MARK), wire.count(ENC_MARK), " / ".join(tcp.split("\n")[1:])))
    check(ENC_MARK not in wire, "encrypt: the marker is on the wire")

    got = r.messages()
    check(sorted(got) == sorted(want_e + want_m),
          "delivered %d messages, sizes %s; want %d" % (len(got), [len(m) for m in got],
                                                        len(want_e + want_m)))
    # the receiver wrote out encrypt's plaintext, marker and all
    check(sum(ENC_MARK in m for m in got) == sum(ENC_MARK in m for m in want_e) > 0,
          "encrypt's marked messages")
    # in place: encrypt copies no more payload than mac for the same writes
    check(st_e["payload_copies"] == st_m["payload_copies"],
          "payload_copies: encrypt %s, mac %s" % (st_e["payload_copies"], st_m["payload_copies"]))
    print("encrypt delivered %d messages, sizes %s; payload_copies %s (mac %s)" % (
        len(want_e), [len(m) for m in want_e], st_e["payload_copies"], st_m["payload_copies"]))
    spool.unmount()

    # the re-send across a SIGKILL of the receiver: sealed by the old connection, sent on the new
    r2 = Receiver(work, b, args=["--keys", keys, "--max-message", "1MiB", "--no-srq",
                                 "--slots", "16"], name="recv-kill").start()
    # close = return: a write's close does not wait for the stopped receiver's acknowledgement
    rs = Spool(work, {"x": {"address": b, "port": r2.port, "key": alpha, "protect": "encrypt",
                            "confirm": "receiver", "close": "return",
                            "send_timeout_ms": 120000}},
               name="resend").mount()
    check(rs.write("x", b"before the stop") == 0, "the first write")
    wait_until(lambda: rs.status("x")["acked"] == 1, SAFETY_S,
               lambda: "the first write acknowledged: %s" % rs.status("x"))
    r2.proc.send_signal(signal.SIGSTOP)
    wait_until(lambda: proc_state(r2.proc.pid) == "T", SAFETY_S, "rpma-recv to be stopped")
    resend = [b"resend one " + ENC_MARK, os.urandom(64 * 1024) + ENC_MARK,
              ENC_MARK + os.urandom(1020 * 1024 - len(ENC_MARK))]
    for m in resend:
        check(rs.write("x", m) == 0, "a write while the receiver is stopped")
    # the event: all three left (completed or in flight), none acknowledged
    wait_until(lambda: (lambda s: s["unacked"] + s["in_flight"] == 3 and s["pending"] == 0)(
        rs.status("x")), SAFETY_S, lambda: "three unacknowledged: %s" % rs.status("x"))
    r2.stop(signal.SIGKILL)
    rs.wait_state("x", "reconnecting")
    r2.start()
    st = wait_until(lambda: (lambda s: s if s["acked"] == 4 and s["pending"] == 0 and
                             s["unacked"] == 0 and s["in_flight"] == 0 else None)(rs.status("x")),
                    SAFETY_S, lambda: "the re-sends acknowledged: %s" % rs.status("x"))
    check(st["resent"] >= 3 and st["failed"] == 0 and st["reconnects"] >= 1, "x: %s" % st)
    got = r2.messages()
    for m in resend:
        check(got.count(m) == 1, "a re-sent message of %d bytes arrived %d times; got sizes %s" % (
            len(m), got.count(m), [len(g) for g in got]))
    check(got == [b"before the stop"] + resend,
          "after the re-send: sizes %s" % [len(g) for g in got])
    print("re-send across SIGKILL: resent %d, reconnects %d; delivered once each: sizes %s" % (
        st["resent"], st["reconnects"], [len(g) for g in got]))
    rs.unmount()
    r2.stop()


sys.exit(run("auth-encrypt", body))
