#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Each class of bad config (docs/design.md §4.4): exit status 2, a message naming the
file, the section and the key, and nothing mounted."""
import os
import subprocess
import sys
import tempfile

CASES = [
    ("unknown key", "[alpha]\naddress = 10.0.0.1\ncolour = blue\n", ["[alpha] colour", "unknown key"]),
    ("bad size", "[rpmafs]\nmax_message = 2MB\n[alpha]\naddress = 10.0.0.1\n",
     ["[rpmafs] max_message", "2MB"]),
    ("size over the limit", "[alpha]\naddress = 10.0.0.1\nmax_message = 2MiB\n",
     ["[alpha] max_message", "1MiB"]),
    ("invalid peer name", "[al.pha]\naddress = 10.0.0.1\n", ["[al.pha]", "peer name"]),
    ("duplicate peer", "[alpha]\naddress = 10.0.0.1\n[alpha]\naddress = 10.0.0.2\n",
     ["[alpha]", "line 1"]),
    ("missing address", "[alpha]\nport = 7204\n", ["[alpha]", "address"]),
    ("bad mode", "[alpha]\naddress = 10.0.0.1\nmode = later\n", ["[alpha] mode", "later"]),
    ("no peers", "[rpmafs]\nslots = 4\n", ["no peers"]),
    # every other class of error the loader knows
    ("port 0", "[alpha]\naddress = 10.0.0.1\nport = 0\n", ["[alpha] port", "out of range"]),
    ("port too big", "[alpha]\naddress = 10.0.0.1\nport = 70000\n", ["[alpha] port", "1 to 65535"]),
    ("port not a number", "[alpha]\naddress = 10.0.0.1\nport = 12ab\n", ["[alpha] port", "12ab"]),
    ("bad completion", "[alpha]\naddress = 10.0.0.1\ncompletion = maybe\n", ["[alpha] completion", "on_error"]),
    ("bad log_level", "[rpmafs]\nlog_level = loud\n[alpha]\naddress = 10.0.0.1\n", ["[rpmafs] log_level", "loud"]),
    ("slots 0", "[rpmafs]\nslots = 0\n[alpha]\naddress = 10.0.0.1\n", ["[rpmafs] slots", "out of range"]),
    ("slots too many", "[rpmafs]\nslots = 100000\n[alpha]\naddress = 10.0.0.1\n", ["[rpmafs] slots", "100000"]),
    ("send_timeout too big", "[alpha]\naddress = 10.0.0.1\nsend_timeout_ms = 99999999999\n",
     ["[alpha] send_timeout_ms", "out of range"]),
    ("connect_timeout 0", "[alpha]\naddress = 10.0.0.1\nconnect_timeout_ms = 0\n",
     ["[alpha] connect_timeout_ms", "out of range"]),
    ("max_message 0", "[alpha]\naddress = 10.0.0.1\nmax_message = 0\n", ["[alpha] max_message", "too small"]),
    ("bad type", "[alpha]\naddress = 10.0.0.1\ntype = tcp\n", ["[alpha] type", "tcp"]),
    ("bad address", "[alpha]\naddress = bad address!\n", ["[alpha] address", "bad address!"]),
    ("empty address", "[alpha]\naddress = \n", ["[alpha] address", "empty"]),
    ("key outside a section", "address = 10.0.0.1\n[alpha]\naddress = 10.0.0.1\n", [":1:", "outside any section"]),
    ("duplicate key", "[alpha]\naddress = 10.0.0.1\naddress = 10.0.0.2\n", ["[alpha] address", "duplicate key"]),
    ("global key in a peer", "[alpha]\naddress = 10.0.0.1\nslots = 4\n", ["[alpha] slots", "global"]),
    ("peer key in [rpmafs]", "[rpmafs]\naddress = 10.0.0.1\n[alpha]\naddress = 10.0.0.1\n",
     ["[rpmafs] address", "no default"]),
    ("same peer, other case", "[alpha]\naddress = 10.0.0.1\n[ALPHA]\naddress = 10.0.0.2\n",
     ["[ALPHA]", "duplicate section"]),
    ("unclosed section", "[alpha\naddress = 10.0.0.1\n", [":1:", "syntax error"]),
    ("NUL byte", "[alpha]\naddress = 10.0.0.1\x00x\n", ["NUL byte"]),
    ("metrics interval low", "[rpmafs]\nmetrics_interval_ms = 50\n[alpha]\naddress = 10.0.0.1\n",
     [":2:", "[rpmafs] metrics_interval_ms", "from 100 to 3600000"]),
    ("metrics interval text", "[rpmafs]\nmetrics_interval_ms = 10s\n[alpha]\naddress = 10.0.0.1\n",
     [":2:", "[rpmafs] metrics_interval_ms", "10s"]),
    ("metrics relative", "[rpmafs]\nmetrics = m.prom\n[alpha]\naddress = 10.0.0.1\n",
     [":2:", "[rpmafs] metrics", "absolute path"]),
    ("metrics in a peer", "[alpha]\naddress = 10.0.0.1\nmetrics = /tmp/m.prom\n",
     [":3:", "[alpha] metrics", "global"]),
]


def main():
    rpmafs = os.environ["RPMAFS"]
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        mnt = os.path.join(d, "mnt")
        os.mkdir(mnt)
        for what, text, needles in CASES:
            cfg = os.path.join(d, "bad.ini")
            with open(cfg, "w") as f:
                f.write(text)
            r = subprocess.run([rpmafs, "-f", "--config", cfg, mnt], capture_output=True, text=True,
                               timeout=20)
            problems = []
            if r.returncode != 2:
                problems.append("exit status %d, expected 2" % r.returncode)
            for n in [cfg] + needles:
                if n not in r.stderr:
                    problems.append("no %r in the message" % n)
            if os.path.ismount(mnt):
                problems.append("it mounted")
                subprocess.run(["fusermount3", "-u", mnt])
            print("%-20s %s" % (what, "ok" if not problems else "FAIL: " + "; ".join(problems)))
            if problems:
                print("    stderr: %s" % r.stderr.strip().replace("\n", "\n            "))
                failures += 1
        # a missing file is a config error too
        r = subprocess.run([rpmafs, "-f", "--config", os.path.join(d, "none.ini"), mnt],
                           capture_output=True, text=True, timeout=20)
        ok = r.returncode == 2 and "none.ini" in r.stderr
        print("%-20s %s" % ("missing file", "ok" if ok else "FAIL: %d %s" % (r.returncode, r.stderr)))
        failures += not ok
        # so is a directory where the file should be
        cfgdir = os.path.join(d, "dir.ini")
        os.mkdir(cfgdir)
        r = subprocess.run([rpmafs, "-f", "--config", cfgdir, mnt], capture_output=True, text=True, timeout=20)
        ok = r.returncode == 2 and "dir.ini" in r.stderr and not os.path.ismount(mnt)
        print("%-20s %s" % ("a directory", "ok" if ok else "FAIL: %d %s" % (r.returncode, r.stderr)))
        failures += not ok
    return 1 if failures else 0


sys.exit(main())
