"""Negotiation: which collectives every rank has asked for, and whether they agree.

Every engine cycle each rank all-gathers the descriptors of the requests it submitted
since its last cycle. Every rank therefore sees the same messages in the same order and
updates an identical :class:`Table`; a collective runs once every rank has asked for it,
in the same order everywhere, after its descriptors were checked to agree (so a shape or
dtype mismatch is an error message, never a corrupted or aborted data transfer). Rank 0
also reports requests pending longer than the timeout ("stalled ranks"); those reports
travel in its next message so that all ranks fail the same requests at the same cycle.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import msgpack

KINDS = ("allreduce", "allgather", "broadcast", "reducescatter")


@dataclass(frozen=True)
class Descriptor:
    """What one rank asked for: enough to check agreement and plan the transfer.

    Attributes:
        key: identifies the collective instance; equal on every rank.
        kind: one of ``KINDS``.
        op: the reduction (``"sum"``, ``"mean"``, ...) or ``""``.
        root: the root rank of a broadcast (else 0).
        name: the op or tensor name, for messages.
        specs: ``(dtype name, shape)`` per tensor of the request.
        device: ``"cpu"`` or ``"cuda"``.
        rows: for a reduce-scatter, the rows of each tensor this rank wants back (empty:
            an even split).
    """

    key: str
    kind: str
    op: str
    root: int
    name: str
    specs: tuple[tuple[str, tuple[int, ...]], ...]
    device: str = "cpu"
    rows: tuple[int, ...] = ()

    def encode(self) -> list[Any]:
        return [self.key, self.kind, self.op, self.root, self.name,
                [[d, list(s)] for d, s in self.specs], self.device, list(self.rows)]

    @classmethod
    def decode(cls, raw: list[Any]) -> Descriptor:
        key, kind, op, root, name, specs, device, rows = raw
        return cls(str(key), str(kind), str(op), int(root), str(name),
                   tuple((str(d), tuple(int(x) for x in s)) for d, s in specs), str(device),
                   tuple(int(r) for r in rows))

    def describe(self) -> str:
        tensors = ", ".join(f"{d}{list(s)}" for d, s in self.specs)
        extra = f" op={self.op}" if self.op else ""
        extra += f" root={self.root}" if self.kind == "broadcast" else ""
        return f"{self.kind}{extra} of [{tensors}] on {self.device}"

    @property
    def nbytes(self) -> int:
        return sum(numel(s) * itemsize(d) for d, s in self.specs)


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def itemsize(dtype_name: str) -> int:
    """Bytes per element of a dtype named like ``float32``, ``bfloat16``, ``bool``."""
    if dtype_name == "bool":
        return 1
    digits = "".join(ch for ch in dtype_name if ch.isdigit())
    return max(1, int(digits) // 8) if digits else 1


@dataclass
class Message:
    """What one rank sends in a cycle.

    Attributes:
        descriptors: requests submitted since its previous cycle.
        stalled: (rank 0 only) keys pending past the timeout; every rank fails them.
        inline: small all-reduce payloads sent along, by index into ``descriptors``: when
            every rank inlined its data, the reduction needs no second transfer.
    """

    descriptors: list[Descriptor]
    stalled: list[str] = field(default_factory=list)
    inline: dict[int, bytes] = field(default_factory=dict)

    def encode(self) -> bytes:
        """msgpack bytes (never pickle)."""
        return msgpack.packb({"r": [d.encode() for d in self.descriptors], "s": self.stalled,
                              "d": [[i, data] for i, data in self.inline.items()]})

    @classmethod
    def decode(cls, payload: bytes) -> Message:
        """Inverse of :meth:`encode`.

        Raises:
            ValueError: the payload is not a valid message.
        """
        try:
            data = msgpack.unpackb(payload, raw=False)
            descriptors = [Descriptor.decode(d) for d in data["r"]]
            inline = {int(i): bytes(b) for i, b in data["d"]}
            return cls(descriptors, [str(k) for k in data["s"]], inline)
        except (ValueError, KeyError, TypeError, msgpack.ExtraData) as exc:
            raise ValueError(f"malformed negotiation message ({len(payload)} bytes): {exc}") from None


@dataclass
class _Entry:
    key: str
    queues: list[deque[tuple[Descriptor, bytes | None]]]
    since: float = field(default_factory=time.monotonic)


@dataclass
class Ready:
    """A collective every rank asked for: descriptors and inline payloads, by rank."""

    key: str
    descriptors: list[Descriptor]
    inline: list[bytes | None] = field(default_factory=list)


class Table:
    """Requests announced by every rank and not yet run (identical on all ranks)."""

    def __init__(self, size: int):
        self.size = size
        self._entries: dict[str, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, rank: int, descriptor: Descriptor, inline: bytes | None = None) -> None:
        entry = self._entries.get(descriptor.key)
        if entry is None:
            entry = self._entries[descriptor.key] = _Entry(
                descriptor.key, [deque() for _ in range(self.size)])
        entry.queues[rank].append((descriptor, inline))

    def pop_ready(self) -> list[Ready]:
        """Every collective now asked for by all ranks, in announcement order."""
        ready: list[Ready] = []
        for key in list(self._entries):
            entry = self._entries[key]
            while all(entry.queues):
                items = [q.popleft() for q in entry.queues]
                ready.append(Ready(key, [d for d, _ in items], [data for _, data in items]))
                entry.since = time.monotonic()
            if not any(entry.queues):
                del self._entries[key]
        return ready

    def stalled(self, timeout_s: float) -> list[str]:
        """Keys pending (asked for by some ranks only) for longer than ``timeout_s``."""
        now = time.monotonic()
        return [k for k, e in self._entries.items() if now - e.since > timeout_s]

    def remove(self, key: str) -> None:
        self._entries.pop(key, None)

    def has_pending(self, key: str) -> bool:
        """Some rank announced ``key`` again and it has not run yet."""
        return key in self._entries

    def missing_ranks(self, key: str) -> list[int]:
        entry = self._entries.get(key)
        return [] if entry is None else [r for r, q in enumerate(entry.queues) if not q]

    def waiting_ranks(self, key: str) -> list[int]:
        entry = self._entries.get(key)
        return [] if entry is None else [r for r, q in enumerate(entry.queues) if q]

    def age(self, key: str) -> float:
        entry = self._entries.get(key)
        return 0.0 if entry is None else time.monotonic() - entry.since

    def name_of(self, key: str) -> str:
        entry = self._entries.get(key)
        if entry is None:
            return key
        for q in entry.queues:
            if q:
                return q[0][0].name
        return key


def check_agreement(ready: Ready) -> str | None:
    """None when every rank's descriptor is compatible, else a message naming them all."""
    first = ready.descriptors[0]
    bad = False
    for d in ready.descriptors[1:]:
        if (d.kind, d.op, d.root, d.device, len(d.specs)) != (
                first.kind, first.op, first.root, first.device, len(first.specs)):
            bad = True
            break
        for (dt_a, sh_a), (dt_b, sh_b) in zip(first.specs, d.specs):
            if dt_a != dt_b or not _shapes_agree(first.kind, sh_a, sh_b):
                bad = True
    if not bad and first.kind == "reducescatter":
        return _check_rows(ready)
    if not bad:
        return None
    lines = "; ".join(f"rank {r}: {d.describe()}" for r, d in enumerate(ready.descriptors))
    hint = ("all ranks must pass tensors of the same dtype and shape"
            if first.kind != "allgather" else
            "all ranks must pass tensors of the same dtype and the same shape except dimension 0")
    return (f"Mismatched collective '{first.name}' across ranks ({lines}): {hint}, with the same "
            "reduction and root.")


def _check_rows(ready: Ready) -> str | None:
    descriptors = ready.descriptors
    explicit = [bool(d.rows) for d in descriptors]
    if not any(explicit):
        return None
    first = descriptors[0]
    if not all(explicit):
        return (f"Reduce-scatter '{first.name}': ranks {[r for r, e in enumerate(explicit) if e]} "
                "asked for explicit row counts but the others did not; pass rows on every rank.")
    for i, (_, shape) in enumerate(first.specs):
        wanted = [d.rows[i] for d in descriptors]
        if sum(wanted) != shape[0] or min(wanted) < 0:
            return (f"Reduce-scatter '{first.name}': tensor {i} has {shape[0]} rows but the ranks "
                    f"ask for {wanted} (sum {sum(wanted)}); the row counts must add up to the "
                    "rows of the input.")
    return None


def _shapes_agree(kind: str, a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    if kind == "allgather":
        return len(a) == len(b) and len(a) > 0 and a[1:] == b[1:]
    return a == b


def stall_report(table: Table, key: str, timeout_s: float) -> str:
    """The message for a request stalled past the timeout (Horovod's stalled-ranks report)."""
    missing = table.missing_ranks(key)
    waiting = table.waiting_ranks(key)
    return (
        f"Collective '{table.name_of(key)}' stalled: ranks {waiting} submitted it "
        f"{table.age(key):.1f}s ago but ranks {missing} did not within the "
        f"{timeout_s:g}s timeout (stalled ranks: {missing}). Every rank must run the same "
        "collectives in the same order; a rank that skips a step, runs a different number "
        "of steps or died causes this. Raise FLOWMESH_COLLECTIVE_TIMEOUT_S if those ranks "
        "are just slow."
    )
