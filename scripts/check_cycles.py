#!/usr/bin/env python3
"""check_cycles.py: fail when a file of src/ calls into a file that calls back into it (docs/architecture.md).

The graph is read from the object files, one per source file: an arrow a -> b for each global symbol of b
that a's code refers to (the relocations of a's .text sections, `objdump -r`), so it is the linker's view
and costs nothing to build. A table of function pointers (the registry's kernels in variants.c) is data,
not a call: the kernels are reached through it, as plug-ins, and the table's file calls none of them.
Usage:
    check_cycles.py OBJ...          print every cycle (as file -> file -> ...) and exit 1 if there is one
    check_cycles.py --graph OBJ...  print the arrows (a -> b: the symbols), then check
An object's name stands for its source: build/native/obj/cli/mech_cmd.o is cli/mech_cmd.c.
"""
import os
import subprocess
import sys


def symbols(obj):
    """(defined global symbols, symbols the code refers to) of one object file."""
    out = subprocess.run(['nm', '-g', '--defined-only', obj], check=True, capture_output=True, text=True).stdout
    defined = {parts[2] for parts in (line.split() for line in out.splitlines()) if len(parts) == 3}
    out = subprocess.run(['objdump', '-r', obj], check=True, capture_output=True, text=True).stdout
    used, in_text = set(), False
    for line in out.splitlines():
        if line.startswith('RELOCATION RECORDS FOR ['):
            in_text = line[len('RELOCATION RECORDS FOR ['):].startswith('.text')
            continue
        parts = line.split()
        if in_text and len(parts) == 3 and parts[1].startswith('R_'):
            used.add(parts[2].split('+')[0].split('-')[0])
    return defined, used


def source_name(obj, root):
    rel = os.path.relpath(obj, root) if root else os.path.basename(obj)
    return rel[:-2] + '.c' if rel.endswith('.o') else rel


def graph(objs):
    """{file: {file it calls: sorted symbols}} over the given objects (calls to libc etc. are left out)."""
    root = os.path.commonpath([os.path.dirname(os.path.abspath(o)) for o in objs]) if objs else ''
    names = {o: source_name(os.path.abspath(o), root) for o in objs}
    defs, undefs = {}, {}
    owner = {}
    for o in objs:
        defs[o], undefs[o] = symbols(o)
        for s in defs[o]:
            owner[s] = names[o]
    g = {names[o]: {} for o in objs}
    for o in objs:
        for s in sorted(undefs[o]):
            if s in owner and owner[s] != names[o]:
                g[names[o]].setdefault(owner[s], []).append(s)
    return g


def cycles(g):
    """The strongly connected components with more than one file (Tarjan), each with one cycle through it."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def shortest_path(g, comp, src, dst):
    """A shortest path src -> ... -> dst inside the component, as a list of files."""
    inside, prev, frontier = set(comp), {src: None}, [src]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(g[v]):
                if w in inside and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    path = [dst]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])
    return path[::-1]


def main(argv):
    show = '--graph' in argv
    objs = [a for a in argv if a != '--graph']
    if not objs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    g = graph(objs)
    if show:
        for a in sorted(g):
            for b in sorted(g[a]):
                print(f'{a} -> {b}: {", ".join(g[a][b])}')
    found = cycles(g)
    for comp in found:
        print(f'files calling each other: {", ".join(comp)}', file=sys.stderr)
        seen = set()
        for a in comp:  # a shortest cycle through each arrow inside the group, each cycle printed once
            for b in sorted(g[a]):
                if b not in comp:
                    continue
                path = [a] + shortest_path(g, comp, b, a)
                key = frozenset(zip(path, path[1:]))
                if key in seen:
                    continue
                seen.add(key)
                calls = '; '.join(f'{x} -> {y}: {", ".join(g[x][y])}' for x, y in zip(path, path[1:]))
                print(f'  cycle: {" -> ".join(path)} ({calls})', file=sys.stderr)
    if found:
        print(f'check_cycles: {len(found)} group(s) of files calling back into each other; docs/architecture.md '
              'says which way each arrow may go', file=sys.stderr)
        return 1
    print(f'check_cycles: {len(g)} files, {sum(len(v) for v in g.values())} arrows, no cycle')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
