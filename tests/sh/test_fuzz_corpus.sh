#!/bin/sh
# Every committed fuzz corpus input through its target without libFuzzer
# (${B}/fuzz-replay/NAME, tests/fuzz/replay.c): an input that once made a target abort stays
# a regression test, on the plain build and under ASan (make test-asan).  Among them, the
# sequence inputs that took a run's stream past record number 2^62 - 2 and past offset
# 2^62 - 1 (protocol.md §4).  Every corpus under tests/fuzz/corpus/ is replayed: one
# without a replay program fails the test.
set -eu
b="${B:-build}"
for d in tests/fuzz/corpus/*/; do
    t=$(basename "$d")
    [ -x "$b/fuzz-replay/$t" ] || { echo "corpus $t has no replay program $b/fuzz-replay/$t"; exit 1; }
    n=$(ls "$d" | wc -l)
    [ "$n" -gt 0 ] || { echo "corpus $t is empty"; exit 1; }
    out=$("$b/fuzz-replay/$t" tests/fuzz/corpus/$t/*) || { echo "fuzz-replay/$t failed: $out"; exit 1; }
    echo "$t: $out"
    [ "$out" = "$n inputs ran" ] || { echo "corpus $t: $n files, but: $out"; exit 1; }
done
