"""Tests across "hosts": network namespaces with their own IPs and hostnames
(:mod:`flowmesh.testing.hosts`). They skip, saying why, where the machine does not allow
namespaces (not root, no iproute2)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from flowmesh.testing.hosts import HostBed, unavailable_reason

_REASON = unavailable_reason()


@pytest.fixture
def host_bed() -> Iterator[Callable[..., HostBed]]:
    """``host_bed(n, rate=None, aliases=None)`` -> a :class:`HostBed`, closed after the test."""
    if _REASON is not None:
        pytest.skip(f"no multi-host bed: {_REASON}")
    beds: list[HostBed] = []

    def make(count: int, **kwargs: object) -> HostBed:
        bed = HostBed(count, **kwargs)  # type: ignore[arg-type]
        beds.append(bed)
        return bed

    yield make
    for bed in beds:
        bed.close()
