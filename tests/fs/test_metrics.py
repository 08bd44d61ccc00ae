#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""[rpmafs] metrics: the Prometheus text file for node_exporter's textfile
collector, parsed with prometheus_client's parser. It follows the spools'
counters every metrics_interval_ms, is written once more at unmount, is
never seen half written, and a directory that is missing is said once in
the log and written to once it comes. Null peers."""
import sys

import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab", "fs"))
from fslab import *  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

COUNTERS = ["rpmafs_messages_posted", "rpmafs_messages_completed", "rpmafs_messages_failed",
            "rpmafs_messages_refused", "rpmafs_bytes_posted", "rpmafs_bytes_confirmed",
            "rpmafs_reconnects", "rpmafs_resent", "rpmafs_acked", "rpmafs_bad_acks",
            "rpmafs_payload_copies", "rpmafs_small_copies"]
GAUGES = ["rpmafs_in_flight", "rpmafs_pending", "rpmafs_unacked", "rpmafs_open_handles",
          "rpmafs_peer_connected"]


def parse(path):
    """{family: (type, help, {(sample name, peer): value})}, or None when there is no file"""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    check(text.endswith("\n"), "the file does not end in a line break: %r" % text[-80:])
    out = {}
    for fam in text_string_to_metric_families(text):
        out[fam.name] = (fam.type, fam.documentation,
                         {(s.name, s.labels.get("peer")): s.value for s in fam.samples})
    return out


def value(m, family, peer, sample=None):
    if m is None or family not in m:
        return None
    return m[family][2].get((sample or family, peer))


def check_shape(m, peers):
    for name in COUNTERS:
        check(name in m, "no %s family in %s" % (name, sorted(m)))
        typ, doc, samples = m[name]
        check(typ == "counter", "%s is a %s" % (name, typ))
        check(doc, "%s has no HELP" % name)
        check(sorted(p for _, p in samples) == sorted(peers), "%s: %s" % (name, samples))
        check(all(s == name + "_total" for s, _ in samples), "%s: %s" % (name, samples))
    for name in GAUGES:
        check(name in m and m[name][0] == "gauge", "%s: %s" % (name, m.get(name),))
        check(sorted(p for _, p in m[name][2]) == sorted(peers), "%s: %s" % (name, m[name]))
    check(not any(k.startswith("rpmafs_inbox") for k in m), "inbox metrics without listen")
    # the mount's small slots: one sample each, no peer label (one pool)
    for name in ("rpmafs_small_slots", "rpmafs_small_slots_free"):
        check(name in m and m[name][0] == "gauge", "%s: %s" % (name, m.get(name),))
        check(list(m[name][2]) == [(name, None)], "%s: %s" % (name, m[name]))
    check(m["rpmafs_small_slots"][2][("rpmafs_small_slots", None)] == 256,
          "small slots: %s" % (m["rpmafs_small_slots"],))


def body(work):
    need_fuse()
    mdir = work.path("textfile")
    os.mkdir(mdir)
    path = os.path.join(mdir, "rpmafs.prom")

    # every 100 ms: the file follows the counters while mounted
    spool = Spool(work, {
        "rpmafs": {"slots": 4, "metrics": path, "metrics_interval_ms": 100},
        "alpha": {"type": "null"},
        "beta": {"type": "null", "max_message": 100},
    }).mount()
    m = wait_until(lambda: (lambda m: m if value(m, "rpmafs_peer_connected", "alpha") == 1 and
                            value(m, "rpmafs_peer_connected", "beta") == 1 else None)(parse(path)),
                   SAFETY_S, lambda: "both peers connected in the metrics: %s" % parse(path))
    check_shape(m, ["alpha", "beta"])
    check(value(m, "rpmafs_messages_posted", "alpha", "rpmafs_messages_posted_total") == 0,
          "alpha posted before any write: %s" % (m["rpmafs_messages_posted"],))
    for i in range(3):
        check(spool.write("alpha", b"hello") == 0, "a write to alpha failed")
    check(spool.write("beta", b"x" * 10) == 0, "a write to beta failed")
    check(spool.write("beta", b"x" * 101) == errno.EMSGSIZE, "101 bytes to beta (max 100)")
    st_alpha, st_beta = spool.settled("alpha"), spool.settled("beta")

    def shows_them():
        m = parse(path)
        got = (value(m, "rpmafs_messages_completed", "alpha", "rpmafs_messages_completed_total"),
               value(m, "rpmafs_messages_completed", "beta", "rpmafs_messages_completed_total"))
        return m if got == (3, 1) else None
    m = wait_until(shows_them, SAFETY_S, lambda: "the writes in the metrics: %s" % parse(path))
    check_shape(m, ["alpha", "beta"])
    want = {("rpmafs_messages_posted", "alpha"): 3, ("rpmafs_bytes_posted", "alpha"): 15,
            ("rpmafs_bytes_confirmed", "alpha"): 15, ("rpmafs_messages_failed", "alpha"): 0,
            ("rpmafs_messages_posted", "beta"): 1, ("rpmafs_bytes_posted", "beta"): 10,
            ("rpmafs_messages_refused", "beta"): st_beta["refused"]}
    for (fam, peer), n in want.items():
        got = value(m, fam, peer, fam + "_total")
        check(got == n, "%s{peer=%s} = %s, expected %s" % (fam, peer, got, n))
    check(st_alpha["completed"] == 3, "alpha.status: %s" % st_alpha)
    check(value(m, "rpmafs_in_flight", "alpha") == 0, "in flight: %s" % (m["rpmafs_in_flight"],))
    check(spool.unmount() == 0, "rpmafs exit status")
    check(os.listdir(mdir) == ["rpmafs.prom"], "left in the directory: %s" % os.listdir(mdir))
    m = parse(path)
    check_shape(m, ["alpha", "beta"])

    # an hour apart: the first file at the start, then only the one at unmount
    os.unlink(path)
    spool = Spool(work, {
        "rpmafs": {"slots": 4, "metrics": path, "metrics_interval_ms": 3600000},
        "gamma": {"type": "null"},
    }, name="spool2").mount()
    m = wait_until(lambda: parse(path), SAFETY_S, "the first metrics file")
    check(value(m, "rpmafs_messages_completed", "gamma", "rpmafs_messages_completed_total") == 0,
          "the first file: %s" % (m,))
    for i in range(4):
        check(spool.write("gamma", b"12345678") == 0, "a write to gamma failed")
    spool.settled("gamma")
    check(spool.unmount() == 0, "rpmafs exit status")
    m = parse(path)
    check_shape(m, ["gamma"])
    check(value(m, "rpmafs_messages_completed", "gamma", "rpmafs_messages_completed_total") == 4,
          "the file at unmount: %s" % (m["rpmafs_messages_completed"],))
    check(value(m, "rpmafs_bytes_confirmed", "gamma", "rpmafs_bytes_confirmed_total") == 32,
          "the file at unmount: %s" % (m["rpmafs_bytes_confirmed"],))
    check(value(m, "rpmafs_peer_connected", "gamma") == 0,
          "connected after unmount: %s" % (m["rpmafs_peer_connected"],))
    check(os.listdir(mdir) == ["rpmafs.prom"], "left in the directory: %s" % os.listdir(mdir))

    # a directory that is not there: said once, the mount goes on, then written
    gone = work.path("later")
    later = os.path.join(gone, "rpmafs.prom")
    spool = Spool(work, {
        "rpmafs": {"slots": 4, "metrics": later, "metrics_interval_ms": 100},
        "delta": {"type": "null"},
    }, name="spool3").mount()

    def log():
        with open(spool.log) as f:
            return f.read()
    wait_until(lambda: "metrics: cannot create %s.tmp" % later in log(), SAFETY_S,
               lambda: "the write error in the log: %s" % log())
    check(spool.write("delta", b"still") == 0, "a write with the metrics failing")
    os.mkdir(gone)
    wait_until(lambda: parse(later), SAFETY_S, "the metrics once the directory is there")
    wait_until(lambda: "metrics: %s written again" % later in log(), SAFETY_S,
               lambda: "the recovery in the log: %s" % log())
    check(log().count("cannot create %s.tmp" % later) == 1, "said more than once: %s" % log())
    check(spool.unmount() == 0, "rpmafs exit status")
    check(value(parse(later), "rpmafs_messages_completed", "delta",
                "rpmafs_messages_completed_total") == 1, "delta: %s" % parse(later))


sys.exit(run("metrics", body))
