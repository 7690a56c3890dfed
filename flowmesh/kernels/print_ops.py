"""Kernels of ``flowmesh/ops/print_ops.py``: ``StringFormat`` and ``PrintV2``.

Tensor summaries follow TensorFlow's ``print``: ``[1 2 3 ... 8 9 10]`` (``summarize``
entries at each end of a dimension), rows on new lines indented by depth, a blank line
between blocks of rank 3 and more, strings quoted, bools as ``1``/``0``, float and half
with 6 significant digits when that round-trips (else 9), double 15 (else 17)."""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import numpy as np

from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _float_text(value: float, short: int, long: int, as_type: Any) -> str:
    if np.isnan(value):
        return "nan"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.{short}g}"
    if as_type(float(text)) != as_type(value):
        text = f"{value:.{long}g}"
    return text


def _scalar(value: Any) -> str:
    if isinstance(value, bytes):
        return '"' + value.decode("utf-8", errors="backslashreplace") + '"'
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, np.float64):
        return _float_text(float(value), 15, 17, np.float64)
    if isinstance(value, np.complexfloating):
        return f"({_scalar(value.real)},{_scalar(value.imag)})"
    if isinstance(value, np.floating) or type(value).__name__ == "bfloat16":
        return _float_text(float(value), 6, 9, np.float32)
    return str(value)


def _kept(n: int, limit: int) -> list[int | None]:
    if limit < 0 or n <= 2 * limit:
        return list(range(n))
    return list(range(limit)) + [None] + list(range(n - limit, n))


def summarize_v2(array: np.ndarray, limit: int, depth: int = 0) -> str:
    """TensorFlow's print summary of ``array`` (see the module docstring)."""
    if array.ndim == 0:
        return _scalar(array[()])
    if array.ndim == 1:
        return "[" + " ".join("..." if i is None else _scalar(array[i]) for i in _kept(len(array), limit)) + "]"
    sep = "\n" * (array.ndim - 1) + " " * (depth + 1)
    rows = ["..." if i is None else summarize_v2(array[i], limit, depth + 1) for i in _kept(len(array), limit)]
    return "[" + sep.join(rows) + "]"


@kernel("StringFormat", device_types=("CPU",))
def _string_format(ctx: KernelContext):
    pieces = ctx.attr("template").split(ctx.attr("placeholder"))
    limit = ctx.attr("summarize", 3)

    def run(*tensors: Any) -> Any:
        parts = [pieces[0]]
        for tensor, piece in zip(tensors, pieces[1:]):
            parts.append(summarize_v2(np.asarray(to_numpy(tensor, copy=False)), limit))
            parts.append(piece)
        return np.array("".join(parts).encode("utf-8"), dtype=object)

    return run


def _writer(stream: str):
    if stream in ("stdout", "stderr"):
        target = stream

        def write(text: str) -> None:
            out = sys.stdout if target == "stdout" else sys.stderr
            out.write(text)
            out.flush()

        return write
    if stream.startswith("log("):
        log = getattr(logging.getLogger("flowmesh"), stream[4:-1])  # tf.logging's logger
        return lambda text: log(text.rstrip("\n"))
    path = stream[len("file://"):]

    def append(text: str) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)

    return append


@kernel("PrintV2", device_types=("CPU",))
def _print_v2(ctx: KernelContext):
    write, end = _writer(ctx.attr("output_stream")), ctx.attr("end")
    lock = threading.Lock()

    def run(text: Any) -> None:
        value = text.item() if isinstance(text, np.ndarray) else text
        with lock:
            write((value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)) + end)

    return run
