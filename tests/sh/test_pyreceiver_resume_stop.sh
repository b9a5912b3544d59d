#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send --resume over UDP on loopback: case 'resume_stop' of
# tests/interop/against_send.py (protocol.md §4.3: the first sender stopped by SIGSTOP
# lives on, its run cut off by the second one's ask; every record once).
exec timeout 60 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" resume_stop
