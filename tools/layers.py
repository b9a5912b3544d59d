#!/usr/bin/env python3
"""layers.py: check that objects call only downward, and never in a loop.

Usage: tools/layers.py [--root DIR] [--build DIR] [LAYERS]
  --root   the source tree (default: the current directory)
  --build  the build tree whose <dir>/*.o are read (default: $B or build)
  LAYERS   the file of allowed layers (default: ROOT/LAYERS; its format is in its comment)

From `nm -P -g` of each object of a section it draws the call graph: object A calls object B
when A leaves a symbol undefined that B defines.  It fails (exit 1, one line per fault) when
  - an object calls an object of a layer above its own (upward call),
  - objects call each other in a loop (a cycle of two or more objects, layers or not),
  - an object of the section's directory is placed in no layer, or a layer names a file whose
    source is gone.
Symbols defined in no object of the section (libc, other directories) are not edges: each
section is checked on its own.  Exit 0 prints one line per section checked.
"""
import os
import subprocess
import sys


def parse_layers(path):
    """[(directory, [(layer, [names])]) ...], layers from top to bottom, as written."""
    sections, current, lineno = [], None, 0
    with open(path) as f:
        for raw in f:
            lineno += 1
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                current = (line[1:-1].strip().rstrip("/"), [])
                sections.append(current)
                continue
            if current is None or ":" not in line:
                raise SystemExit("%s:%d: expected [directory] or 'layer: file ...'" % (path, lineno))
            layer, names = line.split(":", 1)
            current[1].append((layer.strip(), names.split()))
    return sections


def symbols(obj):
    """(defined, undefined) global symbols of one object."""
    out = subprocess.run(["nm", "-P", "-g", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        (undefined if parts[1] in ("U", "w", "v") else defined).add(parts[0])
    return defined, undefined


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
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
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def check_section(root, build, directory, layers):
    faults = []
    rank = {}
    for depth, (layer, names) in enumerate(layers):
        for name in names:
            if name in rank:
                faults.append("%s: %s placed twice" % (directory, name))
            rank[name] = (depth, layer)
            if not os.path.exists(os.path.join(root, directory, name + ".c")):
                faults.append("%s: layer %s names %s, which has no %s/%s.c" % (directory, layer, name, directory, name))
    objdir = os.path.join(build, directory)
    objects = sorted(n[:-2] for n in os.listdir(objdir) if n.endswith(".o")
                     and os.path.exists(os.path.join(root, directory, n[:-2] + ".c"))) if os.path.isdir(objdir) else []
    if not objects:
        faults.append("%s: no objects under %s" % (directory, objdir))
    syms = {name: symbols(os.path.join(objdir, name + ".o")) for name in objects}
    owner = {}
    for name in objects:
        for s in syms[name][0]:
            owner[s] = name
    graph = {name: set() for name in objects}
    why = {}
    for name in objects:
        for s in sorted(syms[name][1]):
            callee = owner.get(s)
            if callee and callee != name:
                graph[name].add(callee)
                why.setdefault((name, callee), s)
    for name in objects:
        if name not in rank:
            faults.append("%s: %s.o is in no layer" % (directory, name))
    for name in objects:
        for callee in sorted(graph[name]):
            if name in rank and callee in rank and rank[callee][0] < rank[name][0]:
                faults.append("%s: upward call %s (%s) -> %s (%s) through %s"
                              % (directory, name, rank[name][1], callee, rank[callee][1], why[(name, callee)]))
    for comp in cycles(graph):
        edges = ", ".join("%s->%s (%s)" % (a, b, why[(a, b)]) for a in comp for b in sorted(graph[a]) if b in comp)
        faults.append("%s: loop among %s: %s" % (directory, " ".join(comp), edges))
    calls = sum(len(v) for v in graph.values())
    return faults, "%s: %d objects in %d layers, %d calls between objects, all downward, no loop" % (
        directory, len(objects), len(layers), calls)


def main(argv):
    root, build, path, args = ".", os.environ.get("B") or "build", None, list(argv)
    while args:
        a = args.pop(0)
        if a == "--root" and args:
            root = args.pop(0)
        elif a == "--build" and args:
            build = args.pop(0)
        elif not a.startswith("-") and path is None:
            path = a
        else:
            raise SystemExit(__doc__)
    path = path or os.path.join(root, "LAYERS")
    sections = parse_layers(path)
    if not sections:
        print("layers: %s has no section" % path)
        return 1
    bad = 0
    for directory, layers in sections:
        faults, summary = check_section(root, build, directory, layers)
        for fault in faults:
            print("FAIL layers: " + fault)
        bad += len(faults)
        if not faults:
            print("layers: " + summary)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
