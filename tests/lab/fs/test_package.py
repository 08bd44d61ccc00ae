#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Debian package, run as its units say: the binaries come out of the
.deb (dpkg -x into a temporary root), rpma-recv@lab starts from the ExecStart
line of rpma-recv@.service with the arguments of the packaged
rpma-recv.conf.example (its address and port the lab's), rpmafs@lab from
rpmafs@.service's on the packaged rpmafs.ini.example (alpha at rpma-recv;
the other peers that are not null stay unconnected). Both say READY=1
and ping WATCHDOG=1 at half the units' WatchdogSec with a STATUS= line;
one message written to the spool is in rpma-recv's output directory and
counted in its STATUS=; ExecStop unmounts. Paths under /etc, /run and
/var/lib become the test's own; the processes run as root (the lab has no
user rpmafs). With keys (issue 25), as the examples' comments say: the
conf's RPMA_RECV_ARGS is its commented line with --keys /etc/rpma-recv/keys,
and alpha in the ini has its commented key = /etc/rpmafs/alpha.key, the
same 32 bytes, each key file 0600 and its user's. The .deb is the one
tools/check's package step leaves in <build>/package (RPMAFS_DEB_DIR):
without one, the test is skipped."""
import glob
import re
import shlex
import socket
import sys

from fslab import *


def unit(path):
    """[Service]'s keys of a unit file: key -> list of values"""
    keys, section = {}, None
    for line in open(path):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            k, _, v = line.partition("=")
            keys.setdefault(k, []).append(v)
    return keys


def command(line, env, paths):
    """an Exec line as systemd makes it a command: $VAR is its words, ${VAR} one word"""
    line = line.lstrip("-")
    for a, b in paths:
        line = line.replace(a, b)
    words = []
    for w in shlex.split(line):
        m = re.fullmatch(r"\$(\w+)", w)
        if m:
            words += env.get(m.group(1), "").split()
        else:
            words.append(re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), w))
    return words


def env_file(path):
    env = {}
    for line in open(path):
        line = line.strip()
        if line and line[0] not in "#;":
            k, _, v = line.partition("=")
            env[k.strip()] = v.strip()
    return env


def watchdog_usec(keys):
    m = re.fullmatch(r"(\d+)s", keys["WatchdogSec"][0])
    check(m, "WatchdogSec=%s: not in seconds" % keys["WatchdogSec"][0])
    return int(m.group(1)) * 1000000


class Notify:
    """the service manager's end of NOTIFY_SOCKET"""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(SAFETY_S)  # a safety net: the datagrams are the events

    def recv(self):
        return self.sock.recv(4096).decode()

    def until(self, pred, what, most=40):
        for _ in range(most):
            msg = self.recv()
            if pred(msg):
                return msg
        fail("%d notifications and none %s: last %r" % (most, what, msg))


def start(work, name, argv, keys, env, notify, cwd):
    env = dict(os.environ, **env, NOTIFY_SOCKET=notify.path,
               WATCHDOG_USEC=str(watchdog_usec(keys)))
    env.pop("WATCHDOG_PID", None)
    check(keys["Type"] == ["notify"], "%s: Type=%s" % (name, keys["Type"]))
    log = open(work.path(name + ".log"), "a")
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=log, stderr=log)
    work.procs.append(p)
    return p


def body(work):
    _, b = need_lab()
    need_fuse()
    debs = sorted(glob.glob(os.path.join(os.environ.get("RPMAFS_DEB_DIR", "/nonexistent"),
                                         "rpmafs_*.deb")))
    if not debs:
        print("skip: no rpmafs_*.deb in RPMAFS_DEB_DIR: tools/check's package step makes it")
        sys.exit(SKIP)
    root = work.path("root")
    subprocess.run(["dpkg", "-x", debs[-1], root], check=True)
    units = os.path.join(root, "lib/systemd/system")
    examples = os.path.join(root, "usr/share/doc/rpmafs/examples")
    etc, run, state = work.path("etc"), work.path("run"), work.path("state")
    for d in ("rpmafs", "rpma-recv"):
        os.makedirs(os.path.join(etc, d))
    paths = [("/usr/bin/", root + "/usr/bin/"), ("/etc/", etc + "/"), ("/run/", run + "/"),
             ("%S", state), ("%i", "lab")]
    port = next_port()

    # the key, in the two places the examples name, 0600 and the units' user's (root here)
    secret = os.urandom(32)
    os.makedirs(os.path.join(etc, "rpma-recv", "keys"), 0o700)
    for path in (os.path.join(etc, "rpma-recv", "keys", "alpha.key"),
                 os.path.join(etc, "rpmafs", "alpha.key")):
        with open(path, "wb") as f:
            f.write(secret)
        os.chmod(path, 0o600)

    # rpma-recv@lab, its arguments from the packaged example, the lab's address;
    # the commented line with --keys is the one in force
    conf = open(os.path.join(examples, "rpma-recv.conf.example")).read()
    keyed = re.search(r"^#\s*(RPMA_RECV_ARGS=.*--keys /etc/rpma-recv/keys.*)$", conf, re.M)
    check(keyed, "rpma-recv.conf.example has no commented RPMA_RECV_ARGS with --keys "
          "/etc/rpma-recv/keys:\n%s" % conf)
    check(re.search(r"owned by the unit's user, rpmafs.*\n#.*mode 0600", conf),
          "rpma-recv.conf.example does not say whose and what mode the key files are")
    conf = re.sub(r"^RPMA_RECV_ARGS=.*$", "# " + r"\g<0>", conf, flags=re.M)
    conf += keyed.group(1) + "\n"
    conf = re.sub(r"--listen \S+", "--listen %s:%d" % (b, port), conf)
    conf = conf.replace("/etc/", etc + "/")  # as the Exec lines' paths (the values are not)
    open(os.path.join(etc, "rpma-recv", "lab.conf"), "w").write(conf)
    rk = unit(os.path.join(units, "rpma-recv@.service"))
    renv = env_file(command(rk["EnvironmentFile"][0], {}, paths)[0])
    cwd = command(rk["WorkingDirectory"][0], {}, paths)[0]
    os.makedirs(cwd)
    rnote = Notify(work.path("recv.notify"))
    recv = start(work, "rpma-recv", command(rk["ExecStart"][0], renv, paths), rk, renv,
                 rnote, cwd)
    msg = rnote.recv()
    check(msg.startswith("READY=1\nSTATUS=listening on %s port %d: 0 connections" % (b, port)),
          "rpma-recv's first notification: %r" % msg)

    # rpmafs@lab on the packaged example config: alpha is our rpma-recv
    ini = open(os.path.join(examples, "rpmafs.ini.example")).read()
    ini = ini.replace("port = 7204", "port = %d" % port)
    ini = ini.replace("address = 192.168.77.2", "address = %s" % b)
    check(re.search(r"^# key = /etc/rpmafs/alpha\.key$", ini, re.M),
          "rpmafs.ini.example has no commented key = /etc/rpmafs/alpha.key")
    check(re.search(r"owned by the user the mount runs as \(rpmafs.*\n#.*mode 0600", ini),
          "rpmafs.ini.example does not say whose and what mode the key file is")
    ini = ini.replace("# key = /etc/rpmafs/alpha.key", "key = %s/rpmafs/alpha.key" % etc)
    open(os.path.join(etc, "rpmafs", "lab.ini"), "w").write(ini)
    # every section but [rpmafs] is a peer; alpha and the null ones connect
    sections = re.findall(r"^\[([^\]]+)\]", ini, re.M)
    peers = [x for x in sections if x.lower() != "rpmafs"]
    nulls = len(re.findall(r"^type\s*=\s*null", ini, re.M))
    check("alpha" in peers, "the example has no peer alpha: %r" % peers)
    up = "%d of %d peers connected" % (1 + nulls, len(peers))
    fk = unit(os.path.join(units, "rpmafs@.service"))
    fenv = dict(e.partition("=")[::2] for e in fk["Environment"])
    mnt = os.path.join(run, fk["RuntimeDirectory"][0].replace("%i", "lab"))
    os.makedirs(mnt)  # RuntimeDirectory=
    fnote = Notify(work.path("fs.notify"))
    fs = start(work, "rpmafs", command(fk["ExecStart"][0], fenv, paths), fk, fenv, fnote, "/")
    msg = fnote.recv()
    check(msg.startswith("READY=1\nSTATUS=mounted %s: %d peers" % (mnt, len(peers))),
          "rpmafs's first notification: %r" % msg)
    head = "WATCHDOG=1\nSTATUS=mounted %s: " % mnt
    fnote.until(lambda m: m.startswith(head + up), "says alpha is connected")

    with open(os.path.join(mnt, "alpha"), "wb") as f:
        f.write(b"hello from the package")
    fnote.until(lambda m: m.startswith(head + up + ", 1 messages sent"), "counts the message")
    rnote.until(lambda m: m.startswith("WATCHDOG=1\nSTATUS=listening on %s port %d: 1 connections, "
                                       "1 messages" % (b, port)), "counts the message")
    out = os.path.join(cwd, "messages")
    names = sorted(n for n in os.listdir(out) if not n.startswith("."))  # not the state file
    check(len(names) == 1, "rpma-recv's output: %r" % names)
    check(open(os.path.join(out, names[0]), "rb").read() == b"hello from the package",
          "the message written out")
    rlog = open(work.path("rpma-recv.log")).read()
    check("--keys %s/rpma-recv/keys: 1 keys" % etc in rlog and "key=alpha" in rlog,
          "rpma-recv@lab did not take alpha's key:\n%s" % rlog)
    print("rpma-recv@lab (%s) took 1 message from rpmafs@lab (alpha: key = %s/rpmafs/alpha.key)"
          % (" ".join(command(rk["ExecStart"][0], renv, paths)[1:]), etc))

    # systemctl stop: ExecStop, then the kill signal
    stop = command(fk["ExecStop"][0], fenv, paths)
    subprocess.run(stop, check=True, timeout=SAFETY_S)
    fnote.until(lambda m: m == "STOPPING=1", "is STOPPING=1")
    check(fs.wait(SAFETY_S) == 0, "rpmafs exit status")
    check(rk["KillSignal"] == ["SIGTERM"], "rpma-recv's KillSignal=%s" % rk["KillSignal"])
    recv.send_signal(signal.SIGTERM)
    rnote.until(lambda m: m == "STOPPING=1", "is STOPPING=1")
    check(recv.wait(SAFETY_S) == 0, "rpma-recv exit status")


sys.exit(run("package", body))
