#!/usr/bin/env python3
"""tests/mutants/run.py [--files F...] [--all] [--list FILE] [--jobs N] [--check]: the mutation gate.

Each entry of tests/mutants/list breaks one property with a one-line change; the tests it
names must notice.  For every entry this applies the change to a copy of the tree (the
work tree is never touched: a copy under a temporary directory, removed at the end, on
failure and on interrupt), rebuilds what the named tests need, runs only those tests, and
counts the mutation killed when at least one of them fails (a case that ends skipped, exit
77, does not kill it; one that runs past its time limit does).  The last line is
"N passed, N failed": a survivor, or an entry whose line is no longer in its file (once
exactly), is a failure.

--files F...: only the entries whose file, or whose tests' sources, are among F (what a
commit touched); --all overrides it.

--check: mutates and runs nothing, in a second: every entry's 'from' is on exactly one line
of its file, and every test on its kill line is there (a script, or a case its built program
lists: B=build unless set).  A failure is one line per entry; exit 1.  make test runs it
(tests/sh/test_mutants_list.sh), so a change that moves a line an entry names is seen at
once, not at the next make mutants.

An entry (blank lines part them, '#' starts a comment line):
    file:   core/receiver.c
    from:   text of exactly one line of that file (a part of it)
    to:     what replaces that text
    breaks: the property the change breaks, in words
    kill:   test_program/case sh/test_script ...   (one or more; any failing kills it)
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TEST_SECONDS_MOST = 600  # a killing test that runs longer counts as failed (a hang)


def parse(path):
    entries, cur = [], {}
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        text = line.rstrip("\n")
        if text.startswith("#"):
            continue
        if not text.strip():
            if cur:
                entries.append(cur)
            cur = {}
            continue
        key, sep, value = text.partition(":")
        if not sep or key not in ("file", "from", "to", "breaks", "kill"):
            sys.exit(f"{path}:{n}: not 'file|from|to|breaks|kill: ...': {text}")
        cur.setdefault("line", n)
        cur[key] = value[1:] if value.startswith(" ") else value
    if cur:
        entries.append(cur)
    for e in entries:
        missing = [k for k in ("file", "from", "to", "breaks", "kill") if k not in e]
        if missing:
            sys.exit(f"{path}:{e['line']}: entry without {', '.join(missing)}")
        e["from"] = e["from"].strip()
        e["to"] = e["to"].strip()
        e["kill"] = e["kill"].split()
    return entries


def test_source(kill):
    if kill.startswith("sh/"):
        return "tests/" + kill + ".sh"
    return "tests/unit/" + kill.split("/")[0] + ".c"


def build_targets(kills):
    """What the kill tests need: a test program, or for a shell test everything make builds."""
    targets = set()
    for k in kills:
        targets.add("all" if k.startswith("sh/") else "build/tests/" + k.split("/")[0])
    return sorted(targets)


def hits_of(top, e):
    """The line indexes of e's file that hold its 'from' text (None: no such file)."""
    path = os.path.join(top, e["file"])
    if not os.path.isfile(path):
        return None
    lines = open(path, encoding="utf-8").read().split("\n")
    return [i for i, l in enumerate(lines) if e["from"] in l]


def cases_of(top, prog, listed):
    """The cases test program `prog` lists (its build under $B), remembered in `listed`."""
    if prog not in listed:
        exe = os.path.join(top, os.environ.get("B", "build"), "tests", prog)
        r = subprocess.run([exe, "--list"], capture_output=True) if os.access(exe, os.X_OK) else None
        listed[prog] = set(r.stdout.decode().split()) if r is not None and r.returncode == 0 else None
    return listed[prog]


def check(entries, list_path):
    """--check: each entry's 'from' once in its file, each kill test there; 0 or 1."""
    bad, listed = 0, {}
    for e in entries:
        where = f"{list_path}:{e['line']}: {e['file']}"
        hits = hits_of(TOP, e)
        whys = []
        if hits is None:
            whys.append("no such file")
        elif len(hits) != 1:
            whys.append(f"'from' is on {len(hits)} lines, not 1: {e['from']}")
        for k in e["kill"]:
            if k.startswith("sh/"):
                if not os.path.isfile(os.path.join(TOP, test_source(k))):
                    whys.append(f"no test script {test_source(k)}")
                continue
            prog, _, case = k.partition("/")
            cases = cases_of(TOP, prog, listed)
            if cases is None:
                whys.append(f"no test program {prog} (make it first)")
            elif case not in cases:
                whys.append(f"{prog} has no case {case}")
        for why in whys:
            print(f"{where}: {why}")
        bad += len(whys) > 0
    print(f"mutants list: {len(entries)} entries, {bad} stale")
    return 1 if bad else 0


def copy_tree(dest):
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=TOP,
                           check=True, capture_output=True).stdout
    names = [f for f in files.decode().split("\0") if f and os.path.lexists(os.path.join(TOP, f))]
    for f in names:
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(os.path.join(TOP, f), os.path.join(dest, f), follow_symlinks=False)
    if os.path.isdir(os.path.join(TOP, "build")):  # what is up to date stays so (make checks times)
        shutil.copytree(os.path.join(TOP, "build"), os.path.join(dest, "build"), symlinks=True)


def run_kill(tree, kill):
    env = dict(os.environ, B="build")
    env.pop("CI", None)
    if kill.startswith("sh/"):
        cmd = ["sh", "tests/" + kill + ".sh"]
    else:
        prog, case = kill.split("/", 1)
        cmd = ["build/tests/" + prog, case]
    try:
        r = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, timeout=TEST_SECONDS_MOST)
    except subprocess.TimeoutExpired:
        return "timed out"
    if r.returncode == 0:
        return None
    if r.returncode == 77:
        return None  # skipped: it proved nothing
    return f"exit {r.returncode}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", default=os.path.join(TOP, "tests", "mutants", "list"))
    ap.add_argument("--files", nargs="*")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    entries = parse(a.list)
    if a.check:
        shown = os.path.relpath(a.list, TOP) if os.path.abspath(a.list).startswith(TOP + os.sep) else a.list
        return check(entries, shown)
    if a.files is not None and not a.all:
        touched = set(a.files)
        entries = [e for e in entries if e["file"] in touched or any(test_source(k) in touched for k in e["kill"])]
    print(f"mutants: {len(entries)} entries")
    tree = tempfile.mkdtemp(prefix="pl-mutants.")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    passed = failed = 0
    start = time.time()
    try:
        copy_tree(tree)
        pre = subprocess.run(["make", "-j" + a.jobs] + sorted({t for e in entries for t in build_targets(e["kill"])}),
                             cwd=tree, capture_output=True)
        if pre.returncode != 0:
            print(pre.stdout.decode()[-3000:] + pre.stderr.decode()[-3000:])
            print("the unmutated tree does not build")
            print(f"0 passed, {len(entries) or 1} failed")
            return 1
        for e in entries:
            t0 = time.time()
            path = os.path.join(tree, e["file"])
            original = open(path, encoding="utf-8").read()
            lines = original.split("\n")
            hits = hits_of(tree, e) or []
            label = f"{e['file']}:{hits[0] + 1 if len(hits) == 1 else '?'} ({e['breaks']})"
            if len(hits) != 1:
                failed += 1
                print(f"FAIL {label}: 'from' is on {len(hits)} lines of {e['file']}, not 1")
                continue
            i = hits[0]
            lines[i] = lines[i].replace(e["from"], e["to"], 1)
            try:
                open(path, "w", encoding="utf-8").write("\n".join(lines))
                b = subprocess.run(["make", "-j" + a.jobs] + build_targets(e["kill"]), cwd=tree, capture_output=True)
                if b.returncode != 0:
                    verdict = "build failed"
                else:
                    verdict = None
                    for k in e["kill"]:
                        why = run_kill(tree, k)
                        if why:
                            verdict = f"killed by {k} ({why})"
                            break
            finally:
                open(path, "w", encoding="utf-8").write(original)
                os.utime(path)  # newer than the mutated build: the next make rebuilds it
            secs = time.time() - t0
            if verdict and verdict != "build failed":
                passed += 1
                print(f"PASS {label}: {verdict} ({secs:.0f} s)")
            else:
                failed += 1
                print(f"FAIL {label}: {verdict or 'survived ' + ' '.join(e['kill'])} ({secs:.0f} s)")
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    print(f"mutants: {time.time() - start:.0f} s")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
