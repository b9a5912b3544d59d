#!/bin/sh
# make install into a staging directory, then build and run a program against the
# installed header, static library and pkg-config file.
set -eu
top=$(pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
make -s install PREFIX=/usr DESTDIR="$stage" >/dev/null
test -f "$stage/usr/include/pure_link.h"
test -f "$stage/usr/lib/libpurelink.a"
test -L "$stage/usr/lib/libpurelink.so"
pc="$stage/usr/lib/pkgconfig/pure-link.pc"
grep -q '^Name: pure-link' "$pc"
cat > "$stage/use.c" <<'C'
#include <pure_link.h>
#include <stdio.h>
int main(void) {
    pure_link_config c = {0};
    size_t n = pure_link_size(&c);
    printf("%s %zu\n", pure_link_strerror(PURE_LINK_ERR_TOO_BIG), n);
    return n > 0 ? 0 : 1;
}
C
cflags=$(PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage/usr/lib/pkgconfig" pkg-config --cflags pure-link 2>/dev/null || echo "-I$stage/usr/include")
cc $cflags -I"$stage/usr/include" -o "$stage/use" "$stage/use.c" "$stage/usr/lib/libpurelink.a" -lsodium -lmbedcrypto
"$stage/use" | grep -q '16 MiB'
# The shared library links and runs too.
cc -I"$stage/usr/include" -o "$stage/use_so" "$stage/use.c" -L"$stage/usr/lib" -lpurelink -lsodium -lmbedcrypto
LD_LIBRARY_PATH="$stage/usr/lib" "$stage/use_so" >/dev/null
echo "install ok"
