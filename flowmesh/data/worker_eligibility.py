"""Which pipelines may run in a forked worker process (decided when ``prefetch`` is built).

An iterator whose outermost stage is ``prefetch`` runs the stages below it in a worker
process (``kernels/pipeline/worker_process.py``) when they compute their elements from
nothing but their own inputs. The child is a fork of the training process taken when the
iterator starts, so everything the pipeline reads then (captured tensor values, file
names, the dataset definitions) is the same in both; what it may *not* do is share state
with the parent afterwards. A pipeline stays on threads when

* a stage is a Python generator (``from_generator``): its generator object lives in the
  parent and other code may share it;
* a function (``map``, ``filter``, ``interleave``...) holds a stateful op (random ops,
  variables, lookup tables, ``py_func``...) other than ``Assert``/``Print``: its state
  (a random stream, a variable's value) would advance in the child while the parent's
  stays behind, so re-initialised iterators or other readers would see other values;
* an element holds a nested dataset (``window`` without a ``flat_map``): it cannot cross
  a process boundary.

Everything else (readers, ``parse_example``, ``decode_*``, arithmetic, ``shuffle``,
``batch``, ``cache``...) is eligible.
"""

from __future__ import annotations

from flowmesh.core import dtypes
from flowmesh.core.function import FuncGraph
from flowmesh.core.graph import Operation, Tensor

# stateful ops whose only effect is on the process's output streams or an error
_HARMLESS_STATEFUL = frozenset({"Assert", "Print", "PrintV2"})
_NOT_FORKABLE_SOURCES = frozenset({"GeneratorDataset"})


def worker_process_eligible(variant: Tensor, holds_datasets: bool) -> bool:
    """Whether the pipeline producing ``variant`` may run in a forked worker process
    (``holds_datasets``: its elements hold nested datasets, which never may)."""
    return not holds_datasets and _stages_eligible(variant.op, set())


def _stages_eligible(op: Operation, seen: set[Operation]) -> bool:
    stack = [op]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current.type in _NOT_FORKABLE_SOURCES or not _functions_eligible(current, seen):
            return False
        for tensor in current.inputs:  # other inputs are values the parent computes
            if tensor.dtype == dtypes.variant:
                stack.append(tensor.op)
    return True


def _functions_eligible(op: Operation, seen: set[Operation]) -> bool:
    for value in op.attrs.values():
        if isinstance(value, FuncGraph) and not _graph_eligible(value, seen):
            return False
    return True


def _graph_eligible(graph: FuncGraph, seen: set[Operation]) -> bool:
    for op in graph.get_operations():
        if op in seen:
            continue
        seen.add(op)
        op_def = op.op_def
        if op.type in _NOT_FORKABLE_SOURCES or not op_def.serializable:
            return False
        if op_def.stateful and op.type not in _HARMLESS_STATEFUL:
            return False
        if not _functions_eligible(op, seen):
            return False
    return True
