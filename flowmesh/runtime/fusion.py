"""Update fusion: a run of optimizer updates becomes one multi-tensor kernel call.

``apply_gradients`` creates its ``ResourceApply*`` ops one after another, so in a compiled
program they form a contiguous run (after every gradient is computed). When consecutive
nodes have the same op type and attrs, share their hyperparameter inputs (same learning
rate tensor...) and update distinct variables, :func:`fuse_updates` replaces them with one
node calling the op's multi-variable kernel (``flowmesh/kernels/multi_update.py``):
6 calls per Adam step instead of 6 per variable. Only contiguous runs are fused, so the
order of everything else in the program is unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from flowmesh.kernels.multi_update import MULTI_TENSOR_SHARED, multi_tensor_update

MIN_RUN = 2


def fuse_updates(nodes: Sequence[Any]) -> list[Any]:
    """Returns ``nodes`` with runs of fusable updates replaced by one node each.

    Args:
        nodes: a program's ExecNodes in execution order (not modified).

    Returns:
        A new node list.
    """
    out: list[Any] = []
    i = 0
    while i < len(nodes):
        end = _run_end(nodes, i)
        fused = _fuse(nodes[i:end]) if end - i >= MIN_RUN else None
        if fused is None:
            out.append(nodes[i])
            i += 1
        else:
            out.append(fused)
            i = end
    return out


def _signature(node: Any) -> tuple[Any, ...] | None:
    op = node.op
    if op is None or node.needs_step or node.outputs or op.type not in MULTI_TENSOR_SHARED:
        return None
    shared = tuple(node.inputs[p] for p in MULTI_TENSOR_SHARED[op.type])
    attrs = tuple(sorted((k, v) for k, v in op.attrs.items() if isinstance(v, bool)))
    return op.type, shared, attrs


def _run_end(nodes: Sequence[Any], start: int) -> int:
    """End (exclusive) of the run of same-signature updates starting at ``start``."""
    signature = _signature(nodes[start])
    if signature is None:
        return start + 1
    seen = {nodes[start].inputs[0]}
    end = start + 1
    while end < len(nodes) and _signature(nodes[end]) == signature \
            and nodes[end].inputs[0] not in seen:
        seen.add(nodes[end].inputs[0])
        end += 1
    return end


def _fuse(run: Sequence[Any]) -> Any | None:
    first = run[0]
    fn = multi_tensor_update(first.op.type, len(run), dict(first.op.attrs))
    if fn is None:
        return None
    inputs = [key for node in run for key in node.inputs]
    name = f"{first.name} (+{len(run) - 1} fused: {', '.join(n.name for n in run[1:])})"
    return dataclasses.replace(first, name=name, fn=fn, inputs=inputs)
