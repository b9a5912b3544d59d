#!/bin/sh
# The examples of shims/examples/ run to their end on loopback: every record delivered,
# every byte checked by the receiving host, every record STORED at the sender.  Each
# example bounds itself (60 s); timeout is a second guard.
set -eu
b=${B:-build}/examples
check() { # check EXPECTED COMMAND...: the command exits 0 and prints EXPECTED
  want=$1; shift
  out=$(timeout 120 "$@") || { echo "$* failed: $out"; exit 1; }
  printf '%s\n' "$out" | grep -qF -- "$want" || { echo "$*: no '$want' in: $out"; exit 1; }
  printf '%s\n' "$out"
}
check "uv_link over IPv4: 20000 of 20000 records stored and checked, 0 bad" "$b/uv_link" 20000
check "uv_link over IPv6: 3000 of 3000 records stored and checked, 0 bad" "$b/uv_link" 3000 -6
for kind in unix tcp; do
  check "20000 of 20000 records stored and checked, 0 bad" "$b/stream_link" "$kind" 20000
  check "stream_link over $kind: ok" "$b/stream_link" "$kind" 3000
done
# A stream kind that does not exist is refused with its usage line.
if "$b/stream_link" udp 2>/dev/null; then echo "stream_link udp should fail"; exit 1; fi
