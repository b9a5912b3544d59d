#!/bin/sh
# Runs every fuzz target of B (build/fuzz_*) in turn, one at a time, with the libFuzzer
# options given (make fuzz: -max_total_time=S; make fuzz-long: -runs=N).
# Usage: tests/fuzz/run.sh B OPTION...
# Each target starts from its corpus in the repository (tests/fuzz/corpus/<name>/, shared by
# the *_aead build) and writes what it finds under B/corpus/<target>/; a crash leaves its
# input in B/fuzz-artifacts/ and its log in B/fuzz-logs/.  One line per target with the
# executions counted and the crashes found (libFuzzer stops at the first), then
# "N passed, N failed" like tests/run.sh.
set -u
b="$1"; shift
top="$(dirname "$0")/../.."
pass=0; fail=0; failed_names=""
mkdir -p "$b/fuzz-artifacts" "$b/fuzz-logs"
for bin in "$b"/fuzz_*; do
  [ -x "$bin" ] || continue
  name=${bin##*/fuzz_}
  seeds="$top/tests/fuzz/corpus/${name%_aead}"
  case "$name" in codec) max_len=1500 ;; *) max_len=8192 ;; esac
  mkdir -p "$b/corpus/$name" "$seeds"
  log="$b/fuzz-logs/$name.log"
  start=$(date +%s)
  if "$bin" "$@" -max_len=$max_len -print_final_stats=1 -artifact_prefix="$b/fuzz-artifacts/$name-" \
      "$b/corpus/$name" "$seeds" >"$log" 2>&1; then
    pass=$((pass + 1)); status=PASS
  else
    fail=$((fail + 1)); status=FAIL; failed_names="$failed_names fuzz/$name"
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  crashes=$(grep -c 'Test unit written to' "$log" || true)
  printf '%s fuzz/%s: %s executions, %s exec/s, %s, %s crashes (%d s)\n' "$status" "$name" "${runs:-0}" "${rate:-0}" \
    "${cov:-cov: ?}" "$crashes" $(($(date +%s) - start))
  [ "$status" = FAIL ] && grep -E 'ERROR|SUMMARY|^ +#[0-9]+ |Test unit written' "$log" | head -30 | sed 's/^/    /'
done
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
