"""real_tool.py -- runs the project's `pure-link` tool for the interop tests, knowing it
only from its help text (`pure-link help recv`, `pure-link help send`): key files of 64
hex digits (the X25519 secret, mode 0600), the receiver's config file (peer / input /
memo lines), the "listening on ADDR" line on stderr, --stats=FILE on exit.
"""

import atexit
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pl_spec as pl  # noqa: E402


def write_key(path, secret):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret.hex() + "\n")


def new_keypair(tmp, name):
    secret = os.urandom(32)
    path = os.path.join(tmp, name + ".key")
    write_key(path, secret)
    return path, secret, pl.x25519_public(secret)


_RUNNING = []


@atexit.register
def _kill_left_over():
    """A case that fails half-way leaves no receiver behind."""
    for p in _RUNNING:
        if p.poll() is None:
            p.kill()
            p.wait()


def wait_listening(proc, errpath, what, timeout=5.0):
    """The port from the "listening on HOST:PORT" line a receiver writes to stderr."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = open(errpath).read()
        for line in text.split("\n")[:-1]:  # whole lines only: one may be half written
            if "listening on " in line:
                return int(line.rsplit(":", 1)[1])
        if proc.poll() is not None:
            raise RuntimeError("%s exited %d: %s" % (what, proc.returncode, text))
        time.sleep(0.02)
    raise RuntimeError("%s did not say where it listens" % what)


RESTART_BIND_S = 2.0  # how long a restart waits for its port


class Recv:
    """One `pure-link recv` on 127.0.0.1 with a config this test writes."""

    def __init__(self, tool, tmp, peers, inputs, memo=True):
        self.tool, self.tmp = tool, tmp
        self.key, self.secret, self.public = new_keypair(tmp, "recv")
        self.inputs = {name: os.path.join(tmp, "in-" + name) for name, _ in inputs}
        self.memo = os.path.join(tmp, "recv.memo")
        lines = ["peer %s %s" % (pub.hex(), " ".join(srcs)) for pub, srcs in peers]
        lines += ["input %s %d %s" % (name, shape, self.inputs[name]) for name, shape in inputs]
        if memo:
            lines.append("memo %s" % self.memo)
        self.config = os.path.join(tmp, "recv.conf")
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.proc = None
        self.port = 0
        self.lives = 0
        self.stats = []

    def start(self, port=None, timeout=5.0):
        """Starts the receiver (on port: a restart on the port it had); returns its port.  A
        receiver killed with io_uring requests pending may hold its socket a little while
        after it is reaped (the kernel tears its ring down later), so a restart that finds
        the port taken tries again for up to RESTART_BIND_S, as a supervisor would."""
        deadline = time.monotonic() + RESTART_BIND_S
        while True:
            try:
                return self._start(port, timeout)
            except RuntimeError as e:
                if port is None or "Address already in use" not in str(e) or time.monotonic() > deadline:
                    raise
                self.err.close()
                time.sleep(0.05)

    def _start(self, port, timeout):
        self.lives += 1
        self.errpath = os.path.join(self.tmp, "recv-%d.err" % self.lives)
        self.statspath = os.path.join(self.tmp, "recv-%d.stats.json" % self.lives)
        listen = "127.0.0.1:%d" % (self.port if port is None else port)
        self.err = open(self.errpath, "w")
        self.proc = subprocess.Popen(
            [self.tool, "recv", "--key", self.key, "--config", self.config, "--listen", listen,
             "--stats=" + self.statspath, "--keylog", os.path.join(self.tmp, "recv.keylog")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err)
        _RUNNING.append(self.proc)
        self.port = wait_listening(self.proc, self.errpath, "pure-link recv", timeout)
        return self.port

    def kill(self):
        """kill -9: no statistics."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=5)
        self.err.close()
        self.stats.append(None)

    def stop(self):
        """SIGTERM: commits and writes its statistics (help recv)."""
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=10)
        self.err.close()
        st = json.load(open(self.statspath)) if os.path.exists(self.statspath) else None
        self.stats.append(st)
        return rc, st

    def log(self):
        return open(self.errpath).read()


def run_send(tool, tmp, args, stdin_bytes=None, timeout=30):
    """`pure-link send ARGS`; returns (exit code, stats dict or None, stderr text)."""
    stats = os.path.join(tmp, "send.stats.json")
    p = subprocess.run([tool, "send"] + args + ["--stats=" + stats, "--no-progress"],
                       input=stdin_bytes, capture_output=True, timeout=timeout)
    st = json.load(open(stats)) if os.path.exists(stats) else None
    return p.returncode, st, p.stderr.decode(errors="replace")
