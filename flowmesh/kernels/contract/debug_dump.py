"""The run-time side of ``tf.debugging.experimental.enable_dump_debug_info``: ops created
while dumping is enabled get a kernel that, after computing, records a summary of each
output in the active :class:`DebugDumpWriter`, which writes them under the dump root.

Dump format (flowmesh's own; TensorFlow's is ``.tfdbg_events`` protobuf files):

* ``<dump_root>/metadata.json``: ``{"format": "flowmesh-debug-dump/1", "tensor_debug_mode",
  "circular_buffer_size", "op_regex", "tensor_dtypes"}``;
* ``<dump_root>/graphs/graph_<id>.pb``: the binary ``GraphDef`` of each graph whose ops were
  dumped, ``<id>`` numbering graphs in the order their first op ran;
* ``<dump_root>/graph_execution_traces.jsonl``: one JSON object per executed op output:
  ``seq`` (running number), ``wall_time`` (seconds since the epoch), ``graph_id``,
  ``op_name``, ``op_type``, ``output_slot``, ``dtype``, ``shape`` and, by mode:
  ``NO_TENSOR`` nothing more; ``CURT_HEALTH`` ``any_inf_or_nan``; ``CONCISE_HEALTH``
  ``size``, ``neg_inf``, ``pos_inf``, ``nan``; ``FULL_HEALTH`` those and ``rank``,
  ``negative``, ``zero``, ``positive`` (finite counts); ``SHAPE`` ``rank``, ``size``;
  ``FULL_TENSOR`` ``value`` (the tensor as nested lists; strings as text).

Only kernels that run are recorded: an op whose value the runtime reuses from an earlier
step (a subgraph of constants) appears in the steps that computed it.

With ``circular_buffer_size > 0`` only the most recent that many records are kept in memory
and written when the writer is flushed (``FlushExecutionFiles()``, at disable and at exit);
with ``<= 0`` every record is written at once.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes

TENSOR_DEBUG_MODES = ("NO_TENSOR", "CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE", "FULL_TENSOR")


def _health(value: torch.Tensor, full: bool) -> dict[str, Any]:
    flat = value.detach().reshape(-1)
    summary: dict[str, Any] = {"size": int(flat.numel())}
    floating = flat.is_floating_point() or flat.is_complex()
    real = flat.real if flat.is_complex() else flat
    nan = torch.isnan(real) if floating else torch.zeros_like(flat, dtype=torch.bool)
    pos_inf = torch.isposinf(real) if floating else torch.zeros_like(flat, dtype=torch.bool)
    neg_inf = torch.isneginf(real) if floating else torch.zeros_like(flat, dtype=torch.bool)
    summary.update(neg_inf=int(neg_inf.sum()), pos_inf=int(pos_inf.sum()), nan=int(nan.sum()))
    if full and flat.dtype != torch.bool:
        finite = real[~(nan | pos_inf | neg_inf)]
        summary.update(rank=value.dim(), negative=int((finite < 0).sum()), zero=int((finite == 0).sum()),
                       positive=int((finite > 0).sum()))
    elif full:
        summary.update(rank=value.dim())
    return summary


def summarize(value: Any, mode: str) -> dict[str, Any]:
    """The mode's summary fields of one output value (see the module docstring)."""
    if mode == "NO_TENSOR":
        return {}
    if mode == "FULL_TENSOR":
        array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value, dtype=object)
        if array.dtype == object:
            array = np.vectorize(lambda b: b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b),
                                 otypes=[object])(array) if array.size else array
        return {"value": array.tolist()}
    if not isinstance(value, torch.Tensor):
        array = np.asarray(value, dtype=object)
        return {"size": int(array.size), "rank": array.ndim} if mode in ("SHAPE", "FULL_HEALTH") else {}
    if mode == "SHAPE":
        return {"rank": value.dim(), "size": int(value.numel())}
    health = _health(value, mode == "FULL_HEALTH")
    if mode == "CURT_HEALTH":
        return {"any_inf_or_nan": bool(health["nan"] or health["pos_inf"] or health["neg_inf"])}
    return health


class DebugDumpWriter:
    """Collects the dumped outputs and writes them under ``dump_root`` (TensorFlow's
    ``DebugEventsWriter`` methods: ``FlushNonExecutionFiles``, ``FlushExecutionFiles``,
    ``Close``)."""

    def __init__(self, dump_root: str, tensor_debug_mode: str, circular_buffer_size: int,
                 dtype_filter: Callable[[Any], bool], metadata: dict[str, Any]) -> None:
        self.dump_root = dump_root
        self.tensor_debug_mode = tensor_debug_mode
        self._buffered = circular_buffer_size > 0
        self._records: deque[str] = deque(maxlen=circular_buffer_size if self._buffered else None)
        self._dtype_filter = dtype_filter
        self._lock = threading.Lock()
        self._seq = 0
        self._graphs: dict[int, tuple[int, Any]] = {}
        self._written_graphs: set[int] = set()
        os.makedirs(os.path.join(dump_root, "graphs"), exist_ok=True)
        with open(os.path.join(dump_root, "metadata.json"), "w", encoding="utf-8") as f:
            json.dump({"format": "flowmesh-debug-dump/1", **metadata}, f, indent=1)
        self._traces_path = os.path.join(dump_root, "graph_execution_traces.jsonl")
        open(self._traces_path, "a", encoding="utf-8").close()

    def _graph_id(self, graph: Any) -> int:
        entry = self._graphs.get(id(graph))
        if entry is None:
            entry = self._graphs[id(graph)] = (len(self._graphs), graph)
        return entry[0]

    def record(self, op: Any, outputs: tuple[Any, ...]) -> None:
        """Adds one record per output of ``op`` whose dtype passes the filter."""
        lines = []
        with self._lock:
            graph_id = self._graph_id(op.graph)
            for slot, value in enumerate(outputs):
                tensor = op.outputs[slot] if slot < len(op.outputs) else None
                dtype = tensor.dtype if tensor is not None else None
                if dtype is None or not self._dtype_filter(dtype):
                    continue
                shape = list(value.shape) if hasattr(value, "shape") else []
                record = {"seq": self._seq, "wall_time": time.time(), "graph_id": graph_id, "op_name": op.name,
                          "op_type": op.type, "output_slot": slot, "dtype": dtype.name, "shape": shape,
                          **summarize(value, self.tensor_debug_mode)}
                self._seq += 1
                lines.append(json.dumps(record))
            self._records.extend(lines)
        if not self._buffered:
            self.FlushExecutionFiles()

    def FlushNonExecutionFiles(self) -> None:  # noqa: N802 - TensorFlow's name
        """Writes the ``GraphDef`` of every graph seen and not yet written."""
        with self._lock:
            pending = [(gid, g) for gid, g in self._graphs.values() if gid not in self._written_graphs]
            self._written_graphs.update(gid for gid, _ in pending)
        for gid, graph in pending:
            path = os.path.join(self.dump_root, "graphs", f"graph_{gid}.pb")
            with open(path, "wb") as f:
                f.write(graph.as_graph_def().SerializeToString())

    def FlushExecutionFiles(self) -> None:  # noqa: N802 - TensorFlow's name
        """Appends the buffered execution records to ``graph_execution_traces.jsonl``."""
        with self._lock:
            lines = list(self._records)
            self._records.clear()
        if lines:
            with open(self._traces_path, "a", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
        self.FlushNonExecutionFiles()

    def Close(self) -> None:  # noqa: N802 - TensorFlow's name
        """Flushes everything."""
        self.FlushExecutionFiles()


_active: list[DebugDumpWriter | None] = [None]


def active_writer() -> DebugDumpWriter | None:
    """The writer dumped kernels report to, or None when dumping is off."""
    return _active[0]


def set_active_writer(writer: DebugDumpWriter | None) -> None:
    """Makes ``writer`` the one dumped kernels report to (None: stop recording)."""
    previous = _active[0]
    _active[0] = writer
    if previous is not None and previous is not writer:
        previous.Close()


def dumped_outputs(op: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` followed by recording its outputs in the active writer (if any)."""

    def run(*args: Any) -> Any:
        out = fn(*args)
        writer = _active[0]
        if writer is not None:
            writer.record(op, out if isinstance(out, tuple) else (out,))
        return out

    return run


def dtype_filter(tensor_dtypes: Any) -> Callable[[Any], bool]:
    """A predicate on DTypes from TensorFlow's ``tensor_dtypes`` argument: None (all), a
    list of dtypes or dtype names, or a callable taking a DType.

    Raises:
        TypeError: any other value.
    """
    if tensor_dtypes is None:
        return lambda dtype: True
    if callable(tensor_dtypes):
        return lambda dtype: bool(tensor_dtypes(dtype))
    if isinstance(tensor_dtypes, (list, tuple)):
        wanted = {dtypes.as_dtype(d) for d in tensor_dtypes}
        return lambda dtype: dtype in wanted
    raise TypeError(f"tensor_dtypes must be None, a list or tuple of dtypes, or a callable taking a DType; "
                    f"got {type(tensor_dtypes).__name__}")


atexit.register(lambda: _active[0].Close() if _active[0] is not None else None)
