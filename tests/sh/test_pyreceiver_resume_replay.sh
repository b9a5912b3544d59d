#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send --resume over UDP on loopback: case 'resume_replay' of
# tests/interop/against_send.py (protocol.md §4.3: a replayed ask of an earlier run, after
# a restart without memo, takes the source from no one; every record once).
exec timeout 60 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" resume_replay
