"""udp_path.py -- the paths the interop cases put between a sender and a receiver on
loopback: a forwarder (whose upstream socket can change, as a NAT rebinding would), one
that loses, reorders and copies datagrams, and one that drops every datagram above a size,
as a path with a smaller MTU whose ICMP errors are filtered does (protocol.md §5.1).
"""

import random
import select
import socket
import threading
import time


class Forwarder(threading.Thread):
    """A UDP forwarder: the sender sends to `port`; datagrams go on to the receiver from
    one of two upstream sockets (switch() changes which), replies come back to the
    sender.  It logs (monotonic time, 'up' | 'down', upstream index, bytes)."""

    def __init__(self, rx_addr):
        super().__init__(daemon=True)
        self.rx_addr = rx_addr
        self.front = self._sock()
        self.port = self.front.getsockname()[1]
        self.ups = [self._sock(), self._sock()]
        self.cur = 0
        self.client = None
        self.wire = []
        self.first_up = None            # the first datagram the sender sent (to replay)
        self.stopping = False

    @staticmethod
    def _sock():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        return s

    def up_addr(self, i):
        return "127.0.0.1:%d" % self.ups[i].getsockname()[1]

    def switch(self):
        self.cur = 1

    def run(self):
        socks = [self.front] + self.ups
        while not self.stopping:
            r, _, _ = select.select(socks, [], [], 0.05)
            for s in r:
                while True:
                    try:
                        d, addr = s.recvfrom(65535)
                    except (BlockingIOError, ConnectionRefusedError):
                        break
                    if s is self.front:
                        self.client = addr
                        if self.first_up is None:
                            self.first_up = d
                        self.forward("up", self.cur, d, self.ups[self.cur], self.rx_addr)
                    elif self.client is not None:
                        self.forward("down", self.ups.index(s), d, self.front, self.client)

    def forward(self, way, i, d, sock, to):
        """Passes one datagram on and logs it (way 'up' or 'down', upstream socket i)."""
        try:
            sock.sendto(d, to)
            self.wire.append((time.monotonic(), way, i, len(d)))
        except (BlockingIOError, ConnectionRefusedError):
            pass


class Impairer(Forwarder):
    """The forwarder with a seeded impaired path both ways: each datagram is lost with
    probability `loss`, held back and sent after the next one (reordered) with `loss`/2,
    and sent twice (a network copy) with `loss`/3."""

    def __init__(self, rx_addr, loss, seed):
        super().__init__(rx_addr)
        self.loss = loss
        self.rng = random.Random(seed)
        self.held = {"up": None, "down": None}
        self.dropped = {"up": 0, "down": 0}
        self.copied = {"up": 0, "down": 0}
        self.reordered = {"up": 0, "down": 0}

    def forward(self, way, i, d, sock, to):
        x = self.rng.random()
        if x < self.loss:
            self.dropped[way] += 1
            return
        if x < self.loss * 1.5 and self.held[way] is None:
            self.held[way] = d
            self.reordered[way] += 1
            return
        n = 2 if x < self.loss * 1.5 + self.loss / 3 else 1
        self.copied[way] += n - 1
        out = [d] * n
        if self.held[way] is not None:
            out.append(self.held[way])
            self.held[way] = None
        for one in out:
            super().forward(way, i, one, sock, to)


class Capped(Forwarder):
    """The forwarder with a size limit both ways: a datagram of more than `cap` bytes of
    UDP payload is dropped without a word (None: no limit).  The test may change `cap`
    while it runs (a route change).  `dropped` lists (monotonic time, way, bytes)."""

    def __init__(self, rx_addr, cap=None):
        super().__init__(rx_addr)
        self.cap = cap
        self.dropped = []

    def forward(self, way, i, d, sock, to):
        cap = self.cap
        if cap is not None and len(d) > cap:
            self.dropped.append((time.monotonic(), way, len(d)))
            return
        super().forward(way, i, d, sock, to)
