"""Choosing free TCP ports for the tasks of a local cluster.

A port picked now is bound later, by another process. The kernel's own choice
(``bind(0)``) comes from the ephemeral range, the very range every outgoing connection
on the machine draws its local port from, so on a busy host an unrelated connection can
take the port in between and the task fails with "Address already in use". Ports are
therefore drawn at random from below the ephemeral range (like TensorFlow's customary
2222), where only explicit binds land, and checked free by binding them.
"""

from __future__ import annotations

import random
import socket

_EPHEMERAL_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"
_LOWEST = 10000  # below: well-known and registered services
_TRIES = 200
_random = random.SystemRandom()  # not the global generator: scripts seed that one


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports on ``host`` that were free a moment ago (held together
    while chosen), outside the kernel's ephemeral range when it leaves room below."""
    socks: list[socket.socket] = []
    try:
        low, _ = _ephemeral_range()
        candidates = _random.sample(range(_LOWEST, low), min(_TRIES, low - _LOWEST)) \
            if low - _LOWEST >= count else []
        for port in candidates:
            if len(socks) == count:
                break
            sock = socket.socket()
            try:
                sock.bind((host, port))
            except OSError:
                sock.close()
                continue
            socks.append(sock)
        while len(socks) < count:  # no room below the ephemeral range: the kernel picks
            sock = socket.socket()
            sock.bind((host, 0))
            socks.append(sock)
        return [s.getsockname()[1] for s in socks]
    finally:
        for sock in socks:
            sock.close()


def _ephemeral_range() -> tuple[int, int]:
    try:
        with open(_EPHEMERAL_RANGE) as f:
            low, high = (int(v) for v in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default
