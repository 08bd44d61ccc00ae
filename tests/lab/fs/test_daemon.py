#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A daemonized mount (no -f, as mount(8) runs rpmafs from fstab) behaves
like a foreground one (docs/design.md §4.5): with [rpmafs] listen its
inbox receives from a plain Debian-librpma sender, and its spool sends to
rpma-recv. The kernel refuses RDMA CM and verbs descriptors opened before
the fork to the forked daemon, so every RDMA resource is made after it.
An error in that set-up still reaches the terminal: a second mount on the
same listen port exits non-zero with the reason on stderr, nothing mounted.

With keys (issue 25, docs/design.md §11.2, §13.5), as an operator runs them:
a second daemonized mount has a peer with key = to rpma-recv --keys DIR
(echo, a 0-byte message and a 1020K dd block delivered byte for byte, acked
3 in its .status) and an inbox with listen_keys = DIR that receives from a
keyed foreground mount and from send-auth (byte for byte, last_sender
naming the key).
"""
import sys

from fslab import *

PLAIN = os.environ.get("PLAIN_SEND")
SEND_AUTH = os.environ.get("SEND_AUTH")


def daemon_pids(config):
    """The rpmafs processes serving config (from /proc: the daemon is not our child)."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0] == os.environ["RPMAFS"].encode() and config.encode() in argv:
            pids.append(int(pid))
    return pids


def daemonize(spool):
    """rpmafs --config CONFIG MNT, no -f: it returns once the daemon serves the mount."""
    return subprocess.run([os.environ["RPMAFS"], "--config", spool.config, spool.mnt],
                          capture_output=True, text=True, timeout=SAFETY_S)


def body(work):
    _, b = need_lab()
    if not PLAIN:
        print("skip: PLAIN_SEND is not built (no Debian librpma)")
        sys.exit(SKIP)
    recv = Receiver(work, b).start()
    port = next_port()
    spool = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, port), "inbox_slots": 8,
                                    "inbox_max_message": "4KiB"},
                         "alpha": {"address": b, "port": recv.port}}, name="daemon")
    r = daemonize(spool)
    check(r.returncode == 0, "rpmafs (daemonized) exited %d: %s" % (r.returncode, r.stderr))
    # the parent is released once the directory is mounted and served
    check(os.path.ismount(spool.mnt), "not mounted when rpmafs returned")
    pids = daemon_pids(spool.config)
    check(len(pids) == 1, "daemons serving %s: %s" % (spool.config, pids))

    # the inbox: a plain sender is accepted and its messages are read
    check(inbox_status(spool)["state"] == "listening", "inbox: %s" % inbox_status(spool))
    try:
        r = subprocess.run([PLAIN, b, str(port), "hello daemon", "", "bye"], capture_output=True,
                           text=True, timeout=SAFETY_S)
    except subprocess.TimeoutExpired:
        fail("plain-send did not finish within %ss: the daemon never accepted it (inbox: %s)" %
             (SAFETY_S, inbox_status(spool)))
    check(r.returncode == 0 and "3 sent" in r.stdout,
          "plain-send exited %d: %s%s (inbox: %s)" % (r.returncode, r.stdout, r.stderr,
                                                     inbox_status(spool)))
    wait_until(lambda: inbox_status(spool)["received"] == 3, SAFETY_S,
               lambda: "3 messages in the inbox (status %s)" % inbox_status(spool))
    with open(os.path.join(spool.mnt, "inbox"), "rb") as f:
        got = [os.read(f.fileno(), 65536) for _ in range(3)]
    check(got == [b"hello daemon\n", b"\n", b"bye\n"], "the inbox gave %r" % got)

    # the spool: messages reach rpma-recv
    spool.wait_state("alpha", "connected")
    for i in range(5):
        spool.sh("echo daemon %d > alpha" % i)
    st = spool.settled("alpha")
    check(st["completed"] == 5 and st["failed"] == 0, "alpha: %s" % st)

    # a second daemonized mount on the same listen port: its RDMA set-up (after
    # the fork) fails, and the terminal still hears why, with a non-zero exit
    other = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, port)},
                         "alpha": {"address": b, "port": recv.port}}, name="other")
    r = daemonize(other)
    check(r.returncode != 0 and "cannot listen on %s:%d" % (b, port) in r.stderr,
          "a second listener on the port: exit %d, stderr %r" % (r.returncode, r.stderr))
    refused = (r.returncode, r.stderr.strip())
    check(not os.path.ismount(other.mnt), "the failed mount is mounted")
    wait_until(lambda: not daemon_pids(other.config), SAFETY_S, "the failed daemon to exit")

    # unmounting ends the daemon, which drains and disconnects
    r = subprocess.run(["fusermount3", "-u", spool.mnt], capture_output=True, text=True,
                       timeout=SAFETY_S)
    check(r.returncode == 0, "fusermount3 -u: %s" % r.stderr)
    wait_until(lambda: not daemon_pids(spool.config), SAFETY_S, "the daemon to exit")
    recv.stop()
    check(recv.messages() == [b"daemon %d\n" % i for i in range(5)],
          "rpma-recv got %r" % recv.messages())
    print("plain: the inbox read 3 messages from plain-send, alpha delivered 5; a second "
          "listener: exit %d, %s" % refused)

    keyed(work, b)


def keyed(work, b):
    """The daemonized mount with keys: key = to rpma-recv --keys, listen_keys = DIR."""
    a, _ = need_lab()
    rkeys = work.path("recv-keys")  # rpma-recv's: the key of the daemon's peer
    os.mkdir(rkeys, 0o700)
    alpha = key_file(os.path.join(rkeys, "alpha.key"))
    ikeys = work.path("inbox-keys")  # the daemon's inbox's: its senders' keys
    os.mkdir(ikeys, 0o700)
    fg = key_file(os.path.join(ikeys, "fg.key"))
    sa = key_file(os.path.join(ikeys, "sa.key"))
    krecv = Receiver(work, b, args=["--keys", rkeys, "--max-message", "1MiB", "--slots", "16"],
                     name="recv-keys").start()
    wait_until(lambda: "--keys %s: 1 keys" % rkeys in open(krecv.log).read(), SAFETY_S,
               "rpma-recv to read its keys")
    port = next_port()
    spool = Spool(work, {"rpmafs": {"listen": "%s:%d" % (b, port), "listen_keys": ikeys,
                                    "inbox_format": "len", "inbox_slots": 16,
                                    "inbox_max_message": "1MiB"},
                         "alpha": {"address": b, "port": krecv.port, "key": alpha}},
                  name="daemon-keys")
    r = daemonize(spool)
    check(r.returncode == 0, "rpmafs (daemonized, keys) exited %d: %s" % (r.returncode, r.stderr))
    check(os.path.ismount(spool.mnt), "not mounted when rpmafs returned")
    check(len(daemon_pids(spool.config)) == 1, "daemons: %s" % daemon_pids(spool.config))

    # the spool: key = to rpma-recv --keys, byte for byte, every one acknowledged
    big = os.urandom(1020 * 1024)
    with open(work.path("big"), "wb") as f:
        f.write(big)
    spool.wait_state("alpha", "connected")
    check(spool.status("alpha")["confirm"] == "receiver", "alpha: %s" % spool.status("alpha"))
    spool.sh("echo hello keys > alpha")
    spool.sh(": > alpha")
    spool.sh("dd if=%s of=alpha bs=1020K status=none" % work.path("big"))
    want = [b"hello keys\n", b"", big]
    st = spool.settled("alpha", acked=True)
    check(st["acked"] == 3 and st["failed"] == 0 and st["bad_acks"] == 0, "alpha: %s" % st)
    got = krecv.messages()
    check(got == want, "rpma-recv --keys got sizes %s, want %s" % (
        [len(m) for m in got], [len(m) for m in want]))
    check("key=alpha" in open(krecv.log).read(), "rpma-recv does not name the key")
    print("daemon, key = to rpma-recv --keys: delivered sizes %s, acked %d" % (
        [len(m) for m in got], st["acked"]))

    # the inbox with listen_keys: a keyed foreground mount, mount to mount
    inbox = os.path.join(spool.mnt, "inbox")
    check(inbox_status(spool)["state"] == "listening", "inbox: %s" % inbox_status(spool))
    # close = return: a receiver-confirmed write to an inbox is acknowledged when it is read
    sender = Spool(work, {"d": {"address": b, "port": port, "key": fg, "close": "return"}},
                   name="fg").mount()
    sender.sh("echo to the daemon > d")
    sender.sh(": > d")
    sender.sh("dd if=%s of=d bs=1020K status=none" % work.path("big"))
    want = [b"to the daemon\n", b"", big]
    got = len_records(read_len_records(inbox, sum(4 + len(m) for m in want)))
    check(got == want, "the keyed inbox gave sizes %s, want %s" % (
        [len(m) for m in got], [len(m) for m in want]))
    st = sender.settled("d", acked=True)
    check(st["acked"] == 3 and st["failed"] == 0 and st["bad_acks"] == 0, "d: %s" % st)
    ist = inbox_status(spool)
    check(ist["last_sender"].startswith("fg@%s:" % a), "last_sender %r" % ist["last_sender"])
    print("daemon's inbox, listen_keys, from a keyed mount: sizes %s, acked %d, last_sender %s"
          % ([len(m) for m in got], st["acked"], ist["last_sender"]))
    sender.unmount()

    # ... and from send-auth, the project's test sender, mac and encrypt
    if SEND_AUTH:
        for mode, extra in (("mac", ["--ack"]), ("encrypt", ["--encrypt"])):
            expect = work.path("sa-%s.len" % mode)
            sizes = [0, 1, 100, 4096, 65536]
            p = subprocess.Popen([SEND_AUTH, "--connect", "%s:%d" % (b, port), "--key", sa,
                                  "--count", "25", "--sizes", ",".join(map(str, sizes)),
                                  "--expect", expect] + extra,
                                 stdout=subprocess.DEVNULL, stderr=open(work.path(
                                     "sa-%s.log" % mode), "w"))
            work.procs.append(p)
            data = read_len_records(inbox, sum(4 + sizes[k % len(sizes)] for k in range(25)))
            check(p.wait(SAFETY_S) == 0, "send-auth (%s) exited %d" % (mode, p.returncode))
            check(data == open(expect, "rb").read(), "send-auth (%s): not the bytes sent" % mode)
        ist = inbox_status(spool)
        check(ist["last_sender"].startswith("sa@%s:" % a), "last_sender %r" % ist["last_sender"])
        print("daemon's inbox from send-auth: 25 messages with mac (acknowledged), 25 with "
              "encrypt, byte for byte; received %d, auth_failures %d" % (
                  ist["received"], ist["auth_failures"]))
    else:
        print("no SEND_AUTH: the keyed inbox heard from the keyed mount only")
    check(inbox_status(spool)["auth_failures"] == 0, "inbox: %s" % inbox_status(spool))

    r = subprocess.run(["fusermount3", "-u", spool.mnt], capture_output=True, text=True,
                       timeout=SAFETY_S)
    check(r.returncode == 0, "fusermount3 -u: %s" % r.stderr)
    wait_until(lambda: not daemon_pids(spool.config), SAFETY_S, "the keyed daemon to exit")
    krecv.stop()


sys.exit(run("daemon", body))
