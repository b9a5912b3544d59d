#!/bin/sh
# pure-link-sim vopr, the invariant campaign: 200 seeds of drawn paths, controllers, record
# sizes, limits, crashes, memo tears and attacks must all pass, with every fault of the table
# drawn at least once; a seed replays byte for byte (the same trace hash from the campaign,
# from a one-seed replay, from two worker processes, and from its scenario text run as a
# file); a failing seed prints the command that replays it.
# `make campaign SEEDS=100000` runs the long one.
set -eu
sim=${B:-build}/pure-link-sim
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$sim" vopr --seeds 200 --from 1 >"$tmp/out" || { tail -40 "$tmp/out"; fail "200 seeds: a seed broke an invariant"; }
tail -1 "$tmp/out" | grep -qx '200 passed, 0 failed' || fail "no '200 passed, 0 failed' line"
grep -q '^vopr: 200 seeds from 1 in .* seeds/s' "$tmp/out" || fail "no seeds/s line"
faults=$(sed -n '/^  fault drawn/,/passed/p' "$tmp/out" | grep -c '^  ' || true)
[ "$faults" -ge 20 ] || fail "fault table has $faults rows"
never=$(sed -n '/^  fault drawn/,/passed/p' "$tmp/out" | awk '/^  / && $(NF-2) == 0' | head -1)
[ -z "$never" ] || fail "a fault never drawn in 200 seeds: $never"

# The same seeds, one process or two workers: the same lines in the same order.
"$sim" vopr --seeds 12 --from 40 --verbose | grep '^seed ' >"$tmp/one"
"$sim" vopr --seeds 12 --from 40 --verbose --jobs 2 | grep '^seed ' >"$tmp/two"
[ "$(wc -l <"$tmp/one")" -eq 12 ] || fail "verbose: not 12 seed lines"
cmp -s "$tmp/one" "$tmp/two" || fail "two workers gave other runs than one process"
# A one-seed replay and the scenario text run as a file give the campaign's trace hash.
for seed in 41 47 51; do
  want=$(sed -n "s/^seed $seed: .*trace \([0-9a-f]*\)$/\1/p" "$tmp/one")
  again=$("$sim" vopr --from $seed --seeds 1 --verbose | sed -n "s/^seed $seed: .*trace \([0-9a-f]*\)$/\1/p")
  "$sim" vopr --print $seed >"$tmp/s.conf"
  file=$("$sim" "$tmp/s.conf" --json --quiet | tail -1 | sed -n 's/.*"trace_hash":"\([0-9a-f]*\)".*/\1/p')
  [ -n "$want" ] && [ "$want" = "$again" ] && [ "$want" = "$file" ] || fail "seed $seed: traces $want, $again, $file"
done

# A seed that fails (here: a scenario line the parser refuses) prints its replay command,
# which fails the same way.
if "$sim" vopr --seeds 2 --from 3 --set 'no_such_key: 1' >"$tmp/bad"; then fail "a broken seed passed"; fi
tail -1 "$tmp/bad" | grep -qx '0 passed, 2 failed' || fail "broken seeds not counted"
replay=$(sed -n 's/^  replay: //p' "$tmp/bad" | head -1)
case "$replay" in *"vopr --from 3 --seeds 1 --verbose --set 'no_such_key: 1'") ;; *) fail "replay line: $replay" ;; esac
eval "$replay" >"$tmp/replayed" && fail "the replay passed"
grep -q '^FAIL seed 3: scenario: .*no_such_key' "$tmp/replayed" || fail "the replay did not fail alike"
"$sim" vopr --seeds x >/dev/null 2>&1 && fail "a bad option was taken"
echo "vopr: 200 seeds pass, replays match"
