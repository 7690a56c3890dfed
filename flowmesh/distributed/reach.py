"""Why a task does not answer: one TCP connection attempt, read as a likely cause.

Errors about unreachable tasks name the task, the address dialled and what probably went
wrong, so that a user starting a cluster by hand on several machines can act on them.
"""

from __future__ import annotations

import errno
import socket

from flowmesh.distributed.cluster_spec import split_address

_LOOPBACK_HINT = ("a task listed at localhost/127.x, or started with FLOWMESH_BIND_ADDRESS="
                  "127.0.0.1, listens on loopback only and other hosts cannot reach it")


def likely_cause(address: str, timeout: float = 2.0) -> str:
    """What one connection attempt to ``address`` says about why it does not answer."""
    try:
        host, port = split_address(address)
    except ValueError:
        return f"{address!r} is not a host:port address"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return (f"the name {host!r} does not resolve on this host ({exc.strerror}): check the "
                "cluster spec, DNS or /etc/hosts")
    family, kind, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.settimeout(timeout)
    try:
        sock.connect(sockaddr)
    except ConnectionRefusedError:
        return (f"connection refused: nothing listens on port {port} of {host}. The task is not "
                f"running (yet), or listens on another interface ({_LOOPBACK_HINT})")
    except TimeoutError:
        return (f"connecting timed out after {timeout:g} s: the host is down or cut off, or a "
                f"firewall drops port {port}")
    except OSError as exc:
        if exc.errno == errno.EHOSTUNREACH:
            return (f"no route to host: {host} does not answer on the network (it is down or cut "
                    "off, or a firewall rejects the connection)")
        if exc.errno == errno.ENETUNREACH:
            return f"network unreachable: this host has no route to {host}"
        return f"connecting failed: {exc.strerror or exc}"
    finally:
        sock.close()
    return (f"a TCP connection to {host}:{port} opens, but no flowmesh server answered on it "
            "(another program on that port, or the task is hung)")
