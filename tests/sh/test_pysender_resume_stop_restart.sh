#!/bin/sh
# The independent Python sender (tests/interop/sender.py, resuming, written from spec/ alone)
# against pure-link recv over UDP on loopback: case 'resume_stop_restart' of
# tests/interop/against_recv.py (protocol.md §4.3: an asking run cuts off the runs before it
# only once proven live, and durably).
exec timeout 60 python3 tests/interop/against_recv.py --tool "${B:-build}/pure-link" resume_stop_restart
