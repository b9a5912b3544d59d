#!/bin/sh
# make install into a staging directory, then build shims/examples/consumer.c against the
# installed header and library through `pkg-config pure-link` alone, linked shared and
# static, and run it: records delivered between two endpoints, every byte checked.  Under
# make test-asan the library is instrumented, so the program is built with the same flags
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
echo "install ok: consumer built through pkg-config, shared and static"
