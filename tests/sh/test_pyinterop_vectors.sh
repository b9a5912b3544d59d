#!/bin/sh
# The independent Python implementation (tests/interop/) recomputes every vector of
# spec/vectors/ and the worked examples of spec/wire.md from the text alone, then checks
# its own receiver rules and its capture decoder (selftest.py: the mini sender against
# receiver.py over an impaired loopback path).
set -e
timeout 30 python3 tests/interop/check_vectors.py
timeout 60 python3 tests/interop/selftest.py
