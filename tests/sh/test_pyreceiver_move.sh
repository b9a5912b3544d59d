#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send over UDP on loopback: case 'move' of tests/interop/against_send.py.
exec timeout 30 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" move
