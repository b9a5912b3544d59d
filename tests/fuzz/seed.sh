#!/bin/sh
# make fuzz-corpus: captures a few simulator scenarios under the null cipher and a real
# transfer of the tool on loopback (opened with its key log), turns them into seeds
# (tools/fuzz_seeds.py), writes the tool's key and config files, and minimises seeds,
# the repository's corpus and what the fuzzers found (B/corpus/) into
# tests/fuzz/corpus/<target>/ with libFuzzer's -merge=1: only inputs that add coverage stay.
# Usage: tests/fuzz/seed.sh B
set -eu
b="$1"
work="$b/fuzz-seeds"
rm -rf "$work"; mkdir -p "$work/pcap"
for conf in demo keys-epoch-change keys-address-change seed-memo-restart seed-refused seed-three-outputs \
            crash_restart seed-credit-61b-10ms; do
  "$b/pure-link-sim" "sim/scenarios/$conf.conf" --quiet --set 'duration: 3s' --set 'crypto: null' \
    --pcap "$work/pcap/$conf.pcap" >/dev/null
done
# And a real one: the tool over loopback sockets, opened with its key log (needs dumpcap).
if command -v dumpcap >/dev/null 2>&1; then
  sh tests/fuzz/capture_real.sh "$b" "$work/pcap/real-loopback.pcap" || echo "fuzz-corpus: no real capture (dumpcap failed)"
fi
python3 tools/fuzz_seeds.py "$work" "$work"/pcap/*.pcap
# The tool's files: key files from pure-link keygen, and config files such as the tool's tests
# and README write (peers with '*' and named sources, inputs, a memo, comments, CRLF lines).
mkdir -p "$work/config"
"$b/pure-link" keygen "$work/config/key-a" >"$work/key-a.pub"
"$b/pure-link" keygen "$work/config/key-b" >"$work/key-b.pub"
ka=$(cat "$work/key-a.pub"); kb=$(cat "$work/key-b.pub")
printf '# receiver\npeer %s *\ninput logs 1 /var/lib/pure-link/logs\nmemo /var/lib/pure-link/memo\n' "$ka" >"$work/config/full"
printf 'peer %s only-this other.src_1\npeer %s *\ninput logs 0x10 store\ninput metrics 7 store2  # two\n' "$ka" "$kb" >"$work/config/two"
printf 'peer %s *\r\n\tinput a 18446744073709551615 d\r\n' "$(echo "$kb" | tr a-f A-F)" >"$work/config/crlf"
for t in codec config endpoint sequence; do
  keep="tests/fuzz/corpus/$t"
  mkdir -p "$keep" "$b/corpus/$t" "$work/$t"
  rm -rf "$work/merged"; mkdir "$work/merged"
  "$b/fuzz_$t" -merge=1 -max_len=8192 "$work/merged" "$keep" "$work/$t" "$b/corpus/$t" >"$work/merge-$t.log" 2>&1
  rm -rf "$keep"; mv "$work/merged" "$keep"
  echo "fuzz-corpus: $t: $(ls "$keep" | wc -l) inputs, $(du -sk "$keep" | cut -f1) KiB"
done
