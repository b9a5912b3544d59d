#!/bin/sh
# The Wireshark dissector over the spec's vectors and packets at the edges of its rules:
# each decodes, or is refused, as wire.md says.
set -eu
. tests/sh/wireshark_env.sh

# The vectors of spec/vectors/ and packets on both sides of every rule of wire.md §6, §9.
timeout 60 python3 tools/wireshark/check_vectors.py --tshark "$tshark" --dir "$dir/out"

