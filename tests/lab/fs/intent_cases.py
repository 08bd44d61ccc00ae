# SPDX-License-Identifier: BSD-3-Clause
"""intent_cases -- the commands a user may run against a spool file and the
number of 0-byte messages each must send (docs/design.md §4.1), shared by
the null-peer test (tests/fs/test_intent.py) and the lab test
(tests/lab/fs/test_intent.py). Each runs in the mount directory on the
spool file `alpha`."""


def py(code):
    return "python3 -c '%s'" % code


# (what, shell command run in the mount, messages it sends, exit status zero?)
CASES = [
    ("': > f'", ": > alpha", 1, True),
    ("printf '' > f", "printf '' > alpha", 1, True),
    ("truncate -s 0 f", "truncate -s 0 alpha", 1, True),
    ("exec 3>f (O_TRUNC: an intent, documented)", "exec 3>alpha; exec 3>&-", 1, True),
    ("echo hi > f", "echo hi > alpha", 1, True),
    ("echo hi >> f", "echo hi >> alpha", 1, True),
    (">> f with nothing written", ": >> alpha", 0, True),
    ("exec 3>>f, look, close", "exec 3>>alpha; ls -l /proc/$$/fd/3 >/dev/null; exec 3>&-", 0, True),
    ("( flock 9; ... ) 9>>f", "( flock 9; true ) 9>>alpha", 0, True),
    ("touch f", "touch alpha", 0, True),
    ("truncate -s 10 f (EPERM)", "truncate -s 10 alpha", 0, False),
    ("dd seek=1 (ftruncate EPERM)", "dd if=/dev/null of=alpha bs=1 seek=1 status=none", 0, False),
    ("sync -f f", "sync -f alpha", 0, None),
    ("os.pwrite (ESPIPE)",
     py("import os\nfd = os.open(\"alpha\", os.O_WRONLY)\ntry: os.pwrite(fd, b\"x\", 5)\n"
        "except OSError as e: print(e)\nos.close(fd)"), 0, True),
    ("mmap (no shared writable mapping)",
     py("import os, mmap\nfd = os.open(\"alpha\", os.O_WRONLY)\ntry: mmap.mmap(fd, 1)\n"
        "except (OSError, ValueError) as e: print(e)\nos.close(fd)"), 0, True),
    ("copy_file_range",
     py("import os\nsrc = os.open(\"/etc/hostname\", os.O_RDONLY)\nfd = os.open(\"alpha\", os.O_WRONLY)\n"
        "try: os.copy_file_range(src, fd, 4)\nexcept OSError as e: print(e)\nos.close(fd)"), None, True),
]
