#!/bin/sh
# make install into a staging directory, then build shims/examples/consumer.c against the
# installed header and library through `pkg-config pure-link` alone, linked shared and
# static, and run it: records delivered between two endpoints, every byte checked.  Then
# the rest of what install puts in: the shims library (a program built through
# `pkg-config pure-link-shims` stores records over loopback), the tool (it runs, its help
# is the manual's text), both man pages (man -l), the systemd unit.  Under make test-asan
# the libraries are instrumented, so the programs are built with the same flags
# (PL_CFLAGS).
set -eu
top=$(pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
make -s install B="${B:-build}" PREFIX=/usr/local DESTDIR="$stage" >/dev/null
flags="${PL_CFLAGS:-}"
lib="$stage/usr/local/lib"
test -f "$stage/usr/local/include/pure_link.h"
test -f "$lib/libpurelink.a"
test -L "$lib/libpurelink.so"
grep -q '^Name: pure-link' "$lib/pkgconfig/pure-link.pc"
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
version=$(sed -n 's/^VERSION *:= *//p' "$top/Makefile")
test "$(pkg-config --modversion pure-link)" = "$version"
# The staged include directory comes from the .pc file, not from the source tree: copy
# the example where the source tree's core/ is not beside it.
cp "$top/shims/examples/consumer.c" "$top/shims/examples/example_host.h" "$stage/"
cd "$stage"
# Shared: the program needs libpurelink.so.1 at run time.
cc $flags consumer.c $(pkg-config --cflags --libs pure-link) -o consumer_so
readelf -d consumer_so | grep -q 'NEEDED.*libpurelink.so.1'
LD_LIBRARY_PATH="$lib" ./consumer_so 500 | grep -qx 'consumer: 500 records stored and checked, 0 bad'
# Static: pkg-config --static adds the libraries the core itself uses.
cc $flags consumer.c $(pkg-config --cflags pure-link) -o consumer_a -Wl,-Bstatic $(pkg-config --static --libs pure-link) -Wl,-Bdynamic
if readelf -d consumer_a | grep -q 'NEEDED.*libpurelink'; then echo "consumer_a links libpurelink.so"; exit 1; fi
./consumer_a 500 | grep -qx 'consumer: 500 records stored and checked, 0 bad'

# The shims library and its headers, through their own .pc (which requires pure-link's).
test "$(pkg-config --modversion pure-link-shims)" = "$version"
for h in pl_driver.h pl_io.h pl_store.h pl_uring.h; do test -f "$stage/usr/local/include/$h"; done
cp "$top/tests/install/shims_consumer.c" "$stage/"
cc $flags shims_consumer.c $(pkg-config --cflags --libs pure-link-shims) -o shims_consumer
readelf -d shims_consumer | grep -q 'NEEDED.*libpurelink-shims.so.1'
mkdir "$stage/store"
LD_LIBRARY_PATH="$lib" ./shims_consumer "$stage/store" 300 | grep -qx 'shims_consumer: 300 of 300 records durable, sender done'
ls "$stage/store"/*.plr >/dev/null

# The tool: it runs from where it was installed, and its help is the manual's text.
tool="$stage/usr/local/bin/pure-link"
"$tool" --version | grep -q "^pure-link $version "
"$tool" help recv | grep -q '^    input NAME SHAPE DIR$'

# Both pages, as man(1) shows them.
sh "$top/scripts/deps.sh" man
man1="$stage/usr/local/share/man/man1/pure-link.1" man3="$stage/usr/local/share/man/man3/pure_link.3"
MANWIDTH=100 man -l "$man1" > page1 2>&1
MANWIDTH=100 man -l "$man3" > page3 2>&1
grep -q '^NAME' page1 && grep -q 'pure-link - send records reliably' page1 || { cat page1; exit 1; }
grep -q 'pure-link recv - receive records and store each one exactly once' page1
grep -q 'JOURNAL_STREAM' page1
grep -q 'pl_driver_run' page3 && grep -q 'pure_link_receive' page3 || { cat page3; exit 1; }
# Every line of the help is in the page (modulo the page's own wrapping): the same text.
"$tool" help | sed -n 's/^    \([A-Z][a-z].*[a-z]\)$/\1/p' | head -5 > help_lines
test -s help_lines
tr -s ' \n' '  ' < page1 > page1.flat
while IFS= read -r line; do
  first=$(printf '%s' "$line" | cut -c1-30)
  grep -qF -- "$first" page1.flat || { echo "help line not in the page: $line"; exit 1; }
done < help_lines

# The systemd unit: the hardening it promises, the tool at PREFIX.
unit="$stage/usr/local/lib/systemd/system/pure-link-recv@.service"
for want in '^ExecStart=/usr/local/bin/pure-link recv ' '^DynamicUser=yes' '^ProtectSystem=strict' \
            '^ReadWritePaths=/var/lib/pure-link/%i$' '^NoNewPrivileges=yes' '^PrivateTmp=yes' \
            '^RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX$' '^SystemCallFilter=@system-service$' \
            '^CapabilityBoundingSet=$' '^ExecReload=/bin/kill -HUP \$MAINPID$' ' --control %t/pure-link-recv/%i/control.sock '; do
  grep -q -- "$want" "$unit" || { echo "unit lacks $want"; exit 1; }
done
if command -v systemd-analyze >/dev/null 2>&1; then
  sed "s|/usr/local/bin/pure-link|$tool|" "$unit" > "$stage/pure-link-recv@.service"
  systemd-analyze verify --man=no "$stage/pure-link-recv@.service" 2>&1 | grep . && exit 1
fi
echo "install ok: consumer built through pkg-config, shared and static; the shims library stored 300 records; the tool, both man pages and the unit in place"
