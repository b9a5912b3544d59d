"""port_holder.py FILE: binds a UDP socket on 127.0.0.1 (port 0: the system picks), writes
its port to FILE (whole, by rename), and holds the socket until it is killed."""
import os
import signal
import socket
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
signal.pause()
