"""Free ports for local clusters: distinct, bindable, and outside the ephemeral range that
outgoing connections draw from (so none can take a port between choice and bind)."""

from __future__ import annotations

import socket

from flowmesh.distributed import ports
from flowmesh.distributed.ports import free_ports


def test_ports_are_distinct_bindable_and_below_the_ephemeral_range():
    low, _ = ports._ephemeral_range()
    chosen = free_ports(20)
    assert len(set(chosen)) == 20
    assert all(ports._LOWEST <= p < low for p in chosen)
    for port in chosen:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_a_port_in_use_is_never_chosen(monkeypatch):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        taken = busy.getsockname()[1]
        monkeypatch.setattr(ports, "_LOWEST", taken - 1)  # candidates: taken - 1 .. taken + 1
        monkeypatch.setattr(ports, "_ephemeral_range", lambda: (taken + 2, 60999))
        assert taken not in free_ports(2)


def test_without_room_below_the_range_the_kernel_picks(monkeypatch):
    monkeypatch.setattr(ports, "_ephemeral_range", lambda: (ports._LOWEST, 60999))
    chosen = free_ports(3)
    assert len(set(chosen)) == 3 and all(p > 0 for p in chosen)
