#!/bin/sh
# Every committed fuzz corpus input through its target without libFuzzer
# (${B}/fuzz-replay/NAME, tests/fuzz/replay.c): an input that once made a target abort stays
# a regression test, on the plain build and under ASan (make test-asan).  Among them, the
# sequence inputs that took a run's stream past record number 2^62 - 2 and past offset
# 2^62 - 1 (protocol.md §4).
set -eu
b="${B:-build}"
for t in codec endpoint sequence; do
    out=$("$b/fuzz-replay/$t" tests/fuzz/corpus/$t/*) || { echo "fuzz-replay/$t failed: $out"; exit 1; }
    echo "$t: $out"
done
