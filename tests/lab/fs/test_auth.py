#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""key = (issue 25, docs/design.md §11.2), the sender's side, against
rpma-recv --keys DIR: a mount with the key delivers the exact bytes of
echo, cat and dd writes and a 0-byte message (protect = mac), its
acknowledgements sealed and taken; a wrong key, or a receiver without keys,
delivers nothing and says so; a receiver in encrypt mode (--protect
encrypt) is taken by a protect = mac spool, which then encrypts and
delivers the same bytes; a key file of mode 0644 refuses the mount with its
path. protect = encrypt itself, the wire and the re-send: fs-auth-encrypt."""
import sys

from fslab import *


def body(work):
    _, b = need_lab()
    keys = work.path("keys")
    os.mkdir(keys)
    alpha = key_file(os.path.join(keys, "alpha.key"))
    beta = key_file(work.path("beta.key"))  # not the receiver's

    r = Receiver(work, b, args=["--keys", keys, "--max-message", "1MiB", "--slots", "16"],
                 name="recv-keys").start()
    wait_until(lambda: "--keys %s: 1 keys" % keys in open(r.log).read(), SAFETY_S,
               "rpma-recv to read its keys")
    spool = Spool(work, {"k": {"address": b, "port": r.port, "key": alpha},
                         "s": {"address": b, "port": r.port, "key": alpha, "mode": "sync"}}).mount()
    check(spool.status("k")["confirm"] == "receiver", "k: %s" % spool.status("k"))

    # echo, a 0-byte message, cat of a file, dd blocks (the largest write, 1020K, too)
    blob = os.urandom(200 * 1024)
    with open(work.path("blob"), "wb") as f:
        f.write(blob)
    big = os.urandom(1020 * 1024)
    with open(work.path("big"), "wb") as f:
        f.write(big)
    spool.sh("echo hello > k")
    spool.sh(": > k")
    spool.sh("cat %s > k" % work.path("blob"))
    spool.sh("dd if=%s of=k bs=4k count=3 status=none" % work.path("blob"))
    spool.sh("dd if=%s of=k bs=1020K status=none" % work.path("big"))
    want = [b"hello\n", b""]
    want += [blob[i:i + 512 * 1024] for i in range(0, len(blob), 512 * 1024)]
    want += [blob[i * 4096:(i + 1) * 4096] for i in range(3)]
    want += [big]
    st = spool.settled("k", acked=True)
    check(st["acked"] == len(want) and st["failed"] == 0 and st["bad_acks"] == 0,
          "k after the writes: %s" % st)
    # sync writes: each returns once rpma-recv wrote it out and a sealed ack said so
    for i in range(5):
        check(spool.write("s", b"sync%d" % i) == 0, "sync write %d" % i)
        want.append(b"sync%d" % i)
    check(spool.status("s")["acked"] == 5, "s: %s" % spool.status("s"))
    got = r.messages()
    print("delivered %d messages with the key, sizes %s" % (len(got), [len(m) for m in got]))
    check(sorted(got) == sorted(want), "delivered %d messages, sizes %s; want %d, sizes %s" % (
        len(got), [len(m) for m in got], len(want), [len(m) for m in want]))
    # each spool's own messages in order
    check([m for m in got if m.startswith(b"sync")] == [b"sync%d" % i for i in range(5)],
          "sync order")
    log = open(r.log).read()
    check("key=alpha" in log, "rpma-recv does not name the key")
    check("proof of key is wrong" not in log, "rpma-recv refused a proof")
    spool.unmount()

    # a wrong key: rejected at connect, nothing delivered
    before = len(r.messages())
    wrong = Spool(work, {"w": {"address": b, "port": r.port, "key": beta}},
                  name="wrong").mount(wait_connected=False)
    wait_until(lambda: "sender's key is not one of" in open(r.log).read(), SAFETY_S,
               "rpma-recv to reject the wrong key")
    wait_until(lambda: wrong.status("w").get("last_error", "") != "", SAFETY_S,
               "a last_error for the wrong key")
    st = wrong.status("w")
    check(st["state"] != "connected", "wrong key connected: %s" % st)
    check("rejected" in st["last_error"].lower(), "wrong key: %s" % st)
    print("wrong key: state %s, last_error %r" % (st["state"], st["last_error"]))
    check(len(r.messages()) == before, "the wrong key delivered something")
    wrong.unmount()

    # a receiver without keys: it refuses a request with one
    plain = Receiver(work, b, name="recv-plain").start()
    nk = Spool(work, {"p": {"address": b, "port": plain.port, "key": alpha}},
               name="nokeys").mount(wait_connected=False)
    wait_until(lambda: "sender offers a key, this receiver has none" in open(plain.log).read(),
               SAFETY_S, "rpma-recv without keys to reject a key")
    check(plain.messages() == [], "delivered without keys")
    nk.unmount()

    # protect = mac against a receiver in encrypt mode: taken, the connection encrypts
    # (docs/design.md §11.2; the wire and the re-send: fs-auth-encrypt)
    enc = Receiver(work, b, args=["--keys", keys, "--protect", "encrypt", "--max-message", "1MiB"],
                   name="recv-enc").start()
    es = Spool(work, {"e": {"address": b, "port": enc.port, "key": alpha}}, name="enc").mount()
    # logged once the proof has come, which may be a moment after the spool is connected
    wait_until(lambda: "key alpha, encrypt" in open(enc.log).read(), SAFETY_S,
               "rpma-recv --protect encrypt to log the connection as encrypt")
    es.sh("echo forced > e")
    es.sh("cat %s > e" % work.path("blob"))
    st = es.settled("e", acked=True)
    check(st["acked"] == 2 and st["failed"] == 0, "e: %s" % st)
    check(enc.messages() == [b"forced\n", blob], "delivered in encrypt mode: sizes %s" % (
        [len(m) for m in enc.messages()]))
    print("encrypt receiver, protect = mac: delivered %d messages" % len(enc.messages()))
    es.unmount()

    # a key file that others may read refuses the mount, naming the file
    loose = key_file(work.path("loose.key"), 0o644)
    bad = Spool(work, {"l": {"address": b, "port": r.port, "key": loose}}, name="loose")
    res = subprocess.run([os.environ["RPMAFS"], "-f", "--config", bad.config, bad.mnt],
                         capture_output=True, text=True, timeout=SAFETY_S)
    check(res.returncode == 2, "mount with a 0644 key: rc %d" % res.returncode)
    check("%s: key file is readable or writable by group or others (mode 0644): chmod 600 %s"
          % (loose, loose) in res.stderr and "[l] key:" in res.stderr,
          "stderr: %s" % res.stderr)
    check(not os.path.ismount(bad.mnt), "mounted anyway")
    print("0644 key: rc %d, %s" % (res.returncode, res.stderr.strip()))


sys.exit(run("auth", body))
