#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send --resume over UDP on loopback: case 'resume_kill9' of
# tests/interop/against_send.py (protocol.md §4.3: every record once across the stop).
exec timeout 60 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" resume_kill9
