"""Symbolic reverse-mode differentiation: ``tf.gradients`` and ``tf.hessians``.

Gradients are built from graph ops (so second derivatives work) by walking the ops
between ``xs`` and ``ys`` in reverse topological order and calling each op type's
registered gradient function. Contributions to one tensor are summed (``AddN``), or
concatenated when they are all :class:`IndexedSlices`.

A variable in ``xs`` is differentiated through its resource handle, so every read of
it (``v.value()``, ``v.read_value()``, sparse gathers) contributes.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import deque
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes, registry
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, graph_of
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops.xla_compile import xla_gradient_scope

# The name scope of the outermost tf.gradients call being built ("gradients", "gradients_1"):
# TensorArray gradients key their gradient arrays by it (TensorFlow's "grad source"), also
# from gradient functions of loop bodies, whose ops live in other graphs.
_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("gradient_source",
                                                                    default=None)


def gradient_source() -> str | None:
    """The name scope of the ``tf.gradients`` call being built, or None outside one."""
    return _SOURCE.get()


_BACKPROP_DTYPES = {"float16", "bfloat16", "float32", "float64", "complex64", "complex128",
                    "resource", "variant"}


def _backpropagatable(t: Tensor) -> bool:
    return t.dtype.name in _BACKPROP_DTYPES


def _as_x(x: Any) -> Tensor:
    handle = getattr(x, "handle", None)
    if isinstance(handle, Tensor) and handle.dtype == dtypes.resource:
        return handle
    return convert_to_tensor(x)


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str = "gradients",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
    stop_gradients: Any = None,
    unconnected_gradients: str = "none",
) -> list[Any]:
    """Symbolic partial derivatives of ``sum(ys)`` with respect to each of ``xs``.

    Args:
        ys: a tensor or list of tensors to differentiate.
        xs: tensors or variables to differentiate with respect to.
        grad_ys: initial gradients for each y (default: ones).
        stop_gradients: tensors held constant (their inputs get no gradient through them).
        unconnected_gradients: ``"none"`` (return None) or ``"zero"``.

    Returns:
        One entry per x: a Tensor, an IndexedSlices (sparse), or None if unconnected.

    Raises:
        LookupError: an op on the path has no registered gradient.
    """
    ys_list = [convert_to_tensor(y) for y in _as_list(ys)]
    xs_list = [_as_x(x) for x in _as_list(xs)]
    grad_ys_list = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys_list)
    if len(grad_ys_list) != len(ys_list):
        raise ValueError(f"Passed {len(grad_ys_list)} grad_ys for {len(ys_list)} ys")
    stop_ops = {t.op for t in (convert_to_tensor(s) for s in _as_list(stop_gradients))} \
        if stop_gradients is not None else set()
    graph = graph_of(ys_list + xs_list)
    with graph.as_default(), graph.name_scope(name) as scope:
        token = _SOURCE.set(scope.rstrip("/") or name) if _SOURCE.get() is None else None
        try:
            return _gradients(graph, ys_list, xs_list, grad_ys_list, stop_ops,
                              colocate_gradients_with_ops, unconnected_gradients)
        finally:
            if token is not None:
                _SOURCE.reset(token)


def _gradients(graph: Any, ys_list: list[Tensor], xs_list: list[Tensor], grad_ys_list: list[Any],
               stop_ops: set[Operation], colocate: bool, unconnected_gradients: str) -> list[Any]:
    """The body of :func:`gradients` (inside its name scope)."""
    between = _ops_between([y.op for y in ys_list], [x.op for x in xs_list], stop_ops)
    grads: dict[Tensor, list[Any]] = {}
    with graph.name_scope("grad_ys"):
        for y, gy in zip(ys_list, grad_ys_list):
            if gy is None:
                gy = array_ops.ones_like(y, name=f"grad_ys_{ys_list.index(y)}")
            else:
                gy = gy if isinstance(gy, IndexedSlices) else convert_to_tensor(gy, dtype=y.dtype)
            grads.setdefault(y, []).append(gy)
    _backprop(graph, between, grads, stop_ops, set(xs_list), colocate)
    results = []
    for x in xs_list:
        g = _aggregate(grads.get(x, []))
        if g is None and unconnected_gradients == "zero":
            g = array_ops.zeros_like(x)
        results.append(g)
    return results


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _ops_between(to_ops: Sequence[Operation], from_ops: Sequence[Operation],
                 stop_ops: set[Operation]) -> set[Operation]:
    """Ops on some path from ``from_ops`` to ``to_ops`` (inclusive)."""
    forward: set[Operation] = set()
    queue = deque(from_ops)
    while queue:
        op = queue.popleft()
        if op in forward:
            continue
        forward.add(op)
        for t in op.outputs:
            for consumer in t._consumers:
                if consumer not in forward:
                    queue.append(consumer)
    between: set[Operation] = set()
    queue = deque(op for op in to_ops if op in forward)
    while queue:
        op = queue.popleft()
        if op in between:
            continue
        between.add(op)
        if op in stop_ops:
            continue
        for t in op.inputs:
            if t.op in forward and t.op not in between:
                queue.append(t.op)
    return between


def _backprop(graph: Any, between: set[Operation], grads: dict[Tensor, list[Any]],
              stop_ops: set[Operation], xs: set[Tensor], colocate: bool) -> None:
    pending: dict[Operation, int] = {op: 0 for op in between}
    for op in between:
        if op in stop_ops:
            continue
        for t in op.inputs:
            if t.op in between:
                pending[t.op] += 1
    ready = deque(sorted((op for op, n in pending.items() if n == 0), key=lambda o: -o._id))
    while ready:
        op = ready.popleft()
        out_grads = [_aggregate(grads.get(t, [])) for t in op.outputs]
        if op not in stop_ops and any(g is not None for g in out_grads) and op.inputs:
            in_grads = _call_grad_fn(graph, op, out_grads, colocate)
            for t, g in zip(op.inputs, in_grads):
                if g is not None and _backpropagatable(t) and (t.op in between or t in xs):
                    grads.setdefault(t, []).append(g)
        if op in stop_ops:
            continue
        for t in op.inputs:
            if t.op in between:
                pending[t.op] -= 1
                if pending[t.op] == 0:
                    ready.append(t.op)


def _call_grad_fn(graph: Any, op: Operation, out_grads: list[Any], colocate: bool) -> list[Any]:
    op_type = op.attrs.get("_gradient_op_type") or graph._gradient_override_map.get(op.type, op.type)
    grad_fn = registry.gradient_decision(op_type)
    if grad_fn is registry.NOT_DIFFERENTIABLE:
        return [None] * len(op.inputs)
    if grad_fn is None:
        raise LookupError(
            f"No gradient defined for operation '{op.name}' (op type: {op.type}). Register one "
            "with @tf.RegisterGradient, or wrap the input in tf.stop_gradient."
        )
    filled = []
    for t, g in zip(op.outputs, out_grads):
        if g is None and _backpropagatable(t) and t.dtype != dtypes.resource:
            g = array_ops.zeros_like(t)
        filled.append(g)
    scope = graph.colocate_with(op) if colocate else contextlib.nullcontext()
    with scope, graph.name_scope(f"{op.name}_grad") as grad_scope, xla_gradient_scope(op, grad_scope):
        in_grads = grad_fn(op, *filled)
    in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
    if len(in_grads) != len(op.inputs):
        raise ValueError(
            f"Gradient function for {op.type} returned {len(in_grads)} gradients but op "
            f"'{op.name}' has {len(op.inputs)} inputs"
        )
    return in_grads


def _aggregate(contributions: list[Any]) -> Any:
    contributions = [g for g in contributions if g is not None]
    if not contributions:
        return None
    if len(contributions) == 1:
        return contributions[0]
    if all(isinstance(g, IndexedSlices) for g in contributions):
        return IndexedSlices(
            array_ops.concat([g.values for g in contributions], 0),
            array_ops.concat([g.indices for g in contributions], 0),
            contributions[0].dense_shape,
        )
    dense = [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g for g in contributions]
    return math_ops.add_n(dense)


def hessians(ys: Any, xs: Any, name: str = "hessians", colocate_gradients_with_ops: bool = False,
             gate_gradients: bool = False, aggregation_method: Any = None) -> list[Any]:
    """Second derivatives of ``sum(ys)`` w.r.t. each x, shaped ``x.shape + x.shape``.

    Each x must have a fully defined static shape. The rows are built with one gradient
    per element of the flattened first gradient.
    """
    xs_list = [_as_x(x) for x in _as_list(xs)]
    first = gradients(ys, xs_list, name=name)
    out = []
    for x, g in zip(xs_list, first):
        if g is None:
            out.append(None)
            continue
        shape = x.shape
        if not shape.is_fully_defined():
            raise ValueError(f"tf.hessians needs a fully defined shape for {x.name}, got {shape}")
        n = shape.num_elements()
        flat = array_ops.reshape(convert_to_tensor(g), [-1])
        rows = []
        for i in range(n):
            row = gradients(flat[i], x, name=name)[0]
            rows.append(array_ops.zeros_like(x) if row is None else convert_to_tensor(row))
        stacked = array_ops.stack(rows)
        out.append(array_ops.reshape(stacked, shape.as_list() + shape.as_list()))
    return out
