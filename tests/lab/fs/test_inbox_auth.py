#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""[rpmafs] listen_keys = DIR (issue 25, docs/design.md §13.5): the mount's
inbox accepts only senders that prove one of DIR's keys. A mount with key =
alpha.key, with mac and with protect = encrypt, delivers echo, a 0-byte
message and a 1020K dd block into another mount's inbox (last_sender names
the key); send-auth, the project's test sender on rpma/, delivers every
size with mac and encrypt, byte for byte; a wrong key, no key, a plain
librpma sender and a replayed connect request are rejected, logged and
counted (auth_failures), with a clear last_error on the spool; a bad tag
mid-stream drops the connection and nothing after it is queued; a
connection without its proof is dropped; a flood of hostile connects does
not stop an honest sender; encrypt keeps a marker off the wire; a 0644 key
file in DIR refuses the mount."""
import sys
import threading

from fslab import *

SEND_AUTH = os.environ.get("SEND_AUTH")
PLAIN = os.environ.get("PLAIN_SEND")


def len_bytes(count, sizes):
    """What send-auth's COUNT messages of SIZES take in the inbox (len): 4 + each size."""
    return sum(4 + sizes[k % len(sizes)] for k in range(count))


def deliver(addr, port, inbox, count, sizes, expect, *args):
    """send-auth sends, the inbox is read as it comes (it holds 16 slots);
    its rc, and the bytes read, which must be its --expect."""
    p = sa(addr, port, "--count", str(count), "--sizes", ",".join(map(str, sizes)),
           "--expect", expect, *args)
    data = read_len_records(inbox, len_bytes(count, sizes))
    rc = sa_rc(p)
    check(rc == 0, "send-auth %s exited %d" % (" ".join(args), rc))
    check(data == open(expect, "rb").read(), "send-auth %s: not the bytes sent" % " ".join(args))
    return data


def sa(addr, port, *args, log=None):
    """send-auth in the background; the Popen."""
    return subprocess.Popen([SEND_AUTH, "--connect", "%s:%d" % (addr, port)] + list(args),
                            stdout=subprocess.DEVNULL,
                            stderr=open(log, "w") if log else subprocess.DEVNULL)


def sa_rc(p):
    try:
        return p.wait(SAFETY_S)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("send-auth %s still running after %ss" % (p.args, SAFETY_S))


def logged(m, text):
    return wait_until(lambda: text in open(m.log).read(), SAFETY_S,
                      lambda: "the inbox's log to say %r (see %s)" % (text, m.log))


def body(work):
    a, b = need_lab()
    if not SEND_AUTH:
        print("skip: SEND_AUTH is not built")
        sys.exit(SKIP)
    keys = work.path("keys")
    os.mkdir(keys, 0o700)
    alpha = key_file(os.path.join(keys, "alpha.key"))
    beta = key_file(work.path("beta.key"))  # not one of DIR's

    pb = next_port()
    mb = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, pb), "listen_keys": keys,
                                 "inbox_format": "len", "inbox_slots": 16,
                                 "inbox_max_message": "1MiB", "log_level": "info"}},
               name="b").mount(wait_connected=False)
    inbox = os.path.join(mb.mnt, "inbox")
    check(inbox_status(mb)["auth_failures"] == 0, "status %s" % inbox_status(mb))

    # a mount with the key, mount to mount: echo, a 0-byte message, a 1020K dd block
    big = os.urandom(1020 * 1024)
    with open(work.path("big"), "wb") as f:
        f.write(big)
    # close = return: a receiver-confirmed write to an inbox is acknowledged
    # when it is read; with protect = encrypt the same bytes, decrypted in
    # the inbox's slots
    for name, peer, protect, text in (("a", "k", "mac", "hello"), ("ax", "x", "encrypt", "secret")):
        sp = Spool(work, {peer: {"address": b, "port": pb, "key": alpha, "protect": protect,
                                 "close": "return"}}, name=name).mount()
        sp.sh("echo %s > %s" % (text, peer))
        sp.sh(": > %s" % peer)
        sp.sh("dd if=%s of=%s bs=1020K status=none" % (work.path("big"), peer))
        want = [text.encode() + b"\n", b"", big]
        got = len_records(read_len_records(inbox, sum(4 + len(m) for m in want)))
        check(got == want, "mount to mount, %s: sizes %s, want %s" % (
            protect, [len(m) for m in got], [len(m) for m in want]))
        st = sp.settled(peer, acked=True)
        check(st["acked"] == 3 and st["failed"] == 0 and st["bad_acks"] == 0,
              "the keyed spool (%s): %s" % (protect, st))
        ist = inbox_status(mb)
        check(ist["last_sender"].startswith("alpha@%s:" % a),
              "last_sender %r" % ist["last_sender"])
        logged(mb, "key alpha, %s)" % protect)
        print("mount to mount with the key, protect = %s: 3 messages (%d B, 0 B, 1020K), acked 3, "
              "last_sender %s" % (protect, len(want[0]), ist["last_sender"]))
        sp.unmount()

    # send-auth: every size, mac and encrypt, acknowledged or not, byte for byte
    deliver(b, pb, inbox, 40, [0, 1, 100, 4096, 17, 0], work.path("e0.len"), "--key", alpha,
            "--ack")
    deliver(b, pb, inbox, 25, [64, 0, 65536], work.path("e1.len"), "--key", alpha, "--encrypt",
            "--marker", "SECOND")
    print("send-auth: 40 messages (mac, acknowledged at read) and 25 (encrypt) byte for byte")

    # rejected at connect, each logged and counted: a wrong key, no key, a
    # plain librpma sender, a replayed connect request
    failures = inbox_status(mb)["auth_failures"]
    mw = Spool(work, {"w": {"address": b, "port": pb, "key": beta},
                      "n": {"address": b, "port": pb}}, name="wrong").mount(wait_connected=False)
    logged(mb, "sender's key is not one of %s's" % keys)
    logged(mb, "sender proves no key (rpmafs private data without a key)")
    for peer in ("w", "n"):
        # an attempt may first end on another error (a connect still being
        # set up): wait for the rejection itself
        wait_until(lambda: "rejected" in mw.status(peer).get("last_error", "").lower(),
                   SAFETY_S, lambda: "a rejection in last_error for %s: %s" % (peer, mw.status(peer)))
        st = mw.status(peer)
        check(st["state"] != "connected" and "rejected" in st["last_error"].lower(),
              "%s: %s" % (peer, st))
        print("spool %s: state %s, last_error %r" % (peer, st["state"], st["last_error"]))
    # the inbox refused (rdma_reject, CM status 28): the spool without a key
    # is told that a receiver may want one, the one with a key that it may not
    # be held; neither that nothing listens
    check("the receiver refused" in mw.status("n")["last_error"] and
          "no key = is set" in mw.status("n")["last_error"], "n: %s" % mw.status("n"))
    check("the receiver refused" in mw.status("w")["last_error"] and
          "a key it does not hold" in mw.status("w")["last_error"], "w: %s" % mw.status("w"))
    mw.unmount()
    # nothing listens on the port (CM status 8): said so, the key not blamed
    nl = Spool(work, {"k": {"address": b, "port": next_port(), "key": beta}},
               name="nolisten").mount(wait_connected=False)
    wait_until(lambda: "rejected" in nl.status("k").get("last_error", "").lower(),
               SAFETY_S, lambda: "a rejection in last_error: %s" % nl.status("k"))
    st = nl.status("k")
    check("nothing listens on that port" in st["last_error"] and "key" not in st["last_error"],
          "no listener: %s" % st)
    print("spool k (no listener): last_error %r" % st["last_error"])
    nl.unmount()
    if PLAIN:
        r = subprocess.run([PLAIN, b, str(pb), "x"], capture_output=True, text=True,
                           timeout=SAFETY_S)
        check(r.returncode == 3, "plain-send exited %d: %s" % (r.returncode, r.stderr))
        logged(mb, "sender proves no key (no private data: a plain RDMA peer)")
    req = work.path("req.bin")
    deliver(b, pb, inbox, 1, [10], work.path("e-rep.len"), "--key", alpha, "--capture", req)
    check(sa_rc(sa(b, pb, "--replay", req)) == 3, "a replayed connect was not rejected")
    logged(mb, "replayed connect request (key alpha)")
    want_failures = failures + 3 + (1 if PLAIN else 0)
    wait_until(lambda: inbox_status(mb)["auth_failures"] >= want_failures, SAFETY_S,
               lambda: "auth_failures %s, want %d" % (inbox_status(mb), want_failures))
    print("rejected: a wrong key, no key, %sa replayed connect; auth_failures %d" % (
        "a plain librpma sender, " if PLAIN else "", inbox_status(mb)["auth_failures"]))

    # a bad tag mid-stream: the 20 before it are queued, nothing after it
    p = sa(b, pb, "--key", alpha, "--count", "60", "--sizes", "64,0,1000", "--bad-at", "20",
           "--expect", work.path("e-bad.len"))
    first20 = read_len_records(inbox, len_bytes(20, [64, 0, 1000]))
    check(sa_rc(p) == 0, "send-auth --bad-at exited %d" % p.returncode)
    logged(mb, "the tag of a SEND of 1016 bytes is wrong (mac): dropping the connection")
    check(first20 == open(work.path("e-bad.len"), "rb").read(),
          "the bad tag: not the 20 messages before it")
    check(inbox_status(mb)["waiting"] == 0, "more was queued: %s" % inbox_status(mb))
    # no proof of key: a connection that proves nothing in 5 s is dropped
    check(sa_rc(sa(b, pb, "--key", alpha, "--no-proof", "--count", "0")) == 0,
          "send-auth --no-proof")
    logged(mb, "no proof of key within 5000 ms: dropping it")
    print("a bad tag after 20 messages: 20 queued, none after; no proof: dropped")

    # a flood of hostile connects beside an honest sender
    stop = threading.Event()
    counts = [0, 0]
    bad = []

    def flood(i):
        while not stop.is_set():
            args = ["--replay", req] if i == 0 else ["--key", beta]
            rc = subprocess.run([SEND_AUTH, "--connect", "%s:%d" % (b, pb), "--quiet"] + args,
                                capture_output=True, timeout=SAFETY_S).returncode
            if rc != 3:
                bad.append((i, rc))
            counts[i] += 1
    threads = [threading.Thread(target=flood, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    try:
        wait_until(lambda: counts[0] + counts[1] >= 4, SAFETY_S, "the flood to start")
        before = counts[0] + counts[1]
        deliver(b, pb, inbox, 300, [64, 0, 1500], work.path("e-honest.len"), "--key", alpha,
                "--ack", "--marker", "HONEST")
        during = counts[0] + counts[1] - before
    finally:
        stop.set()
        for t in threads:
            t.join(SAFETY_S)
    check(not bad, "hostile connects not rejected: %s" % bad[:5])
    check(during > 0, "no hostile connect while the honest sender ran")
    print("flood: %d hostile connects rejected (%d while the honest sender's 300 arrived)" % (
        counts[0] + counts[1], during))

    # encrypt on the wire: the marker is absent with encrypt, present with
    # mac. One capture: encrypt first, then the mac control, whose marker
    # in the file is the event that the capture holds everything before it
    # (fslab.Capture, which also fails a capture that dropped a packet).
    # Not a count of packets: how many the handshake, proofs and
    # acknowledgements take varies (-c 30 once ended before mac's data).
    netdev = os.environ.get("LAB_NETDEV_B")
    if netdev and subprocess.run(["sh", "-c", "command -v tcpdump"],
                                 capture_output=True).returncode == 0:
        cap = Capture(work, netdev, work.path("wire.pcap"), name="wire.tcpdump")
        for mode, marker, extra in (("encrypt", "ENCMARKER", ["--encrypt"]),
                                    ("mac", "MACMARKER", [])):
            deliver(b, pb, inbox, 40, [300], work.path("e-%s.len" % mode), "--key", alpha,
                    "--marker", marker, *extra)
        wire, _ = cap.until(b"MACMARKER")
        check(b"ENCMARKER" not in wire, "encrypt: the marker is on the wire")
        print("on the wire: the marker shows with mac, not with encrypt")
    else:
        print("the wire: no tcpdump or LAB_NETDEV_B here, not checked")
    mb.unmount()

    # a key file in DIR that others may read refuses the mount, naming it
    loose = key_file(os.path.join(keys, "loose.key"), 0o644)
    bad_m = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, next_port()), "listen_keys": keys}},
                  name="loose")
    res = subprocess.run([os.environ["RPMAFS"], "-f", "--config", bad_m.config, bad_m.mnt],
                         capture_output=True, text=True, timeout=SAFETY_S)
    check(res.returncode == 2, "mount with a 0644 key in listen_keys: rc %d" % res.returncode)
    check("[rpmafs] listen_keys: %s: key file is readable or writable by group or others "
          "(mode 0644): chmod 600 %s" % (loose, loose) in res.stderr, "stderr: %s" % res.stderr)
    check(not os.path.ismount(bad_m.mnt), "mounted anyway")
    print("0644 key in listen_keys: rc %d, %s" % (res.returncode, res.stderr.strip()))


sys.exit(run("inbox_auth", body))
