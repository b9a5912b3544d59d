#!/bin/sh
# Runs every case of every test program under $B/tests/ (B=build unless make says
# otherwise: make test-asan uses build-asan), each in its own process.
# Usage: tests/run.sh [PATTERN]   (only cases whose name or program contains PATTERN)
# The last line is "N passed, N failed"; the exit code is 0 only when nothing failed.
# Shell tests find their programs under ${B:-build}/.
set -u
pattern="${1:-}"
export B="${B:-build}"
dir="$(dirname "$0")/../$B/tests"
pass=0; fail=0; failed_names=""
for prog in "$dir"/test_*; do
  [ -x "$prog" ] || continue
  base=$(basename "$prog")
  for name in $("$prog" --list); do
    case "$base/$name" in *"$pattern"*) ;; *) continue ;; esac
    start=$(date +%s%N)
    if out=$("$prog" "$name" 2>&1); then
      pass=$((pass + 1)); status=PASS
    else
      fail=$((fail + 1)); status=FAIL; failed_names="$failed_names $base/$name"
    fi
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    printf '%s %s/%s (%d ms)\n' "$status" "$base" "$name" "$ms"
    [ "$status" = FAIL ] && [ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/    /' | tail -40
  done
done
# Shell cases: tests/sh/test_*.sh, each one case, run from the top of the tree.
for script in "$(dirname "$0")"/sh/test_*.sh; do
  [ -f "$script" ] || continue
  name=$(basename "$script" .sh)
  case "sh/$name" in *"$pattern"*) ;; *) continue ;; esac
  start=$(date +%s%N)
  # A script that names build/ itself would test the plain build under make test-asan.
  if [ "$B" != build ] && grep -v '^ *#' "$script" | grep -q '\bbuild/'; then
    out="names build/ directly; use \${B:-build}/"; fail=$((fail + 1)); status=FAIL; failed_names="$failed_names sh/$name"
  elif out=$(sh "$script" 2>&1); then pass=$((pass + 1)); status=PASS
  else fail=$((fail + 1)); status=FAIL; failed_names="$failed_names sh/$name"; fi
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf '%s sh/%s (%d ms)\n' "$status" "$name" "$ms"
  [ "$status" = FAIL ] && [ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/    /' | tail -40
done
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
