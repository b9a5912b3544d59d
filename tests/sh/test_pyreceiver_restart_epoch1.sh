#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send --epoch-packets 32: killed right after its memo holds epoch 1,
# before that epoch's ACCEPT, and restarted (protocol.md §9): case 'restart_epoch1' of
# tests/interop/against_send.py.
exec timeout 30 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" restart_epoch1
