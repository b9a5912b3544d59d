#!/bin/sh
# spec/vectors/ recomputed by the independent implementation written from spec/ alone
# (tests/interop/check_vectors.py): every key-schedule line and every sealed packet.
set -eu
python3 tests/interop/check_vectors.py | tail -3
