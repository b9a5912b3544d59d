#!/bin/sh
# Runs every fuzz target of B (build/fuzz_*) with the libFuzzer options given (make fuzz:
# -max_total_time=S; make fuzz-long: -runs=N), one at a time, or all at once when
# FUZZ_PARALLEL=1 (each target one process, under nice).
# Usage: tests/fuzz/run.sh B OPTION...
# Each target starts from its corpus in the repository (tests/fuzz/corpus/<name>/, shared by
# the *_aead build) and writes what it finds under B/corpus/<target>/; a crash leaves its
# input in B/fuzz-artifacts/ and its log in B/fuzz-logs/.  One line per target with the
# executions counted, the crashes found (libFuzzer stops at the first) and the seconds, then
# "N passed, N failed" like tests/run.sh.  A target that stops short of -runs=N (a
# -max_total_time given too) passes if it found no crash, and its line says so.  A target
# with an ASan build in B/fuzz-asan/ passes only if every input it kept also runs clean there.
set -u
b="$1"; shift
top="$(dirname "$0")/../.."
pass=0; fail=0; failed_names=""
mkdir -p "$b/fuzz-artifacts" "$b/fuzz-logs"
want=$(printf '%s\n' "$@" | sed -n 's/^-runs=//p' | tail -1)

# One target: its log in B/fuzz-logs/NAME.log, its line in B/fuzz-logs/NAME.result.
run_one() {
  bin="$1"; shift
  name=${bin##*/fuzz_}
  seeds="$top/tests/fuzz/corpus/${name%_aead}"
  case "$name" in codec) max_len=1500 ;; *) max_len=8192 ;; esac
  mkdir -p "$b/corpus/$name" "$seeds"
  log="$b/fuzz-logs/$name.log"
  start=$(date +%s)
  if nice "$bin" "$@" -max_len=$max_len -print_final_stats=1 -artifact_prefix="$b/fuzz-artifacts/$name-" \
      "$b/corpus/$name" "$seeds" >"$log" 2>&1; then
    status=PASS
  else
    status=FAIL
  fi
  # A target searched without ASan (the Makefile says why) has its ASan build beside it:
  # every input kept, the corpus it started from and what it added, runs through that once.
  check=""
  if [ "$status" = PASS ] && [ -x "$b/fuzz-asan/$name" ]; then
    if nice "$b/fuzz-asan/$name" -runs=0 -max_len=$max_len -artifact_prefix="$b/fuzz-artifacts/$name-asan-" \
        "$b/corpus/$name" "$seeds" >"$log.asan" 2>&1; then
      check=", $(sed -n 's/^#\([0-9]*\).*INITED.*/\1/p' "$log.asan" | tail -1) kept inputs rerun under ASan"
    else
      status=FAIL
      cat "$log.asan" >>"$log"
      check=", a kept input fails under ASan (log: $log.asan)"
    fi
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
  crashes=$(grep -c 'Test unit written to' "$log" || true)
  short=""
  [ -n "$want" ] && [ "${runs:-0}" -lt "$want" ] && short=" (short of $want: stopped at the time limit)"
  {
    printf '%s fuzz/%s: %s executions, %s exec/s, %s, %s crashes%s (%d s)%s\n' "$status" "$name" "${runs:-0}" \
      "${rate:-0}" "${cov:-cov: ?}" "$crashes" "$check" $(($(date +%s) - start)) "$short"
    [ "$status" = FAIL ] && grep -E 'ERROR|SUMMARY|^ +#[0-9]+ |Test unit written' "$log" | head -30 | sed 's/^/    /'
  } >"$b/fuzz-logs/$name.result"
}

names=""
for bin in "$b"/fuzz_*; do  # not $b/fuzz-asan/: those recheck, above
  [ -x "$bin" ] || continue
  names="$names ${bin##*/fuzz_}"
  if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
    run_one "$bin" "$@" &
  else
    run_one "$bin" "$@"
    cat "$b/fuzz-logs/${bin##*/fuzz_}.result"
  fi
done
wait
for name in $names; do
  [ "${FUZZ_PARALLEL:-0}" = 1 ] && cat "$b/fuzz-logs/$name.result"
  if grep -q '^PASS ' "$b/fuzz-logs/$name.result"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed_names="$failed_names fuzz/$name"; fi
done
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
