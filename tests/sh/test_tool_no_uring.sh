#!/bin/sh
# The tool where io_uring is refused, as under a container's seccomp profile
# (tests/sh/no_uring.py makes io_uring_setup fail with EPERM): --io uring says so in one
# line and exits 1; --io auto (the default) goes on over POSIX and a transfer completes.
set -u
[ -x "${B:-build}/pure-link" ] && [ -f tests/sh/tool_lib.sh ] || { echo "skipped: no pure-link tool in this tree"; exit 77; }
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\nmemo %s\n' "$SP" "$work/store" "$work/memo" > "$work/r.conf"
plain=$P
P="python3 tests/sh/no_uring.py $plain"

$P recv --io uring --key "$work/r.key" --config "$work/r.conf" --listen 127.0.0.1:0 --no-progress 2> "$work/err"
got=$?
[ "$got" = 1 ] || fail "--io uring where it is refused exited $got: $(cat "$work/err")"
[ "$(wc -l < "$work/err")" = 1 ] && grep -q "io_uring: refused" "$work/err" || fail "--io uring: $(cat "$work/err")"
echo "recv exit 1: $(cat "$work/err")"
$P send --io uring --key "$work/s.key" --to 127.0.0.1:9 --peer "$RP" --input logs --generate 1 --no-progress 2> "$work/err"
got=$?
[ "$got" = 1 ] && [ "$(wc -l < "$work/err")" = 1 ] && grep -q "io_uring: refused" "$work/err" ||
    fail "send --io uring exited $got: $(cat "$work/err")"
echo "send exit 1: $(cat "$work/err")"

io=auto
start_recv auto --config "$work/r.conf" --listen 127.0.0.1:0
timeout 60 $P send --io auto --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
    --generate 2000 --size 1KiB --deadline 50s --no-progress 2> "$work/send.log" || fail "send --io auto exited $?"
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
python3 tests/sh/plr_check.py "$work/store" 2000 1024 || fail "store check"
echo "--io auto without io_uring: 2000 records stored once"
