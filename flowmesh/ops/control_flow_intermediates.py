"""``tf.compat.v1.experimental.output_all_intermediates``: whether ``cond`` and ``while_loop``
output every intermediate of their functions when they are built.

flowmesh's ``If`` and ``While`` (as TensorFlow's control flow v2) gain an output for a
forward intermediate when a gradient needs it (``cond.if_intermediate``,
``while_grad.while_accumulator``). With the setting ``True`` they gain one for every
intermediate at construction, as TensorFlow's ``cond_v2``/``while_v2`` do, so that a
forward graph can be finished (e.g. exported) before its gradient is built. ``None``
restores the default, which in flowmesh is ``False``: TensorFlow's default is ``True`` only
while a Keras layer is built in graph mode, to survive Keras freezing the forward graph,
and flowmesh adds outputs lazily in every case.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.function import FuncGraph
from flowmesh.core.graph import Tensor

_override: bool | None = None


def set_output_all_intermediates(state: bool | None) -> None:
    """``tf.compat.v1.experimental.output_all_intermediates(state)``: ``True``, ``False`` or
    ``None`` (the default behaviour). As in TensorFlow, the value is stored as given."""
    global _override
    _override = state


def output_all_intermediates() -> bool:
    """Whether control flow built now outputs all its intermediates."""
    return bool(_override) if _override is not None else False


def intermediates(graph: FuncGraph, skip: Any = (), skip_identity: bool = False) -> list[Tensor]:
    """The tensors of ``graph`` to output: every op output except ``skip``, the graph's
    outputs and resource handles (and, for a loop body, ``Identity`` outputs), as TensorFlow's
    ``_get_intermediates``."""
    skipped = {id(t) for t in skip} | {id(t) for t in graph.outputs if t is not None}
    found = []
    for op in graph.get_operations():
        if (skip_identity and op.type == "Identity") or op.type == "MutexLock":
            continue
        found.extend(t for t in op.outputs if id(t) not in skipped and t.dtype != dtypes.resource)
    return found
