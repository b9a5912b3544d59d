#!/bin/sh
# `pure-link send --generate COUNT --size SIZE` at sizes around its edges (a record shorter
# than its 8-byte number, exactly 8, one past, a window that wraps the 256-byte ramp, a
# record of many ramps): every record reaches the store once with the bytes
# tests/sh/plr_check.py expects (the number, then byte k = number * 131 + k).
set -u
. tests/sh/tool_lib.sh
make_keys
sizes="${SIZES:-1 7 8 9 300 70000}"
for n in $sizes; do
    printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store$n" > "$work/r.conf"
    start_recv recv$n --config "$work/r.conf" --listen 127.0.0.1:0
    timeout 60 $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
        --generate 700 --size $n --deadline 50s --no-progress 2> "$work/send$n.log" || fail "send --size $n exited $?"
    stop_recv
    [ "$rstatus" = 0 ] || fail "receiver exit $rstatus at --size $n"
    python3 tests/sh/plr_check.py "$work/store$n" 700 $n || fail "store check at --size $n"
done
echo "700 records at each of the sizes $sizes stored once, bytes as generated"
