"""Small variables updated together, kept in one buffer: a fused update is a few big ops.

A fused optimizer update (``runtime/fusion.py``) applies the same arithmetic to every
variable of a run. ``torch._foreach_*`` still costs a kernel call per variable on the CPU
(2-3 us each), so an Adam step over 2000 small variables spends tens of milliseconds in
call overhead. For runs of many small variables, :class:`Coalesced` moves the storage of
one column (the weights, or one optimizer slot) once into a single flat buffer: each
``VariableState.value`` becomes a contiguous view of it, so every other kernel reads and
writes the same tensors as before, and the update runs each op once over the buffer.

A variable whose value is replaced (a restore, an assign of another shape) is no longer a
view of the buffer; the next update notices (an identity check per variable) and moves
the column again.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import torch

from flowmesh.kernels.contract.resources import VariableState

MIN_VARIABLES = 16
MAX_AVERAGE_ELEMENTS = 4096


def worth_coalescing(values: Sequence[Any]) -> bool:
    """Many small tensors of one dtype: where one op over a buffer beats one per tensor."""
    if len(values) < MIN_VARIABLES or not all(isinstance(v, torch.Tensor) for v in values):
        return False
    first = values[0]
    if any(v.dtype != first.dtype or v.device != first.device for v in values):
        return False
    return sum(v.numel() for v in values) <= MAX_AVERAGE_ELEMENTS * len(values)


class Coalesced:
    """One column of a fused update: variables whose values are views of one buffer."""

    def __init__(self) -> None:
        self._states: tuple[VariableState, ...] = ()
        self._views: tuple[Any, ...] = ()
        self.buffer: torch.Tensor | None = None
        self.declined = False  # these variables are too few or too big: one op per variable

    def flat(self, states: Sequence[VariableState]) -> torch.Tensor | None:
        """The buffer holding every variable of ``states`` (moving them there first if
        needed), or None where they cannot share one (uninitialized, mixed dtypes)."""
        if self.declined:
            return None
        values = [s.value for s in states]
        if (self.buffer is not None and len(states) == len(self._states)
                and all(map(operator.is_, states, self._states))
                and all(map(operator.is_, values, self._views))):
            return self.buffer
        return self._coalesce(states)

    def _coalesce(self, states: Sequence[VariableState]) -> torch.Tensor | None:
        """Moves the column into a new buffer (under the caller's locks, as the update)."""
        values = [s.value for s in states]
        self.buffer = None
        if any(v is None for v in values):
            return None
        if not worth_coalescing(values):
            self.declined = True
            return None
        buffer = torch.cat([v.reshape(-1) for v in values])
        for state, view, value in zip(states, buffer.split([v.numel() for v in values]), values):
            state.value = view.view(value.shape)
        self._states, self._views, self.buffer = tuple(states), tuple(s.value for s in states), buffer
        return buffer


def flat_values(values: Sequence[Any], like: torch.Tensor) -> torch.Tensor | None:
    """``values`` (the gradients of a column) as one flat tensor matching ``like``: the
    tensor they are consecutive views of when they are (lanes of a stacked gradient,
    ``runtime/lanes.py``), else a concatenation."""
    flat = _consecutive_views(values)
    if flat is None:
        flat = torch.cat([v.reshape(-1) for v in values])
    if flat.shape != like.shape or flat.dtype != like.dtype:
        return None
    return flat


def _consecutive_views(values: Sequence[Any]) -> torch.Tensor | None:
    """The contiguous tensor whose consecutive pieces ``values`` are, in order, or None."""
    first = values[0]
    base = getattr(first, "_base", None)
    if base is None or not base.is_contiguous() or base.numel() != first.numel() * len(values):
        return None
    start, step = base.data_ptr(), first.numel() * first.element_size()
    for i, v in enumerate(values):
        if v._base is not base or v.data_ptr() != start + i * step or v.shape != first.shape \
                or not v.is_contiguous():
            return None
    return base.reshape(-1)
