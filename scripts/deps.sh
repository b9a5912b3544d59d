#!/bin/sh
# Installs the Debian packages the build and tests need, when they are missing.
# As root it runs apt-get; otherwise it says what to install and fails.
# `deps.sh fuzz` (make fuzz, CI) also needs clang and its libFuzzer and sanitizer runtimes.
set -eu
need=""
if [ "${1:-}" = fuzz ]; then
  command -v clang >/dev/null 2>&1 || need="$need clang"
  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need="$need libclang-rt-14-dev"
fi
have_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/include/x86_64-linux-gnu/$1" ]; }
have_header sodium.h              || need="$need libsodium-dev"
have_header mbedtls/aes.h         || need="$need libmbedtls-dev"
have_header liburing.h            || need="$need liburing-dev"
have_header uv.h                  || need="$need libuv1-dev"
command -v cc >/dev/null 2>&1     || need="$need gcc"
command -v make >/dev/null 2>&1   || need="$need make"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v python3 >/dev/null 2>&1 || need="$need python3"
python3 -c 'import cryptography' >/dev/null 2>&1 || need="$need python3-cryptography"
command -v gnuplot >/dev/null 2>&1 || need="$need gnuplot-nox"   # pure-link-sim plot, m6/sweep --plot
# The network-namespace test bed (tests/sh/test_netns_*.sh), which runs as root only:
# namespaces, veth and tc (iproute2), the router's NAT and filters (nftables), its NAT
# table flushed (conntrack).
if [ "$(id -u)" = 0 ]; then
  command -v ip >/dev/null 2>&1        || need="$need iproute2"
  command -v nft >/dev/null 2>&1       || need="$need nftables"
  command -v conntrack >/dev/null 2>&1 || need="$need conntrack"
fi
# `deps.sh wireshark`: what the Wireshark dissector (tools/wireshark/) and its test need.
if [ "${1:-}" = wireshark ]; then
  need=""
  command -v tshark >/dev/null 2>&1 || need="$need tshark"
  have_header wireshark/epan/packet.h || need="$need wireshark-dev"
  have_header gcrypt.h              || need="$need libgcrypt20-dev"
fi
# `deps.sh man`: scdoc, which renders the manual (make install), and man-db, whose
# `man -l` the install test reads the pages with.
if [ "${1:-}" = man ]; then
  need=""
  command -v scdoc >/dev/null 2>&1 || need="$need scdoc"
  command -v man >/dev/null 2>&1 || need="$need man-db"
fi
# `deps.sh bench`: valgrind, whose callgrind counts the core's instructions (make bench);
# the peers of scripts/bench_peers.sh: Debian's quinn crate and its dependencies with the
# cargo and rustc that build them offline, ngtcp2's example server and client, openssl for
# their certificates.
if [ "${1:-}" = bench ]; then
  need=""
  command -v valgrind >/dev/null 2>&1 && have_header valgrind/callgrind.h || need="$need valgrind"
  ls -d /usr/share/cargo/registry/quinn-0.9.* >/dev/null 2>&1 || need="$need librust-quinn-dev"
  [ -x /usr/bin/cargo ] || need="$need cargo"
  [ -x /usr/bin/rustc ] || need="$need rustc"
  [ -x /usr/sbin/gtlsserver ] || need="$need ngtcp2-server"
  command -v gtlsclient >/dev/null 2>&1 || need="$need ngtcp2-client"
  command -v openssl >/dev/null 2>&1 || need="$need openssl"
fi
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing$need"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  # shellcheck disable=SC2086
  apt-get install -y -qq $need >/dev/null
else
  echo "deps: missing Debian packages:$need" >&2
  echo "deps: run as root: apt-get install$need" >&2
  exit 1
fi
