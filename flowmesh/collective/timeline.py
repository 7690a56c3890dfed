"""Trace events of the collective engine: negotiations, fused buckets, transfers.

Events reach two places:

* the step trace of a traced ``Session.run`` (``RunOptions(trace_level=FULL_TRACE)``):
  each engine adds a lane named ``<device>/collective:<group>`` to
  ``run_metadata.step_stats.dev_stats``, next to the kernels' own lanes and on the same
  clock, so the overlap of a bucket's all-reduce with the rest of backprop is visible;
* a Chrome-trace file (``chrome://tracing``, Perfetto) when
  ``FLOWMESH_COLLECTIVE_TIMELINE=path`` is set (Horovod's ``HOROVOD_TIMELINE``).

``flowmesh.runtime.timeline.Timeline(run_metadata.step_stats)`` turns a traced step,
kernels and collective lanes together, into a Chrome trace.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from flowmesh import config as _config


@dataclass
class Event:
    """One timed engine activity.

    Attributes:
        kind: ``negotiate``, ``allreduce``, ``allgather``, ``broadcast``, ``reducescatter``.
        names: the collectives (op names) it served; several for a fused bucket.
        nbytes: payload bytes moved by this rank.
        start, end: ``time.perf_counter()`` seconds.
        tensors: number of tensors in a fused bucket.
        inline: the data travelled with the negotiation (a small all-reduce).
        speculative: a steady-state all-reduce that skipped the negotiation.
        in_place: ran on a donated input tensor, without packing a copy.
    """

    kind: str
    names: list[str]
    nbytes: int
    start: float
    end: float
    tensors: int = 1
    inline: bool = False
    speculative: bool = False
    in_place: bool = False

    @property
    def label(self) -> str:
        if self.kind == "negotiate":
            return f"negotiate {len(self.names)} request(s)"
        fused = f" fused x{self.tensors}" if self.tensors > 1 else ""
        how = " (sent with the negotiation)" if self.inline else ""
        how += " (speculative: no negotiation)" if self.speculative else ""
        how += " (in place)" if self.in_place else ""
        return f"{self.kind}{fused} {_mb(self.nbytes)}{how}"


@dataclass
class _LaneNode:
    """Looks like an executor node to ``flowmesh.runtime.timeline`` (no inputs, no op)."""

    name: str
    op_type: str
    inputs: tuple = ()
    op: Any = None


@dataclass
class TraceLane:
    """A device lane in a step trace; duck-types the executor's ``Program`` (``name`` and
    ``nodes``) so ``Session.run`` folds it into ``RunMetadata``."""

    name: str
    nodes: list[_LaneNode] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, trace: list[Any], event: Event) -> None:
        """Appends ``event`` to ``trace`` (the step's trace list)."""
        names = ", ".join(event.names)
        if len(names) > 200:
            names = names[:197] + "..."
        with self._lock:
            self.nodes.append(_LaneNode(f"{event.label}: {names}", f"Collective:{event.kind}"))
            index = len(self.nodes) - 1
        trace.append((self, index, event.start, event.end))


class TimelineWriter:
    """Appends events to a Chrome-trace JSON file (array format, one event per line)."""

    def __init__(self, path: str, rank: int):
        self._path = path
        self._rank = rank
        self._lock = threading.Lock()
        self._origin = time.perf_counter()
        self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._file.write("[\n")

    def write(self, event: Event, lane: str) -> None:
        record = {
            "name": event.label, "cat": "collective", "ph": "X", "pid": self._rank, "tid": lane,
            "ts": (event.start - self._origin) * 1e6, "dur": (event.end - event.start) * 1e6,
            "args": {"names": event.names, "bytes": event.nbytes, "tensors": event.tensors},
        }
        with self._lock:
            self._file.write(json.dumps(record) + ",\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.write("{}]\n")
                self._file.close()


def open_timeline(rank: int) -> TimelineWriter | None:
    """A writer for ``FLOWMESH_COLLECTIVE_TIMELINE`` (``{rank}`` in the path is replaced),
    or None when it is unset."""
    path = _config.COLLECTIVE_TIMELINE.get()
    if not path:
        return None
    path = path.replace("{rank}", str(rank))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return TimelineWriter(path, rank)


def _mb(nbytes: int) -> str:
    if nbytes >= 1 << 20:
        return f"{nbytes / (1 << 20):.1f} MB"
    if nbytes >= 1 << 10:
        return f"{nbytes / (1 << 10):.1f} KB"
    return f"{nbytes} B"
