# Sourced by the shell tests that run the real sender against the independent receiver:
# the seed of both key pairs, the record count, the receiver's secret and the sender's
# public key (hex), and udp_ports N: N free UDP ports on 127.0.0.1.
seed=7
records=200
keys=$(${B:-build}/interop_sender keys $seed)
rsec=${keys% *}
spub=${keys#* }
udp_ports() {
    python3 -c '
import socket, sys
ss = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}
