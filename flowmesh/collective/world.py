"""This process's membership of an all-reduce world (:class:`WorldInfo`), and the
``host:port`` form rendezvous addresses take. ``bootstrap.py`` resolves it from the
environment; elastic rounds (``elastic/rendezvous.py``) make one per round."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorldInfo:
    """This process's membership.

    Attributes:
        rank, size, local_rank, local_size: as in Horovod.
        host, port: the rendezvous store (``""``/0 for a world of one).
        host_store: this process must run the store server.
        source: ``"flowmesh run"``, ``"TF_CONFIG"`` or ``"single process"``.
        prefix: store namespace of the group ("" lets :func:`~flowmesh.collective.context.init`
            number it; elastic rounds name theirs so that every member agrees).
    """

    rank: int
    size: int
    local_rank: int
    local_size: int
    host: str = ""
    port: int = 0
    host_store: bool = False
    source: str = "single process"
    prefix: str = ""


def split_address(address: str, what: str) -> tuple[str, int]:
    """``"host:port"`` -> ``(host, port)``.

    Raises:
        ValueError: naming ``what`` and showing the expected form.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{what} must look like 'host:port' (e.g. 127.0.0.1:29500), got {address!r}")
    return host.strip("[]"), int(port)
