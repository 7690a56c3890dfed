"""``tf.debugging.experimental.enable_dump_debug_info`` / ``disable_dump_debug_info``: dump the
graphs and a per-execution summary of op outputs to a directory, for debugging numerics
after the fact (TensorFlow's Debugger V2 dumping). The ops created while dumping is enabled
are instrumented; the format is flowmesh's own, described in
:mod:`flowmesh.kernels.contract.debug_dump`."""

from __future__ import annotations

import re
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core import graph as _graph
from flowmesh.kernels.contract.debug_dump import (
    TENSOR_DEBUG_MODES,
    DebugDumpWriter,
    active_writer,
    dtype_filter,
    set_active_writer,
)


def enable_dump_debug_info(dump_root: str, tensor_debug_mode: str = "NO_TENSOR", circular_buffer_size: int = 1000,
                           op_regex: str | None = None, tensor_dtypes: Any = None) -> DebugDumpWriter:
    """Dumps the ops created from now on to ``dump_root`` when they run.

    Args:
        dump_root: the directory to write to (created if missing).
        tensor_debug_mode: how much of each output to record: ``NO_TENSOR``, ``CURT_HEALTH``,
            ``CONCISE_HEALTH``, ``FULL_HEALTH``, ``SHAPE`` or ``FULL_TENSOR``.
        circular_buffer_size: keep only the latest this many execution records until a
            flush (``<= 0``: write every record at once).
        op_regex: dump only op types this regex matches (from the start of the type).
        tensor_dtypes: dump only outputs of these dtypes (a list, or a callable of a DType).

    Returns:
        the writer (``FlushExecutionFiles()``, ``FlushNonExecutionFiles()``, ``Close()``).

    Raises:
        ValueError: an empty ``dump_root``, an unknown mode, a bad ``op_regex``, or dumping
            already enabled with another root or mode (disable it first).
        TypeError: a ``circular_buffer_size`` that is not an int, or bad ``tensor_dtypes``.
    """
    if not isinstance(dump_root, str) or not dump_root:
        raise ValueError(f"Empty or None dump root: pass the directory to dump to, got {dump_root!r}")
    if tensor_debug_mode not in TENSOR_DEBUG_MODES:
        raise ValueError(f"Invalid value in tensor_debug_mode ({tensor_debug_mode!r}). Valid options are: "
                         f"{', '.join(TENSOR_DEBUG_MODES)}")
    if not isinstance(circular_buffer_size, int) or isinstance(circular_buffer_size, bool):
        raise TypeError(f"circular_buffer_size must be an int, got {type(circular_buffer_size).__name__}")
    try:
        pattern = re.compile(op_regex) if op_regex is not None else None
    except re.error as error:
        raise ValueError(f"op_regex={op_regex!r} is not a valid regular expression: {error}") from None
    keep = dtype_filter(tensor_dtypes)
    current = active_writer()
    if current is not None:
        if current.dump_root == dump_root and current.tensor_debug_mode == tensor_debug_mode:
            return current
        raise ValueError(f"Dumping is already enabled to {current.dump_root!r} in mode "
                         f"{current.tensor_debug_mode}; call tf.debugging.experimental.disable_dump_debug_info() "
                         "first")
    metadata = {"tensor_debug_mode": tensor_debug_mode, "circular_buffer_size": circular_buffer_size,
                "op_regex": op_regex, "tensor_dtypes": None if tensor_dtypes is None or callable(tensor_dtypes)
                else [dtypes.as_dtype(d).name for d in tensor_dtypes]}
    writer = DebugDumpWriter(dump_root, tensor_debug_mode, circular_buffer_size, keep, metadata)
    set_active_writer(writer)
    _graph.DEBUG_DUMP_OPS[0] = (lambda op_type: pattern.match(op_type) is not None) if pattern else (lambda _: True)
    return writer


def disable_dump_debug_info() -> None:
    """Stops instrumenting new ops and recording, and flushes the dump (a no-op when off)."""
    _graph.DEBUG_DUMP_OPS[0] = None
    set_active_writer(None)
