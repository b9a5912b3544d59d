#!/bin/sh
# The mutation gate's list (tests/mutants/list) is checked by every make test, not only by
# make mutants: each entry's 'from' text is on exactly one line of its file, and each test
# its kill line names is there (tests/mutants/run.py --check).  A change that moved or
# doubled a line an entry names was found only at the next make mutants.  Then lists that
# must fail it: a 'from' no longer in its file, one on several lines, a test case or script
# that is not there; each is named in one line with its entry's line in the list.
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
gate() { python3 tests/mutants/run.py --check --list "$1" > "$work/out" 2>&1; }

gate tests/mutants/list || fail "the list has stale entries: $(cat "$work/out")"
grep -q "^mutants list: [1-9][0-9]* entries, 0 stale$" "$work/out" || fail "no summary line: $(cat "$work/out")"

# stale LINE_TEXT: a list of one entry, the first of the real list with its lines changed by
# the sed program $1; it must fail with a line that has $2.
stale() {
    awk 'BEGIN { RS = ""; ORS = "\n\n" } !/^#/ { print; exit }' tests/mutants/list | sed "$1" > "$work/list"
    if gate "$work/list"; then fail "a list whose entry was changed by '$1' passed: $(cat "$work/out")"; fi
    grep -q "^$work/list:1: .*$2" "$work/out" || fail "no line saying '$2' for '$1': $(cat "$work/out")"
    grep -q "1 entries, 1 stale" "$work/out" || fail "not counted stale: $(cat "$work/out")"
}
stale 's/^from: .*/from: a text found on no line of the file/' "'from' is on 0 lines, not 1"
stale 's/^from: .*/from: ;/' "'from' is on [0-9]* lines, not 1"
stale 's/^kill: .*/kill: test_properties\/no_such_case/' "test_properties has no case no_such_case"
stale 's/^kill: .*/kill: sh\/test_no_such_script/' "no test script tests/sh/test_no_such_script.sh"
stale 's/^file: .*/file: core\/no_such_file.c/' "no such file"
echo "ok: $(tail -1 "$work/out" | sed 's/^/last bad list: /'); the list: $(python3 tests/mutants/run.py --check | tail -1)"
