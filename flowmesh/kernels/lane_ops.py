"""Kernels over stacked lanes: one op applied to many same-shaped values at once.

``flowmesh/runtime/lanes.py`` turns runs of identical small ops (one per variable) into
one node. A value that differs between lanes travels as one tensor whose first axis is
the lane; this module says which ops can run that way and how. Ops in
:data:`ELEMENTWISE` run their own kernel on the stacked operands, each operand's member
shape right-aligned under the result's (``[lanes, 1, ..., 1, *member]``), so broadcasting
between a stacked operand and one shared by every lane is the member's broadcasting.
Reductions with constant axes, reshapes, broadcasts, ``L2Loss`` and variable reads have
their own stacked forms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

ELEMENTWISE = frozenset({
    "Neg", "Abs", "Sign", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Expm1", "Sigmoid",
    "Tanh", "Sin", "Cos", "Floor", "Ceil", "Relu", "Reciprocal", "Identity", "StopGradient",
    "OnesLike", "ZerosLike", "Cast", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
    "SquaredDifference", "Pow", "ReluGrad", "AddN",
})
SAME_SHAPE = frozenset({"ReluGrad"})  # kernels that do not broadcast: shared operands are expanded
RESHAPES = frozenset({"Reshape", "ExpandDims", "Squeeze"})
REDUCTIONS: dict[str, Callable[[torch.Tensor, list[int], bool], torch.Tensor]] = {
    "Sum": lambda x, axes, keep: torch.sum(x, axes, keep, dtype=x.dtype),
    "Mean": lambda x, axes, keep: torch.mean(x, axes, keep),
}
NUMERIC = frozenset({"float16", "bfloat16", "float32", "float64", "int32", "int64"})
READ = "ReadVariableOp"
LIFTABLE = ELEMENTWISE | RESHAPES | frozenset(REDUCTIONS) | {"BroadcastTo", "L2Loss", READ}


def _static_axes(op: Any) -> list[int] | None:
    from flowmesh.ops._builders import constant_value

    value = constant_value(op.inputs[1])
    if value is None:
        return None
    rank = op.inputs[0].shape.rank
    return sorted({int(a) % rank for a in np.asarray(value).reshape(-1)}) if rank else []


def can_lift(op: Any) -> bool:
    """Whether ``op`` (with static shapes, checked by the caller) has a stacked form."""
    if op.type not in LIFTABLE:
        return False
    if op.type in REDUCTIONS:
        return op.inputs[0].dtype.is_floating and _static_axes(op) is not None
    if op.type == READ:
        return op.outputs[0].dtype.name in NUMERIC
    return all(t.dtype.name in NUMERIC for t in list(op.inputs[:1]) + list(op.outputs))


def lift(op: Any, fn: Callable[..., Any], lanes: int) -> tuple[Callable[..., Any], bool]:
    """The stacked form of ``op`` whose kernel is ``fn``.

    Returns:
        ``(kernel, aligned)``: ``kernel`` takes the op's inputs, stacked ones with the lane
        axis first; with ``aligned`` they come right-aligned under the member result's rank.
    """
    kind = op.type
    out_shape = [lanes] + op.outputs[0].shape.as_list()
    if kind in SAME_SHAPE:
        return (lambda *xs: fn(*torch.broadcast_tensors(*xs))), True
    if kind in ELEMENTWISE:
        return fn, True
    if kind in RESHAPES:
        return (lambda x, *_: x.reshape(out_shape)), False
    if kind == "BroadcastTo":
        return (lambda x, *_: x.expand(out_shape)), True
    if kind == "L2Loss":
        return (lambda x: torch.square(x).flatten(1).sum(1) * 0.5), False
    if kind in REDUCTIONS:
        axes, keep, reduce = [a + 1 for a in _static_axes(op)], bool(op.attrs.get("keep_dims")), REDUCTIONS[kind]
        if not axes:
            return (lambda x, *_: x), False
        return (lambda x, *_: reduce(x, axes, keep)), False
    raise KeyError(f"no stacked form for {kind}")


def align(value: torch.Tensor, member_rank: int, rank: int) -> torch.Tensor:
    """A stacked value ``[lanes, *member]`` viewed as ``[lanes, 1, ..., 1, *member]`` of
    ``rank + 1`` dimensions."""
    if member_rank == rank:
        return value
    return value.reshape([value.shape[0]] + [1] * (rank - member_rank) + list(value.shape[1:]))


def stack(values: Sequence[Any]) -> torch.Tensor:
    """Per-lane values as one tensor, lanes first."""
    return torch.stack(list(values))


def read_stacked(reads: Sequence[Callable[[Any], Any]], handles: Sequence[Any]) -> torch.Tensor:
    """Every lane's variable read, stacked (a copy: a snapshot, as a read is)."""
    return torch.stack([read(h) for read, h in zip(reads, handles)])


def unstack(value: Any, lanes: int) -> Sequence[Any]:
    """The lanes of a stacked value as views (a value shared by every lane, repeated)."""
    if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.shape[0] != lanes:
        raise ValueError(f"not a stacked value of {lanes} lanes")
    with torch.no_grad():
        return value.unbind(0)


def broadcast_lanes(value: torch.Tensor, lanes: int) -> torch.Tensor:
    """A value shared by every lane as a stacked one (a view, no copy)."""
    return value.expand([lanes] + list(value.shape))


def sum_lanes(value: torch.Tensor) -> torch.Tensor:
    """``AddN`` of every lane of a stacked value."""
    return value.sum(0, dtype=value.dtype)
