# SPDX-License-Identifier: BSD-3-Clause
"""framing_tools -- the tools users write files with, as they run them, and
the one message each must deliver to a file-framed spool (docs/design.md
§4.6, §4.8), shared by the lab tests against rpma-recv (test_framing.py)
and against a plain Debian-librpma receiver (test_framing_plain.py).

Each command runs in the mount directory and writes the spool file named
by its target; the sources live in the test's work directory."""
import json
import os
import tarfile

SRC_LEN = 300000


def sources(work):
    """Write the sources; return {name: bytes} of what the tools send."""
    out = {}
    src = bytes((i * 7 + i // 251) & 0xFF for i in range(SRC_LEN))
    with open(work.path("src"), "wb") as f:
        f.write(src)
    # rsync's quick check skips a file of the same size and mtime (st_size is
    # the bytes confirmed, st_mtime the last message): an old source never is
    os.utime(work.path("src"), (1000000, 1000000))
    out["src"] = src
    # a 55 KB document, as json.dump writes it (in Python's 8 KiB buffer)
    doc = {"k%d" % i: list(range(i % 50)) for i in range(600)}
    with open(work.path("doc.json"), "w") as f:
        json.dump(doc, f)
    out["doc"] = json.dumps(doc).encode()
    # a sparse file: data, a hole, data, a hole at the end (cp seeks over holes)
    with open(work.path("sparse"), "wb") as f:
        f.write(b"A" * 5000)
        f.seek(200000)
        f.write(b"B" * 7000)
        f.truncate(400000)
    out["sparse"] = open(work.path("sparse"), "rb").read()
    return out


def tar_of(work, member):
    """A tar archive holding src under the name member (tar -x --overwrite onto a spool)."""
    path = work.path("%s.tar" % member)
    with tarfile.open(path, "w") as tar:
        tar.add(work.path("src"), arcname=member)
    return path


def py(code):
    return "python3 -c '%s'" % code


def steps(work, data, t):
    """(what, shell command, the one message expected) for target spool t."""
    src, s = data["src"], work.path("src")
    return [
        ("cp", "cp %s %s" % (s, t), src),
        ("python json.dump", py("import json, sys; json.dump(json.load(open(\"%s\")), open(\"%s\", \"w\"))"
                                % (work.path("doc.json"), t)), data["doc"]),
        ("head -c 5000", "head -c 5000 %s > %s" % (s, t), src[:5000]),
        ("cp of a sparse file", "cp --sparse=always %s %s" % (work.path("sparse"), t),
         data["sparse"]),
        ("dd seek=", "dd if=%s of=%s bs=1000 seek=3 count=2 status=none" % (s, t),
         bytes(3000) + src[:2000]),
        ("rsync (draft + rename)", "rsync -I %s %s" % (s, t), src),
        ("python tempfile + os.replace",
         py("import os, tempfile; f = tempfile.NamedTemporaryFile(dir=\".\", delete=False); "
            "f.write(b\"named temporary\"); f.close(); os.replace(f.name, \"%s\")" % t),
         b"named temporary"),
        ("python mkstemp + os.replace",
         py("import os, tempfile; fd, p = tempfile.mkstemp(dir=\".\"); "
            "os.write(fd, b\"replaced\"); os.close(fd); os.replace(p, \"%s\")" % t),
         b"replaced"),
        ("cp -p", "cp -p %s %s" % (s, t), src),
        ("shutil.copy", py("import shutil; shutil.copy(\"%s\", \"%s\")" % (s, t)), src),
        ("rsync --inplace", "rsync -I --inplace %s %s" % (s, t), src),
        ("tar -x --overwrite", "tar -x --overwrite -f %s" % tar_of(work, t), src),
        # unlink the spool, then create it O_EXCL: the create opens it again (§4.7)
        ("install -m 644", "install -m 644 %s %s" % (s, t), src),
        ("mv from another file system", "cp %s %s.mv && mv %s.mv %s" % (s, s, s, t), src),
    ]
