"""``tf.while_loop``: the functional ``While`` op.

``while_loop(cond, body, loop_vars)`` traces ``cond`` and ``body`` into function graphs
(:class:`~flowmesh.core.function.FuncGraph`) taking the loop variables plus every outer
tensor they capture, and creates one ``While`` op. Its first loop variable is an internal
iteration counter, so output 0 is the number of iterations run (``maximum_iterations``
adds ``counter < maximum_iterations`` to the condition). The kernel runs the condition
and the body alternately on the op's device.

Shapes: each loop variable keeps its shape across iterations unless a
``shape_invariants`` entry relaxes it; a body that changes a shape without one is an
error at graph construction, as in TensorFlow.

Gradient (see :mod:`flowmesh.ops.while_grad`): when a gradient is built, the forward
``While`` also outputs, for every forward value the gradient needs, the list of its
per-iteration values (an *accumulator*, dtype ``variant``); a gradient ``While`` runs
the body's gradient function for iterations ``N-1 .. 0``, reading them back with
``AccumulatorGetItem``, and sums the gradients of captured tensors (and variables)
across iterations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.function import FuncGraph, shape_is_at_least_as_specific
from flowmesh.core.graph import Tensor, graph_of, name_scope
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops import _structure as nest
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.control_flow_intermediates import intermediates, output_all_intermediates
from flowmesh.ops.function_call import create_function_op, function_output, unify_captures
from flowmesh.ops.math_ops import add, less, logical_and
from flowmesh.ops.tensor_array import TensorArray, from_flow, to_flow
from flowmesh.ops.while_grad import while_accumulator, while_grad


def _while_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return list(zip(attrs["Tout"], attrs["output_shapes"]))


register_op("While", _while_shape, grad=while_grad)


# --- tf.while_loop ---------------------------------------------------------------------------
def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any,
               shape_invariants: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
               swap_memory: bool = False, name: str | None = None,
               maximum_iterations: Any = None, return_same_structure: bool = False) -> Any:
    """Repeats ``body`` while ``cond`` is true (``tf.while_loop``).

    Args:
        cond: ``cond(*loop_vars) -> bool scalar tensor``.
        body: ``body(*loop_vars) -> new loop_vars`` (same structure, dtypes and shapes,
            or shapes compatible with ``shape_invariants``).
        loop_vars: a (nested) list/tuple/namedtuple/dict structure of tensors. A single
            tensor is accepted too (``cond``/``body`` then get it as their argument).
        shape_invariants: per loop variable, a less specific ``TensorShape`` allowed to
            vary across iterations.
        parallel_iterations: accepted for compatibility; iterations run in order.
        back_prop: ``False`` stops gradients through the loop.
        swap_memory: accepted for compatibility (ignored).
        name: name scope (default ``"while"``).
        maximum_iterations: stop after this many iterations (an int32 scalar).
        return_same_structure: always return the structure of ``loop_vars`` (by default
            a single loop variable comes back unwrapped).

    Returns:
        The final loop variables, in the structure ``body`` returns.

    Raises:
        TypeError: ``cond``/``body`` not callable, or a dtype changes in the body.
        ValueError: no loop variables, mismatching structures, or a shape that changes
            without a shape invariant.
    """
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else loop_vars
    flat_vars = nest.flatten(structure)
    if not flat_vars:
        raise ValueError("No loop variables provided")
    with name_scope(name, "while", [v for v in flat_vars if isinstance(v, Tensor)]) as scope:
        init = [_as_loop_var(to_flow(v), i) for i, v in enumerate(flat_vars)]
        graph = graph_of(init)
        with graph.as_default():
            invariants = _invariants(structure, shape_invariants, init, flat_vars)
            limit = _maximum_iterations(maximum_iterations)
            loop = _Loop(scope, graph, structure, single, init, invariants, flat_vars)
            loop.trace_cond(cond, limit)
            result = loop.trace_body(body)
            functions = [loop.cond_graph, loop.body_graph]
            externals = unify_captures(functions)
            attrs = {
                "cond": loop.cond_graph, "body": loop.body_graph,
                "Tout": [dtypes.int32] + [t.dtype for t in init],
                "output_shapes": [TensorShape([])] + list(invariants),
                "num_loop_vars": 1 + len(init),
                "parallel_iterations": int(parallel_iterations),
                "back_prop": bool(back_prop),
            }
            from flowmesh.ops.constant_op import constant

            counter = constant(0, dtype=dtypes.int32, name="loop_counter")
            op = create_function_op(graph, "While", [counter] + init + externals, functions,
                                    attrs, scope or "While")
            if output_all_intermediates():
                body_graph = loop.body_graph
                skip = [body_graph.inputs[0], *body_graph.inputs[body_graph.num_args:]]  # counter, captures
                for tensor in intermediates(body_graph, skip=skip, skip_identity=True):
                    while_accumulator(op, tensor)
    outputs = [from_flow(t, v) for t, v in zip(flat_vars, op.outputs[1:1 + len(init)])]
    packed = nest.pack_sequence_as(result, outputs)
    if single and not return_same_structure:
        return packed[0]
    if not return_same_structure and isinstance(packed, (list, tuple)) and len(packed) == 1:
        return packed[0]
    return packed


def _as_loop_var(value: Any, index: int) -> Tensor:
    if isinstance(value, IndexedSlices):
        raise TypeError(
            f"Loop variable {index} is an IndexedSlices; convert it with tf.convert_to_tensor "
            "before tf.while_loop."
        )
    tensor = convert_to_tensor(value)
    if tensor.dtype in (dtypes.resource, dtypes.variant):
        raise TypeError(
            f"Loop variable {index} ({tensor.name}) has dtype {tensor.dtype.name}; loop "
            "variables must be tensors (read variables inside the body instead)."
        )
    return tensor


def _invariants(structure: Any, shape_invariants: Any, init: list[Tensor],
                flat_vars: list[Any]) -> list[TensorShape]:
    if shape_invariants is None:
        return [t.shape for t in init]
    try:
        given = nest.flatten_up_to(structure, shape_invariants)
    except ValueError as exc:
        raise ValueError(f"shape_invariants must have the structure of loop_vars: {exc}") from None
    out = []
    for tensor, shape, var in zip(init, given, flat_vars):
        if isinstance(var, TensorArray):  # its flow is a scalar; the elements may vary
            out.append(tensor.shape)
            continue
        invariant = tensor.shape if shape is None else as_shape(shape)
        if not shape_is_at_least_as_specific(tensor.shape, invariant):
            raise ValueError(
                f"The shape invariant specified for {tensor.name} is not compatible with the "
                f"initial shape of the loop variable. It enters the loop with shape "
                f"{tensor.shape}, but the specified shape invariant is {invariant}."
            )
        out.append(invariant)
    return out


def _maximum_iterations(value: Any) -> Tensor | None:
    if value is None:
        return None

    limit = convert_to_tensor(value, dtype_hint=dtypes.int32, name="maximum_iterations")
    if limit.shape.rank not in (None, 0):
        raise ValueError(f"maximum_iterations must be a scalar, saw shape: {limit.shape}")
    if not limit.dtype.is_integer:
        raise TypeError(f"maximum_iterations must be an integer, got {limit.dtype.name}")
    return limit if limit.dtype == dtypes.int32 else cast(limit, dtypes.int32)


class _Loop:
    """Traces the condition and body function graphs of one ``while_loop``."""

    def __init__(self, scope: str, graph: Any, structure: Any, single: bool,
                 init: list[Tensor], invariants: list[TensorShape], templates: list[Any]):
        self.structure = structure
        self.templates = templates  # the loop variables (TensorArrays travel as flows)
        self.single = single
        self.init = init
        self.invariants = invariants
        self.cond_graph = FuncGraph(f"{scope}cond", graph)
        self.body_graph = FuncGraph(f"{scope}body", graph)

    def _arguments(self, fn_graph: FuncGraph) -> tuple[Tensor, Any]:
        counter = fn_graph.add_input(dtypes.int32, [], "loop_counter")
        args = [from_flow(template, fn_graph.add_input(t.dtype, shape, "loop_var"))
                for t, shape, template in zip(self.init, self.invariants, self.templates)]
        return counter, nest.pack_sequence_as(self.structure, args)

    def _call(self, fn: Callable[..., Any], packed: Any) -> Any:
        return fn(packed[0]) if self.single else fn(*packed)

    def trace_cond(self, cond: Callable[..., Any], limit: Tensor | None) -> None:
        g = self.cond_graph
        with g.as_default():
            counter, packed = self._arguments(g)
            pred = function_output(g, self._call(cond, packed), "cond")
            if pred.dtype != dtypes.bool or pred.shape.rank not in (None, 0):
                raise TypeError(
                    f"cond of tf.while_loop must return a bool scalar, got {pred.dtype.name} "
                    f"with shape {pred.shape}"
                )
            if limit is not None:
                pred = logical_and(less(counter, limit), pred)
            g.outputs = [pred]

    def trace_body(self, body: Callable[..., Any]) -> Any:
        g = self.body_graph
        with g.as_default():
            counter, packed = self._arguments(g)
            result = self._normalize(self._call(body, packed))
            flat = [function_output(g, self._flow_of(i, v), "body")
                    for i, v in enumerate(nest.flatten(result))]
            self._check_outputs(flat)
            g.outputs = [add(counter, 1, name="next_loop_counter")] + flat
        return result

    def _flow_of(self, index: int, value: Any) -> Any:
        template = self.templates[index]
        if isinstance(template, TensorArray) != isinstance(value, TensorArray) or (
                isinstance(value, TensorArray) and value.handle is not template.handle):
            raise TypeError(
                f"Loop variable {index} enters tf.while_loop as {_kind(template)} but the body "
                f"returns {_kind(value)}; a TensorArray loop variable must come back as the "
                "same TensorArray (ta = ta.write(i, x)).")
        return to_flow(value)

    def _normalize(self, result: Any) -> Any:
        if self.single:
            result = [result]
        elif not nest.is_nested(result):
            result = [result]
        elif len(self.structure) == 1 and _same_structure(result, self.structure[0]) and \
                not _same_structure(result, self.structure):
            result = [result]
        try:
            nest.assert_same_structure(list(self.structure), list(result), check_types=False)
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"body of tf.while_loop must return the structure of loop_vars. {exc}"
            ) from None
        return result

    def _check_outputs(self, flat: list[Tensor]) -> None:
        for i, (before, after, invariant) in enumerate(zip(self.init, flat, self.invariants)):
            if before.dtype != after.dtype:
                raise TypeError(
                    f"Loop variable {i} ({before.name}) enters the loop with type "
                    f"{before.dtype.name}, but has type {after.dtype.name} after one iteration; "
                    "cast it in the body."
                )
            if not shape_is_at_least_as_specific(after.shape, invariant):
                raise ValueError(
                    f"Input tensor '{before.name}' enters the loop with shape {invariant}, but "
                    f"has shape {after.shape} after one iteration. To allow the shape to vary "
                    "across iterations, use the `shape_invariants` argument of tf.while_loop "
                    "to specify a less-specific shape."
                )


def _kind(value: Any) -> str:
    if isinstance(value, TensorArray):
        return f"the TensorArray {value.handle.name}"
    return f"a {type(value).__name__}"


def _same_structure(a: Any, b: Any) -> bool:
    try:
        nest.assert_same_structure(a, b, check_types=False)
    except (ValueError, TypeError):
        return False
    return True
