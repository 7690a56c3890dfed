"""The profiler's extra facts per op (TensorFlow's ``tfprof_logger``): float operations from
the op's shapes, the type ``_trainable_variables`` for trainable variables, and where in the
program the op was created; merged with a caller's ``OpLogProto`` and written by
``tf.profiler.write_op_log`` as ``<log_dir>/tfprof_log``."""

from __future__ import annotations

import linecache
import logging
import os
from typing import Any

from flowmesh.core.graph import Graph, get_default_graph
from flowmesh.core.graph_keys import GraphKeys
from flowmesh.gfile import GFile
from flowmesh.profiler.flops import IncompleteShapeError, float_ops
from flowmesh.protos.tfprof import OpLogEntry, OpLogProto

TRAINABLE_VARIABLES = "_trainable_variables"
"""The op type the profiler gives the ops of trainable variables (for ``account_type_regexes``)."""

_log = logging.getLogger("flowmesh.profiler")


def _string_id(text: str, string_to_id: dict[str, int]) -> int:
    return string_to_id.setdefault(text, len(string_to_id))


def _add_trace(op: Any, entry: Any, string_to_id: dict[str, int]) -> None:
    if op.traceback is None:
        return
    filename, lineno = op.traceback
    trace = entry.code_def.traces.add()
    trace.file_id = _string_id(filename, string_to_id) if filename else 0
    trace.lineno = lineno or -1
    line = linecache.getline(filename, lineno).strip() if filename and lineno else ""
    trace.line_id = _string_id(line, string_to_id) if line else 0
    trace.func_start_line = -1


def logged_ops(graph: Graph, add_trace: bool = True,
               add_trainable_var: bool = True) -> tuple[dict[str, Any], dict[str, int]]:
    """``{op name: OpLogEntry}`` for the ops with facts to log, and the string table of
    the code traces (TensorFlow's ``_get_logged_ops``)."""
    entries: dict[str, Any] = {}
    string_to_id = {"none": 0}
    missing_shape = 0
    for op in graph.get_operations():
        entry = OpLogEntry(name=op.name)
        try:
            flops = float_ops(op, op.node_def)
        except IncompleteShapeError:
            missing_shape += 1
            flops = None
        if flops:
            entry.float_ops = flops
        if add_trace:
            _add_trace(op, entry, string_to_id)
        if flops or add_trace:
            entries[op.name] = entry
    if add_trainable_var:
        for variable in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES):
            name = variable.op.name
            entries.setdefault(name, OpLogEntry(name=name)).types.append(TRAINABLE_VARIABLES)
    if missing_shape:
        _log.warning("%d ops no flops stats due to incomplete shapes.", missing_shape)
    return entries, string_to_id


def merge_default_with_oplog(graph: Graph | None, op_log: Any = None, run_meta: Any = None,
                             add_trace: bool = True, add_trainable_var: bool = True) -> Any:
    """The ``OpLogProto`` of ``graph`` (float operations, trainable variables, traces)
    merged into a copy of the caller's ``op_log``: the caller's types are kept and extended,
    its float operations and traces win where it has them. ``run_meta`` is accepted for
    TensorFlow's signature (flowmesh's graphs carry the shapes the run would complete)."""
    graph = graph or get_default_graph()
    entries, string_to_id = logged_ops(graph, add_trace, add_trainable_var)
    merged = OpLogProto()
    if op_log:
        given = {entry.name: entry for entry in op_log.log_entries}
        for name, entry in entries.items():
            mine = given.get(name)
            if mine is None:
                given[name] = entry
                continue
            mine.types.extend(entry.types)
            if entry.float_ops > 0 and mine.float_ops == 0:
                mine.float_ops = entry.float_ops
            if entry.code_def.traces and not mine.code_def.traces:
                mine.code_def.MergeFrom(entry.code_def)
        entries = given
    merged.log_entries.extend(entries.values())
    for text, index in string_to_id.items():
        merged.id_to_string[index] = text
    return merged


def write_op_log(graph: Graph | None, log_dir: str, op_log: Any = None, run_meta: Any = None,
                 add_trace: bool = True) -> None:
    """Writes ``graph``'s merged ``OpLogProto`` (see :func:`merge_default_with_oplog`) to
    ``<log_dir>/tfprof_log``, for TensorFlow's ``tfprof`` command line.

    Raises:
        NotFoundError / PermissionDeniedError: ``log_dir`` cannot be written.
    """
    merged = merge_default_with_oplog(graph, op_log, run_meta, add_trace)
    with GFile(os.path.join(log_dir, "tfprof_log"), "wb") as log:
        log.write(merged.SerializeToString())
