#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""fs-includes.py FSDIR -- calls in fs/ go one way, and files stay focused.

Fails (exit 1) when the fs/ modules include each other in a cycle, or when a
file is over MAX_LINES lines. A module is a .c file and its header; a header
with no .c of its own (clock.h, msg.h's kind) counts as its includer's: its
own includes are followed as if the includer wrote them.
"""
import os
import re
import sys

MAX_LINES = 700
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(fsdir):
    files = sorted(f for f in os.listdir(fsdir) if f.endswith(('.c', '.h')))
    text = {f: open(os.path.join(fsdir, f), encoding='utf-8').read() for f in files}
    modules = {f[:-2] for f in files if f.endswith('.c')}
    problems = []

    for f in files:
        n = text[f].count('\n')
        if n > MAX_LINES:
            problems.append(f'{fsdir}/{f}: {n} lines, over the limit of {MAX_LINES}')

    def includes(f, seen):
        """the fs modules f reaches, through headers that have no .c"""
        out = set()
        for inc in INCLUDE.findall(text.get(f, '')):
            if inc not in text or inc in seen:
                continue  # not ours (config.h, pdata.h, librpma.h), or already followed
            mod = inc[:-2]
            if mod in modules:
                out.add(mod)
            else:
                out |= includes(inc, seen | {inc})
        return out

    graph = {m: set() for m in modules}
    for f in files:
        mod = f[:-2]
        if mod in modules:
            graph[mod] |= includes(f, {f}) - {mod}

    # depth-first search for a back edge
    state, stack = {}, []

    def visit(m):
        state[m] = 'open'
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 'open':
                cycle = stack[stack.index(n):] + [n]
                problems.append('include cycle: ' + ' -> '.join(cycle))
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 'done'

    for m in sorted(graph):
        if m not in state:
            visit(m)

    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        for m in sorted(graph):
            print(f'{m}: {" ".join(sorted(graph[m])) or "-"}')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else 'fs'))
