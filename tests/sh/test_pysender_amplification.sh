#!/bin/sh
# The independent Python sender (tests/interop/sender.py, written from spec/ alone)
# against pure-link recv over UDP on loopback: case 'amplification' of tests/interop/against_recv.py.
exec timeout 30 python3 tests/interop/against_recv.py --tool "${B:-build}/pure-link" amplification
