#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send --epoch-packets 32 through a forwarder that drops 5 %, reorders
# and copies datagrams both ways: case 'epochs_lossy' of tests/interop/against_send.py.
exec timeout 30 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" epochs_lossy
