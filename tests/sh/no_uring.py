#!/usr/bin/env python3
"""no_uring.py CMD [ARG...]: runs CMD where io_uring_setup fails with EPERM, as under a
container's seccomp profile that forbids io_uring (x86-64 and arm64: both number it 425)."""
import ctypes
import os
import sys

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, EPERM = 0x7FFF0000, 0x00050000, 1
NR_IO_URING_SETUP = 425
BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06


class Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]


# seccomp_data.nr is at offset 0: refuse io_uring_setup, allow everything else.
rules = (Filter * 4)(Filter(BPF_LD_W_ABS, 0, 0, 0), Filter(BPF_JEQ_K, 0, 1, NR_IO_URING_SETUP),
                     Filter(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM), Filter(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
prog = Prog(len(rules), rules)
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
    sys.exit("no_uring.py: cannot install the seccomp filter: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])
