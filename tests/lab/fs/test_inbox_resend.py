#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A re-send of a message the inbox holds unread (docs/design.md §13.4).

A sender with a session (tests/lab/recv/send-session, as a receiver-
confirmed rpmafs spool sends) puts messages 1 and 2 into the inbox and
loses its connection before either is read. 1 is read. Its next connection
sends 1 and 2 again: neither is queued again (two duplicates); 1's re-send
is acknowledged, 2's is not while 2 is unread. The inbox is unmounted with
2 unread: the sender was never told 2 was delivered, so it sends 2 again to
the next mount, which delivers it. (Before, the re-send of 2 was
acknowledged at once, and the unmount lost a message its sender had been
told was delivered.)"""
import struct
import sys

from fslab import *

SEND_SESSION = os.environ.get("SEND_SESSION")
SESSION = "5e551e0000c0ffee"
SIZE = 64


def session_send(b, port, first, count, *opts):
    return subprocess.Popen([SEND_SESSION, "--connect", "%s:%d" % (b, port), "--session", SESSION,
                             "--first", str(first), "--count", str(count), "--size", str(SIZE)]
                            + list(opts), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def number(record):
    """the message number of a len record of a seq.h message (header: id 4, seq 8, size 4;
    seq is n - 1)"""
    check(record[:4] == struct.pack("<I", SIZE) and len(record) == 4 + SIZE,
          "a record of %d bytes, want one of %d: %r" % (len(record), SIZE, record[:8]))
    return struct.unpack_from("<Q", record, 4 + 4)[0] + 1


def read_one(m):
    """one record (inbox_format = len: one read takes all of a small one)"""
    return read_len_records(os.path.join(m.mnt, "inbox"), 4 + SIZE)


def body(work):
    _, b = need_lab()
    check(SEND_SESSION, "SEND_SESSION is not set (meson test sets it)")
    pb = next_port()
    inbox = {"rpmafs": {"listen": "%s:%d" % (b, pb), "inbox_slots": 16, "inbox_format": "len"}}
    mb = Spool(work, inbox, name="b").mount(wait_connected=False)

    # 1 and 2 arrive; the connection ends before the receiver confirms either
    p = session_send(b, pb, 1, 2, "--no-wait")
    _, err = p.communicate(timeout=SAFETY_S)
    check(p.returncode == 0, "send-session --no-wait: %d %s" % (p.returncode, err))
    wait_until(lambda: inbox_status(mb)["waiting"] == 2 and inbox_status(mb)["connections"] == 0,
               SAFETY_S, lambda: "1 and 2 queued, the connection gone: %s" % inbox_status(mb))
    check(number(read_one(mb)) == 1, "the first record is message 1")

    # the next connection sends both again: 1 was read, 2 was not
    p = session_send(b, pb, 1, 2)
    work.procs.append(p)
    st = wait_until(lambda: (lambda s: s if s["duplicates"] == 2 else None)(inbox_status(mb)),
                    SAFETY_S, lambda: "two duplicates: %s" % inbox_status(mb))
    check(st["received"] == 2 and st["waiting"] == 1, "queued again: %s" % st)
    check(mb.unmount() == 0, "unmount of the inbox with 2 unread")
    _, err = p.communicate(timeout=SAFETY_S)
    # not told that 2 was delivered: the connection ended with 1 acknowledged
    check(p.returncode == 4 and "acknowledged through 1\n" in err,
          "send-session against the unmounted inbox: exit %d, %r" % (p.returncode, err))
    print("re-send of an unread message: not acknowledged; %s" % err.strip().replace("\n", "; "))

    # what was not acknowledged goes to the next receiver, and is delivered
    mb2 = Spool(work, inbox, name="b2").mount(wait_connected=False)
    p = session_send(b, pb, 2, 1)
    work.procs.append(p)
    wait_until(lambda: inbox_status(mb2)["waiting"] == 1, SAFETY_S, lambda: inbox_status(mb2))
    check(number(read_one(mb2)) == 2, "the next mount's record is message 2")
    # acknowledged once read
    _, err = p.communicate(timeout=SAFETY_S)
    check(p.returncode == 0, "the re-send of 2 to the next mount: %d %r" % (p.returncode, err))
    check(mb2.unmount() == 0, "unmount of the next inbox")


sys.exit(run("inbox-resend", body))
