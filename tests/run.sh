#!/bin/sh
# Runs every case of every test program under $B/tests/ (B=build unless make says
# otherwise: make test-asan uses build-asan), each in its own process.
# Usage: tests/run.sh [PATTERN]   (only cases whose name or program contains PATTERN)
# The last line is "N passed, N failed, N skipped"; the exit code is 0 only when nothing failed.
# Shell tests find their programs under ${B:-build}/.
#
# Exit codes of a case (a program's `prog NAME`, or a tests/sh/test_*.sh script):
#   0   passed;
#   77  skipped: it cannot run on this machine (io_uring refused, not root, no gnuplot, no
#       AES-NI), as automake's test drivers read 77; its output says why on a line that
#       starts "skipped: " (SKIP(why) in tests/harness.h prints it);
#   any other: failed.
# Under CI=true a skip counts as failed: CI runs as root, with io_uring, and must test everything.
set -u
pattern="${1:-}"
export B="${B:-build}"
dir="$(dirname "$0")/../$B/tests"
pass=0; fail=0; skip=0; failed_names=""
SKIP_EXIT=77

# Counts one case from its exit code $1 and prints its line; $2 its name, $3 its output, $4 ms.
count() {
  rc=$1; name=$2; out=$3; ms=$4; why=""
  if [ "$rc" -eq 0 ]; then
    pass=$((pass + 1)); status=PASS
  elif [ "$rc" -eq "$SKIP_EXIT" ]; then
    why=$(printf '%s\n' "$out" | grep -m1 '^ *skipped: ' | sed 's/^ *skipped: //')
    [ -n "$why" ] || why="(no reason given)"
    if [ "${CI:-}" = true ]; then
      fail=$((fail + 1)); status=FAIL; failed_names="$failed_names $name"; out="skipped under CI=true: $why"
    else
      skip=$((skip + 1)); status=SKIP
    fi
  else
    fail=$((fail + 1)); status=FAIL; failed_names="$failed_names $name"
  fi
  if [ "$status" = SKIP ]; then
    printf '%s %s (%d ms): %s\n' "$status" "$name" "$ms" "$why"
  else
    printf '%s %s (%d ms)\n' "$status" "$name" "$ms"
  fi
  [ "$status" = FAIL ] && [ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/    /' | tail -40
  return 0
}

for prog in "$dir"/test_*; do
  [ -x "$prog" ] || continue
  base=$(basename "$prog")
  for name in $("$prog" --list); do
    case "$base/$name" in *"$pattern"*) ;; *) continue ;; esac
    start=$(date +%s%N)
    out=$("$prog" "$name" 2>&1); rc=$?
    count "$rc" "$base/$name" "$out" $(( ($(date +%s%N) - start) / 1000000 ))
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
    out="names build/ directly; use \${B:-build}/"; rc=1
  else
    out=$(sh "$script" 2>&1); rc=$?
  fi
  count "$rc" "sh/$name" "$out" $(( ($(date +%s%N) - start) / 1000000 ))
done
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
