"""Kernels of ``flowmesh/ops/logging_ops.py``: ``Assert`` and ``Print``.

Values are summarized as TensorFlow does: at most ``summarize`` elements, rows in
brackets, ``...`` when truncated (``[1 2 3...]``, ``[[1 2][3 4]]``).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.registry import KernelContext, kernel


def summarize(value: Any, limit: int) -> str:
    """TensorFlow's ``SummarizeValue``: the text of a value with at most ``limit`` items."""
    array = np.asarray(to_numpy(value, copy=False))
    if array.ndim == 0:
        return _scalar(array[()])
    flat = array.reshape(-1)
    shown = flat if limit < 0 else flat[:limit]
    items = [_scalar(v) for v in shown]
    text = _nest(items, list(array.shape))
    return text + ("..." if len(shown) < flat.size else "")


def _nest(items: list[str], shape: list[int]) -> str:
    if len(shape) <= 1:
        return " ".join(items)
    inner = int(np.prod(shape[1:])) or 1
    rows = [items[i:i + inner] for i in range(0, len(items), inner)]
    return "".join(f"[{_nest(row, shape[1:])}]" for row in rows)


def _scalar(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        text = str(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


@kernel("Assert")
def _assert(ctx: KernelContext):
    limit = ctx.attr("summarize", 3)

    def run(condition: Any, *data: Any) -> None:
        if getattr(condition, "ndim", 0) != 0:
            raise InvalidArgumentError(
                f"In[0] is not a scalar: {list(condition.shape)} (the condition of tf.Assert "
                "must be a scalar bool)"
            )
        if not bool(condition):
            parts = " ".join(f"[{summarize(x, limit)}]" for x in data)
            raise InvalidArgumentError(f"assertion failed: {parts}")

    return run


@kernel("Print")
def _print(ctx: KernelContext):
    message = ctx.attr("message", "")
    first_n = ctx.attr("first_n", -1)
    limit = ctx.attr("summarize", 3)
    lock = threading.Lock()
    count = [0]

    def run(value: Any, *data: Any) -> Any:
        with lock:
            count[0] += 1
            show = first_n < 0 or count[0] <= first_n
        if show:
            line = message + "".join(f"[{summarize(x, limit)}]" for x in data)
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        return value

    return run


@kernel("CheckNumerics")
def _check_numerics(ctx: KernelContext):
    message = ctx.attr("message", "")

    def run(x: Any) -> Any:
        if not bool(torch.isfinite(x).all()):
            kind = "NaN" if bool(torch.isnan(x).any()) else "Inf"
            raise InvalidArgumentError(f"{message} : Tensor had {kind} values")
        return x

    return run
