"""The run-time side of ``tf.debugging.enable_check_numerics``: an op created while it is
enabled gets a kernel that checks every floating output for NaN and Inf after computing
it and fails the step with ``InvalidArgumentError`` naming the op, its type, the output
slot, dtype and shape (TensorFlow's ``CheckNumericsV2`` instrumentation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError


def _check(op: Any, index: int, value: Any) -> None:
    if not isinstance(value, torch.Tensor) or not (value.is_floating_point() or value.is_complex()):
        return
    finite = torch.isfinite(value)
    if bool(finite.all()):
        return
    kinds = [k for k, bad in (("NaN", torch.isnan(value).any()), ("Inf", torch.isinf(value).any())) if bool(bad)]
    raise InvalidArgumentError(
        None, op,
        f"\n!!! Detected Infinity or NaN in output {index} of graph op \"{op.name}\" (# of outputs: "
        f"{len(op.outputs)}) !!!\n  dtype: {op.outputs[index].dtype.name}\n  shape: {list(value.shape)}\n"
        f"  {' and '.join(kinds)} found in {int((~finite).sum())} of {value.numel()} elements\n"
        f"  op type: {op.type}")


def checked_numerics(op: Any, fn: Callable[..., Any], needs_step: bool) -> Callable[..., Any]:
    """``fn`` followed by a NaN/Inf check of its floating outputs."""

    def run(*args: Any) -> Any:
        out = fn(*args)
        values = out if isinstance(out, tuple) else (out,)
        for i, v in enumerate(values):
            _check(op, i, v)
        return out

    return run
