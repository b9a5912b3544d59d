#!/bin/sh
# The independent Python sender (tests/interop/sender.py --resume, written from spec/ alone)
# against pure-link recv over UDP on loopback: case 'resume_kill9' of
# tests/interop/against_recv.py (protocol.md §4.3: every record once across the stop).
exec timeout 60 python3 tests/interop/against_recv.py --tool "${B:-build}/pure-link" resume_kill9
