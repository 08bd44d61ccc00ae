#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A daemonized mount (no -f, as mount(8) runs rpmafs from fstab) behaves
like a foreground one (docs/design.md §4.5): with [rpmafs] listen its
inbox receives from a plain Debian-librpma sender, and its spool sends to
rpma-recv. The kernel refuses RDMA CM and verbs descriptors opened before
the fork to the forked daemon, so every RDMA resource is made after it.
An error in that set-up still reaches the terminal: a second mount on the
same listen port exits non-zero with the reason on stderr, nothing mounted.
"""
import sys

from fslab import *

PLAIN = os.environ.get("PLAIN_SEND")


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


def inbox_status(spool):
    st = {}
    with open(os.path.join(spool.mnt, "inbox.status")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition(": ")
            st[k] = int(v) if v.isdigit() else v
    return st


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


sys.exit(run("daemon", body))
