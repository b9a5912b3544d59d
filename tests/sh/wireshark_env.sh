# Sourced by tests/sh/test_wireshark_*.sh: the built dissector installed as a personal
# plugin in a scratch HOME, and $tshark, which runs tshark with it (as nobody when root,
# since Wireshark loads no personal plugins for root). Sets $dir, removed at exit.
sim=${B:-build}/pure-link-sim
plugin=${B:-build}/wireshark/pure_link.so
[ -x "$sim" ] && [ -f "$plugin" ] || { echo "needs make ($sim, $plugin)"; exit 1; }
command -v tshark >/dev/null 2>&1 || { echo "tshark missing: sh scripts/deps.sh wireshark"; exit 1; }

dir=$(mktemp -d /tmp/pl-wireshark.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
version=$(pkg-config --modversion wireshark | cut -d. -f1,2)
mkdir -p "$dir/home/.local/lib/wireshark/plugins/$version/epan" "$dir/out"
cp "$plugin" "$dir/home/.local/lib/wireshark/plugins/$version/epan/"
# Wireshark loads no personal plugins for root, so as root tshark runs as nobody.
chmod -R a+rwX "$dir"
if [ "$(id -u)" = 0 ]; then
  as="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$dir/home"
else
  as="env HOME=$dir/home"
fi
tshark="$as tshark"

