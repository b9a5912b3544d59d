#!/usr/bin/env python3
"""Runs one server and one client of a peer transport on loopback and prints the CPU
seconds (user + system, all threads) of the two processes together and the client's wall
seconds, for scripts/bench_peers.sh.

    bench_cpu_pair.py --server CMD --client CMD [--port-free] [--via CMD] [--check FILE BYTES] [--received BYTES]

{port} in the commands is the server's port: with --port-free a free UDP port chosen here,
else the one the server prints in a "listening on ADDR:PORT" line.  --via: a relay started
once the server's port is known, with {front} a free UDP port chosen here and {port} the
server's; the client's {port} is then {front}, so the client reaches the server through it.
The relay is stopped (SIGTERM) after the client and the server; its CPU is nobody's.  The server is stopped
(SIGTERM) once the client exited, unless it exits by itself within a second.  --check: FILE
must then hold BYTES bytes.  --received: the server's last line must say "received BYTES".  Each process is waited for with wait4, whose rusage is its own.
"""
import os, re, shlex, signal, socket, subprocess, sys, time

TIMEOUT_S = 300  # a transfer that takes longer is a failure

def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port

def cpu_of(pid, deadline):
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got == pid:
            return ru.ru_utime + ru.ru_stime, status
        if time.time() > deadline:
            return None, None
        time.sleep(0.01)

def main():
    args = sys.argv[1:]
    opt = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--server", "--client", "--via"):
            opt[a] = args[i + 1]; i += 2
        elif a == "--port-free":
            opt[a] = True; i += 1
        elif a == "--received":
            opt[a] = int(args[i + 1]); i += 2
        elif a == "--check":
            opt[a] = (args[i + 1], int(args[i + 2])); i += 3
        else:
            sys.exit("bench_cpu_pair: unknown argument %s" % a)
    port = free_port() if opt.get("--port-free") else None
    server_cmd = opt["--server"].replace("{port}", str(port))
    server = subprocess.Popen(shlex.split(server_cmd), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    if port is None:
        line = server.stdout.readline()
        m = re.search(r"listening on .*:(\d+)", line)
        if not m:
            server.kill(); server.wait()
            sys.exit("bench_cpu_pair: the server said %r" % line)
        port = int(m.group(1))
    else:
        time.sleep(0.2)  # the server binds its port
    via = None
    if "--via" in opt:
        front = free_port()
        via = subprocess.Popen(shlex.split(opt["--via"].replace("{front}", str(front)).replace("{port}", str(port))),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.2)  # the relay binds its port
        port = front
    t0 = time.time()
    client = subprocess.Popen(shlex.split(opt["--client"].replace("{port}", str(port))),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    client_cpu, status = cpu_of(client.pid, t0 + TIMEOUT_S)
    wall = time.time() - t0
    if client_cpu is None:
        client.kill(); os.waitpid(client.pid, 0)
    server_cpu, _ = cpu_of(server.pid, time.time() + 1.0)
    if server_cpu is None:
        server.send_signal(signal.SIGTERM)
        server_cpu, _ = cpu_of(server.pid, time.time() + 5.0)
        if server_cpu is None:
            server.kill()
            server_cpu, _ = cpu_of(server.pid, time.time() + 5.0)
    if via is not None:
        via.send_signal(signal.SIGTERM)
        try:
            via.wait(5.0)
        except subprocess.TimeoutExpired:
            via.kill(); via.wait()
    if client_cpu is None or status != 0:
        sys.exit("bench_cpu_pair: the client %s: %s" % ("timed out" if client_cpu is None else
                 "exited %d" % (status >> 8), client.stderr.read().decode(errors="replace")[-300:]))
    if "--received" in opt:
        said = server.stdout.read().split()
        if said[-2:] != ["received", str(opt["--received"])]:
            sys.exit("bench_cpu_pair: the server said %r, want received %d" % (" ".join(said), opt["--received"]))
    if "--check" in opt:
        path, want = opt["--check"]
        have = os.path.getsize(path) if os.path.exists(path) else -1
        if have != want:
            sys.exit("bench_cpu_pair: %s holds %d bytes, want %d" % (path, have, want))
    print("%.6f %.6f" % (client_cpu + server_cpu, wall))

main()
