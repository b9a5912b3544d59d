#!/bin/sh
# `pure-link recv` as the installed pure-link-recv@.service runs it: its ExecStart (with the
# unit's specifiers filled in), a user of its own, no capabilities, no new privileges, umask
# 077, and a file system that is read-only but for the store and memo (StateDirectory=) and
# the control socket's place (RuntimeDirectory=).  Where systemd runs (systemctl
# is-system-running), systemd-run could run the unit itself; elsewhere (containers) the same
# restrictions are made by unshare -m and setpriv.  Then: a transfer, SIGHUP (the unit's
# ExecReload) adding a peer mid-transfer, watched with show --json, a reload that asks
# for a directory outside the writable paths, refused in one line, and a sender stopped by
# SIGINT mid-transfer and run again with --resume, which stores every record once; the
# store read back with verify and cat, every record once.
set -u
. tests/sh/tool_lib.sh
top=$(pwd)
for tool in unshare setpriv; do
    command -v $tool >/dev/null || { echo "skipped: no $tool"; exit 77; }
done
unshare -m true 2>/dev/null || { echo "skipped: unshare -m refused (no CAP_SYS_ADMIN)"; exit 77; }
stage="$work/stage"
make -s install B="${B:-build}" PREFIX=/usr/local DESTDIR="$stage" >/dev/null || fail "make install"
unit="$stage/usr/local/lib/systemd/system/pure-link-recv@.service"
bin="$stage/usr/local/bin/pure-link"
P=$bin
make_keys
S2=$($P keygen "$work/s2.key")

# What systemd would make for instance "edge": the directories, the credential, the user.
name=edge uid=61528
etc="$work/etc" cred="$work/cred" run="$work/run" state="$work/state/pure-link/$name"
mkdir -p "$etc" "$cred" "$run/pure-link-recv/$name" "$state"
cp "$work/r.key" "$cred/key"
printf 'peer %s *\ninput logs 1 %s/logs\nmemo %s/memo\n' "$SP" "$state" "$state" > "$etc/$name.conf"
printf 'PURE_LINK_OPTS="--listen 127.0.0.1:0 --io posix"\n' > "$etc/$name.env"
chown -R $uid:$uid "$cred" "$run" "$work/state"
chmod 700 "$run/pure-link-recv/$name" "$state"
chmod 400 "$cred/key"
chmod 755 "$work" "$work/state" "$etc"
chmod 644 "$etc/$name.conf"
grep -q '^DynamicUser=yes' "$unit" && grep -q '^ProtectSystem=strict' "$unit" && grep -q '^NoNewPrivileges=yes' "$unit" &&
    grep -q '^CapabilityBoundingSet=$' "$unit" && grep -q '^UMask=0077' "$unit" || fail "the unit lacks what this test emulates"
rw=$(sed -n 's/^ReadWritePaths=//p' "$unit")
[ "$rw" = "/var/lib/pure-link/%i" ] || fail "ReadWritePaths is $rw"

# ExecStart with the specifiers and the environment file's options filled in.
. "$etc/$name.env"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit" | sed -e "s|%d|$cred|g" -e "s|%t|$run|g" -e "s|%i|$name|g" \
    -e "s|/etc/pure-link|$etc|g" -e "s|^/usr/local/bin/pure-link|$bin|" -e "s|\$PURE_LINK_OPTS|$PURE_LINK_OPTS|")
case "$exec_start" in "$bin recv "*) ;; *) fail "ExecStart: $exec_start" ;; esac
reload=$(sed -n 's/^ExecReload=//p' "$unit")
[ "$reload" = '/bin/kill -HUP $MAINPID' ] || fail "ExecReload is $reload"
sock="$run/pure-link-recv/$name/control.sock"

# The sandbox: / read-only but for the unit's writable paths, then the unit's user and limits.
rm -f "$work/svc.log"
unshare -m --propagation private sh -c '
    for d in "$1" "$2"; do mount --bind "$d" "$d" || exit 1; done
    mount -o remount,bind,ro / || exit 1
    umask 077
    shift 2
    exec setpriv --reuid='$uid' --regid='$uid' --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all \
        env -i PATH=/usr/bin:/bin CREDENTIALS_DIRECTORY="'"$cred"'" RUNTIME_DIRECTORY="'"$run/pure-link-recv/$name"'" \
        STATE_DIRECTORY="'"$state"'" "$@"' sh "$state" "$run/pure-link-recv/$name" $exec_start 2> "$work/svc.log" &
rpid=$!; pids="$pids $rpid"
wait_listening "$work/svc.log" $rpid "the service"
[ -S "$sock" ] && [ "$(stat -c '%a %u' "$sock")" = "600 $uid" ] || fail "control socket: $(ls -l "$sock" 2>&1)"
mainpid=$(pgrep -P $rpid -x pure-link || echo $rpid)   # unshare may stay as the parent
# The sandbox holds: the receiver cannot write outside its paths (a reload asking for it is refused).
printf 'peer %s *\ninput logs 1 %s/logs\ninput elsewhere 2 %s/elsewhere\nmemo %s/memo\n' "$SP" "$state" "$work" "$state" > "$etc/$name.conf"
MAINPID=$mainpid sh -c "$reload"
i=0
until grep -q "reload refused" "$work/svc.log"; do i=$((i + 1)); [ $i -gt 100 ] && fail "no refusal: $(cat "$work/svc.log")"; sleep 0.05; done
grep -q "reload refused, the old config stays: .*elsewhere.*Read-only file system" "$work/svc.log" || fail "refusal: $(grep reload "$work/svc.log")"

# A transfer; a second peer added by reload while it runs; both complete.
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 --generate 200000 --size 512 \
    --no-progress 2> "$work/s.log" &
spid=$!; pids="$pids $spid"
printf 'peer %s *\npeer %s *\ninput logs 1 %s/logs\ninput late 1 %s/late\nmemo %s/memo\n' "$SP" "$S2" "$state" "$state" "$state" > "$etc/$name.conf"
i=0
until $P show --json "$sock" > "$work/a.json" 2>/dev/null && [ "$(json "$work/a.json" 'j["records_stored"] > 0')" = True ]; do
    i=$((i + 1)); [ $i -gt 200 ] && fail "show saw nothing stored"; sleep 0.05
done
MAINPID=$mainpid sh -c "$reload"
$P send --key "$work/s2.key" --to 127.0.0.1:$port --peer "$RP" --input late --shape 1 --generate 5000 \
    --size 512 --deadline 30s --no-progress 2> "$work/s2.log" || fail "the added peer's send exited $?: $(cat "$work/s2.log")"
$P show --json "$sock" > "$work/b.json" || fail "show"
[ "$(json "$work/b.json" 'len(j["peers"])')" = 2 ] && [ "$(json "$work/b.json" 'j["reloads"]')" = 1 ] || fail "after reload: $(cat "$work/b.json")"
wait $spid || fail "the first send exited $?"
first=$(json "$work/a.json" 'j["records_stored"]')

# A sender stopped by SIGINT mid-transfer and run again with --resume: every record once.
R=100000
resend() { exec env --default-signal=INT $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs \
    --source again --shape 1 --generate $R --size 512 --resume --no-progress; }
held() { f=$(ls "$state"/logs/*_again.plr 2>/dev/null | head -1); [ -n "$f" ] && echo $(( ($(stat -c %s "$f") - 192) / 540 )) || echo 0; }
resend 2> "$work/again1.log" & spid=$!; pids="$pids $spid"
i=0
until [ "$(held)" -ge 2000 ]; do i=$((i + 1)); [ $i -gt 500 ] && fail "the resumed source stored $(held)"; sleep 0.02; done
kill -INT $spid; wait $spid; st=$?
[ $st = 6 ] || fail "the stopped sender exited $st, want 6: $(cat "$work/again1.log")"
stopped=$(held)
[ $stopped -lt $R ] || fail "the sender finished before it was stopped"
(resend) 2> "$work/again2.log" || fail "the resumed sender exited $?: $(cat "$work/again2.log")"
grep -q "resuming source 'again' after record" "$work/again2.log" || fail "no resume: $(cat "$work/again2.log")"
kill -TERM $mainpid
i=0
while kill -0 $rpid 2>/dev/null; do i=$((i + 1)); [ $i -gt 100 ] && fail "the service did not stop"; sleep 0.05; done
wait $rpid || fail "the service exited $?: $(tail -3 "$work/svc.log")"
[ "$(stat -c %u "$state/logs")" = $uid ] || fail "the store is not the service user's"
python3 "$top/tests/sh/plr_check.py" "$state"/logs/*_out.plr 200000 512 > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
python3 "$top/tests/sh/plr_check.py" "$state"/logs/*_again.plr $R 512 --resumed > "$work/plr2.txt" ||
    fail "the resumed source: $(cat "$work/plr2.txt")"
python3 "$top/tests/sh/plr_check.py" "$state/late" 5000 512 > "$work/plr.txt" || fail "the added input: $(cat "$work/plr.txt")"
# The store read back as an operator reads it: verify, then cat of each source, every
# record once and byte for byte.
$P verify "$state/logs" "$state/late" > "$work/verify.txt" || fail "verify exited $?: $(cat "$work/verify.txt")"
grep -q '^verified 3 files: .* 0 with a bad frame, 0 with a torn tail$' "$work/verify.txt" || fail "verify: $(cat "$work/verify.txt")"
for read in "out 200000 logs" "again $R logs" "out 5000 late"; do
    set -- $read
    $P cat --framed --source $1 "$state/$3" | python3 "$top/tests/sh/plr_check.py" --framed $2 512 > "$work/cat.txt" ||
        fail "cat --source $1 $3: $(cat "$work/cat.txt")"
done
echo "service ok: recv under the unit's sandbox (uid $uid, read-only /, no capabilities); $first records stored when first seen; a peer added by reload sent 5000; a directory outside the writable paths refused; a sender stopped at $stopped of $R and resumed: $(cat "$work/plr2.txt"); read back with verify and cat, each record once"
