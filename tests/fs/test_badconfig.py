#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Each class of bad config (SPEC 4.4): exit status 2, a message naming the
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
    return 1 if failures else 0


sys.exit(main())
