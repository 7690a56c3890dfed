"""An in-process communicator: the members are threads sharing a :class:`LocalHub`.

Used for single-process tests of the engine and the collective ops (several "ranks" as
threads of one test), and for replicas that live in one process. Each member counts its
own calls; call ``i`` of every member meets in round ``i`` of the hub, where the last
member to arrive computes the result for everyone.

Example:
    >>> hub = LocalHub(2)
    >>> comms = [LocalCommunicator(hub, r) for r in range(2)]   # one per thread
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from flowmesh import config as _config
from flowmesh.collective.backends.base import CommunicationError, Communicator, PeerState, ReduceOp

_REDUCERS: dict[ReduceOp, Callable[[torch.Tensor], torch.Tensor]] = {
    # pairwise adds, like gloo (torch.sum starts from +0.0 and so loses -0.0 + -0.0 = -0.0)
    ReduceOp.SUM: lambda s: functools.reduce(torch.add, s.unbind(0)),
    ReduceOp.MAX: lambda s: s.amax(0),
    ReduceOp.MIN: lambda s: s.amin(0),
    ReduceOp.PRODUCT: lambda s: s.prod(0),
}


class _Round:
    __slots__ = ("kind", "values", "result", "taken", "error")

    def __init__(self, size: int):
        self.kind: list[str | None] = [None] * size
        self.values: list[Any] = [None] * size
        self.result: Any = None
        self.taken = 0
        self.error: str | None = None


class LocalHub:
    """The meeting point of ``size`` in-process members.

    Args:
        size: number of members.
        timeout_s: how long a member waits for the others (default:
            ``FLOWMESH_COLLECTIVE_TIMEOUT_S``).
    """

    def __init__(self, size: int, timeout_s: float | None = None):
        if size < 1:
            raise ValueError(f"A LocalHub needs at least one member, got size={size}")
        self.size = size
        self.timeout_s = timeout_s
        self._cond = threading.Condition()
        self._rounds: dict[int, _Round] = {}
        self._closed: set[int] = set()
        self._last_seen = [time.monotonic()] * size

    def exchange(self, rank: int, seq: int, kind: str, value: Any,
                 combine: Callable[[list[Any]], Any]) -> Any:
        """Deposits ``value`` for round ``seq`` and returns the combined result.

        Raises:
            CommunicationError: a member closed, the kinds differ, or the timeout passed.
        """
        timeout = self.timeout_s if self.timeout_s is not None else _config.COLLECTIVE_TIMEOUT_S.get()
        deadline = time.monotonic() + timeout
        with self._cond:
            self._last_seen[rank] = time.monotonic()
            rnd = self._rounds.setdefault(seq, _Round(self.size))
            rnd.kind[rank], rnd.values[rank] = kind, value
            if all(k is not None for k in rnd.kind):
                self._finish(rnd, combine)
                self._cond.notify_all()
            while rnd.result is None and rnd.error is None:
                self._raise_if_broken(rank, seq, rnd, deadline)
                self._cond.wait(min(0.2, max(deadline - time.monotonic(), 0.001)))
            rnd.taken += 1
            if rnd.taken == self.size:
                del self._rounds[seq]
            if rnd.error is not None:
                raise CommunicationError(rnd.error)
            return rnd.result

    def _finish(self, rnd: _Round, combine: Callable[[list[Any]], Any]) -> None:
        kinds = set(rnd.kind)
        if len(kinds) != 1:
            by_rank = ", ".join(f"rank {r}: {k}" for r, k in enumerate(rnd.kind))
            rnd.error = f"members called different collectives in the same round ({by_rank})"
            return
        try:
            rnd.result = combine(rnd.values)
        except (RuntimeError, ValueError) as exc:
            rnd.error = f"{rnd.kind[0]} failed: {exc}"

    def _raise_if_broken(self, rank: int, seq: int, rnd: _Round, deadline: float) -> None:
        missing = [r for r, k in enumerate(rnd.kind) if k is None]
        closed = sorted(set(missing) & self._closed)
        if closed:
            raise CommunicationError(f"local members {closed} closed during round {seq}",
                                     missing=closed)
        if time.monotonic() >= deadline:
            raise CommunicationError(
                f"rank {rank} timed out in round {seq} waiting for local members {missing}",
                timed_out=True, missing=missing,
            )

    def close_member(self, rank: int) -> None:
        with self._cond:
            self._closed.add(rank)
            self._cond.notify_all()

    def seconds_since_seen(self, rank: int) -> float:
        with self._cond:
            return time.monotonic() - self._last_seen[rank]


class LocalCommunicator(Communicator):
    """Member ``rank`` of a :class:`LocalHub` (one per thread)."""

    name = "local"
    caller_may_block = False  # members are threads of one process (see Communicator)

    def __init__(self, hub: LocalHub, rank: int):
        super().__init__(rank, hub.size)
        self._hub = hub
        self._seq = 0

    def _exchange(self, kind: str, value: Any, combine: Callable[[list[Any]], Any]) -> Any:
        seq = self._seq
        self._seq += 1
        return self._hub.exchange(self.rank, seq, kind, value, combine)

    def allgather_bytes(self, payload: bytes, capacity: int = 1024) -> list[bytes]:
        return self._exchange("allgather_bytes", bytes(payload), list)

    def allreduce(self, tensor: torch.Tensor, op: ReduceOp) -> None:
        reducer = _REDUCERS.get(ReduceOp.parse(op))
        if reducer is None:
            raise ValueError(f"The local communicator does not reduce with {op}; use SUM then divide")

        def combine(values: list[torch.Tensor]) -> torch.Tensor:
            _check_same_size("allreduce", values)
            stacked = torch.stack([v.reshape(-1) for v in values])
            return reducer(stacked.to(torch.float64) if stacked.dtype == torch.bool else stacked)

        result = self._exchange(f"allreduce/{op}", tensor, combine)
        tensor.copy_(result.reshape(tensor.shape).to(tensor.dtype))

    def allgather(self, output: torch.Tensor, tensor: torch.Tensor) -> None:
        def combine(values: list[torch.Tensor]) -> torch.Tensor:
            _check_same_size("allgather", values)
            return torch.cat([v.reshape(-1) for v in values])

        output.copy_(self._exchange("allgather", tensor, combine).reshape(output.shape))

    def broadcast(self, tensor: torch.Tensor, root: int) -> None:
        def combine(values: list[torch.Tensor]) -> torch.Tensor:
            _check_same_size("broadcast", values)
            return values[root].clone()

        tensor.copy_(self._exchange(f"broadcast/{root}", tensor, combine))

    def peer_status(self) -> dict[int, PeerState]:
        return {
            r: PeerState(alive=None, busy=None,
                         detail=f"last active {self._hub.seconds_since_seen(r):.1f}s ago")
            for r in range(self.size) if r != self.rank
        }

    def close(self) -> None:
        self._hub.close_member(self.rank)


def _check_same_size(kind: str, values: list[torch.Tensor]) -> None:
    sizes = [v.numel() for v in values]
    if len(set(sizes)) != 1:
        raise ValueError(f"{kind} with different sizes per member: {sizes}")
