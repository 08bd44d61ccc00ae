#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""fs-includes.py [--planted] FSDIR -- calls in fs/ go one way, down the folders.

fs/ is layered in folders (docs/design.md §2). A file may include a header
of its own folder or of a folder below its own, never one above or beside
it:

    main.c, mount.c           (fs/ itself, the top)
    fuse/    report/          the FUSE operations; the metrics file
    spool/   inbox/           messages out, messages in (side by side)
    link/                     the RDMA connection of a peer
    runtime/                  loop, workers, pool, limits, log

Fails (exit 1), naming file, line and header, when an include goes up or
sideways, when a folder is not in the order above, when a .c file other
than main.c and mount.c sits directly in fs/, when the modules include each
other in a cycle, or when a file is over MAX_LINES lines. A module is a .c
file and its header; a header with no .c of its own (clock.h, tree.h) counts
as its includer's for the cycle check.

--planted copies FSDIR, plants an include of mount.h in runtime/log.c and
checks that the copy fails: the check must be able to fail.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_LINES = 700
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# the folders, lowest first; folders on one level may not include each other
LEVELS = [('runtime',), ('link',), ('spool', 'inbox'), ('fuse', 'report'), ('.',)]
LEVEL = {folder: n for n, level in enumerate(LEVELS) for folder in level}
TOP_SOURCES = {'main.c', 'mount.c'}


def sources(fsdir):
    """every .c and .h under fsdir, as paths relative to it"""
    out = []
    for root, _, files in os.walk(fsdir):
        for f in files:
            if f.endswith(('.c', '.h')):
                out.append(os.path.relpath(os.path.join(root, f), fsdir))
    return sorted(out)


def folder_of(rel):
    d = os.path.dirname(rel)
    return d.split(os.sep)[0] if d else '.'


def resolve(rel, inc, known):
    """the fs/ file an include names, as the compiler finds it (own folder, then fs/)"""
    for cand in (os.path.normpath(os.path.join(os.path.dirname(rel), inc)), os.path.normpath(inc)):
        if cand in known:
            return cand
    return None  # not ours: common/, config/, rpma/, system headers


def check(fsdir):
    files = sources(fsdir)
    known = set(files)
    text = {f: open(os.path.join(fsdir, f), encoding='utf-8').read() for f in files}
    problems = []

    for f in files:
        n = text[f].count('\n')
        if n > MAX_LINES:
            problems.append(f'{fsdir}/{f}: {n} lines, over the limit of {MAX_LINES}')
        folder = folder_of(f)
        if folder not in LEVEL:
            problems.append(f'{fsdir}/{f}: folder {folder}/ has no place in the order '
                            f'(add it to LEVELS in {os.path.basename(__file__)})')
            continue
        if folder == '.' and f.endswith('.c') and f not in TOP_SOURCES:
            problems.append(f'{fsdir}/{f}: only {", ".join(sorted(TOP_SOURCES))} sit in fs/ itself')

    edges = {}  # file -> the fs/ files it includes
    for f in files:
        edges[f] = set()
        for m in INCLUDE.finditer(text[f]):
            inc = m.group(1)
            target = resolve(f, inc, known)
            if target is None:
                continue
            edges[f].add(target)
            mine, theirs = folder_of(f), folder_of(target)
            if mine not in LEVEL or theirs not in LEVEL or mine == theirs:
                continue
            if LEVEL[theirs] >= LEVEL[mine]:
                line = text[f].count('\n', 0, m.start()) + 1
                below = [d for d, lv in LEVEL.items() if lv < LEVEL[mine] and d != '.']
                where = 'fs/ itself' if theirs == '.' else theirs + '/'
                may = (f'{mine}/ may include only ' + ', '.join(d + '/' for d in sorted(below))
                       if below else f'{mine}/ may include no other folder of fs/')
                side = 'beside' if LEVEL[theirs] == LEVEL[mine] else 'above'
                problems.append(f'{fsdir}/{f}:{line}: includes "{inc}" ({where}), which is '
                                f'{side} {mine}/; {may}')

    # modules: a .c and its header; a header without a .c belongs to its includer
    modules = {f[:-2] for f in files if f.endswith('.c')}

    def reach(f, seen):
        out = set()
        for t in edges.get(f, ()):
            if t in seen:
                continue
            if t[:-2] in modules:
                out.add(t[:-2])
            else:
                out |= reach(t, seen | {t})
        return out

    graph = {m: set() for m in modules}
    for f in files:
        if f[:-2] in modules:
            graph[f[:-2]] |= reach(f, {f}) - {f[:-2]}

    state, stack = {}, []

    def visit(m):
        state[m] = 'open'
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 'open':
                problems.append('include cycle: ' + ' -> '.join(stack[stack.index(n):] + [n]))
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 'done'

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return problems, graph


def planted(fsdir):
    """the check fails on a copy of fsdir with an include that goes up"""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'fs')
        shutil.copytree(fsdir, copy)
        victim = os.path.join(copy, 'runtime', 'log.c')
        with open(victim, 'a', encoding='utf-8') as fp:
            fp.write('\n#include "../mount.h"\n')
        r = subprocess.run([sys.executable, __file__, copy], capture_output=True, text=True)
        want = 'runtime/log.c:'
        if r.returncode == 1 and want in r.stderr and 'above runtime/' in r.stderr:
            print('planted upward include caught:', r.stderr.strip().splitlines()[0])
            return 0
        print(f'planted upward include NOT caught (rc {r.returncode}):\n{r.stderr}', file=sys.stderr)
        return 1


def main(argv):
    if argv and argv[0] == '--planted':
        return planted(argv[1] if len(argv) > 1 else 'fs')
    fsdir = argv[0] if argv else 'fs'
    problems, graph = check(fsdir)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        return 1
    for m in sorted(graph):
        print(f'{m}: {" ".join(sorted(graph[m])) or "-"}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
