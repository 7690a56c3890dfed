"""A collective request submitted to the engine, and the handle its submitter waits on."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from flowmesh.collective.negotiation import KINDS, Descriptor
from flowmesh.errors import CancelledError, DeadlineExceededError, OpError


class Handle:
    """The future result of a request: one output tensor per input tensor."""

    def __init__(self, name: str, num_outputs: int):
        self.name = name
        self._outputs: list[Any] = [None] * num_outputs
        self._left = num_outputs
        self._error: OpError | None = None
        self._event = threading.Event()
        self._lock = threading.Lock()
        if num_outputs == 0:
            self._event.set()

    def set_output(self, index: int, value: torch.Tensor) -> None:
        with self._lock:
            self._outputs[index] = value
            self._left -= 1
            if self._left == 0:
                self._event.set()

    def fail(self, error: OpError) -> None:
        with self._lock:
            if not self._event.is_set():
                self._error = error
                self._event.set()

    def done(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None,
             abort: Callable[[], BaseException | None] | None = None) -> list[torch.Tensor]:
        """Blocks until the collective finished; returns its outputs.

        Args:
            timeout: seconds (e.g. the step's ``RunOptions.timeout_in_ms``), or None. The
                engine bounds every collective by ``FLOWMESH_COLLECTIVE_TIMEOUT_S`` anyway.
            abort: polled while waiting; a non-None result cancels the wait (the step was
                aborted by a failure elsewhere).

        Raises:
            OpError: the collective failed (mismatch, stalled or dead ranks, ...).
            DeadlineExceededError: ``timeout`` passed first.
            CancelledError: ``abort`` reported a failure.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        poll = 0.25 if (abort is not None or deadline is not None) else None
        while not self._event.wait(poll):
            if abort is not None:
                reason = abort()
                if reason is not None:
                    raise CancelledError(
                        None, None, f"Step aborted while waiting for collective '{self.name}': {reason}")
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlineExceededError(
                    None, None, f"Timed out after {timeout:g}s waiting for collective '{self.name}'")
        if self._error is not None:
            err = self._error
            raise type(err)(None, None, err.message)
        return list(self._outputs)


Donation = bool | tuple[bool, ...]  # every tensor, or one flag per tensor


@dataclass
class Request:
    """One collective asked for by this rank.

    Attributes:
        kind: ``allreduce``, ``allgather``, ``broadcast`` or ``reducescatter``.
        key: identifies the instance; must be equal on every rank.
        name: op/tensor name for messages and traces.
        tensors: the inputs (never modified unless ``donated``).
        op: reduction for allreduce/reducescatter (``sum mean max min product``).
        root: root rank for broadcast.
        sinks: ``(step trace list, TraceLane)`` pairs that receive this request's events.
        rows: reduce-scatter only: rows of each tensor this rank gets (default: even split).
        donated: the submitter gives up ``tensors`` (nobody reads them afterwards), so an
            all-reduce or broadcast may work in place and return them as its outputs, as
            Horovod's ``allreduce_`` and raw ``torch.distributed`` do: ``True`` for all of
            them, or one flag per tensor. A local property: ranks may differ, nothing on
            the wire changes.
    """

    kind: str
    key: str
    name: str
    tensors: list[torch.Tensor]
    op: str = ""
    root: int = 0
    sinks: list[tuple[list[Any], Any]] = field(default_factory=list)
    rows: tuple[int, ...] = ()
    donated: Donation = False
    handle: Handle = field(init=False)
    descriptor: Descriptor = field(init=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Unknown collective kind {self.kind!r}; expected one of {KINDS}")
        devices = {t.device.type for t in self.tensors}
        if len(devices) > 1:
            raise ValueError(f"Collective '{self.name}' mixes tensors on {sorted(devices)}; "
                             "put every tensor of one collective on the same kind of device")
        specs = tuple((dtype_name(t.dtype), tuple(t.shape)) for t in self.tensors)
        device = devices.pop() if devices else "cpu"
        if self.rows and len(self.rows) != len(self.tensors):
            raise ValueError(f"Reduce-scatter '{self.name}' got {len(self.rows)} row counts for "
                             f"{len(self.tensors)} tensors")
        self.descriptor = Descriptor(self.key, self.kind, self.op, self.root, self.name, specs,
                                     device, tuple(self.rows))
        self.handle = Handle(self.name, len(self.tensors))
        if not isinstance(self.donated, bool):
            self.donated = tuple(bool(d) for d in self.donated)
            if len(self.donated) != len(self.tensors):
                raise ValueError(f"Collective '{self.name}' got {len(self.donated)} donation "
                                 f"flags for {len(self.tensors)} tensors")

    def donates(self, index: int) -> bool:
        """Whether the submitter gave up tensor ``index`` (see ``donated``)."""
        return self.donated if isinstance(self.donated, bool) else self.donated[index]


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float32`` -> ``"float32"`` (flowmesh's dtype names)."""
    return str(dtype).replace("torch.", "")
