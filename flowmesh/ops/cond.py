"""``tf.cond`` and ``tf.case``: the functional ``If`` op and its gradient.

``cond(pred, true_fn, false_fn)`` traces each function into a
:class:`~flowmesh.core.function.FuncGraph` (a *branch*) and creates one ``If`` op whose
inputs are ``pred`` and every outer tensor either branch captured. At run time the ``If``
kernel runs only the branch ``pred`` selects, so stateful ops in a branch (assignments,
random draws, ``py_func``) run only when it is taken. Ops a branch does not need for its
outputs are pruned, as in TensorFlow 1.x.

Gradient: an ``If`` over the two branches' gradient functions, selected by the same
``pred``. A gradient function reads forward intermediates (e.g. ``sigmoid(x)`` for the
gradient of ``sigmoid``) as extra outputs of the forward ``If``, added when the gradient
is built; the other branch returns an empty dummy in that position. Gradients of
captured variables flow through their resource handles, so ``optimizer.minimize`` works
on a loss computed inside a branch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.function import (
    FuncGraph,
    add_op_outputs,
    is_differentiable,
    merge_shapes,
    register_function_graph_class,
    value_spec,
)
from flowmesh.core.graph import Operation, Tensor, get_default_graph, graph_of, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import unknown_shape
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops
from flowmesh.ops.array_ops import identity, stack
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.control_flow_intermediates import intermediates, output_all_intermediates
from flowmesh.ops.control_flow_ops import group
from flowmesh.ops.function_call import create_function_op, function_op_shape, function_output, unify_captures
from flowmesh.ops.gradients_impl import gradients
from flowmesh.ops.logging_ops import Assert
from flowmesh.ops.math_ops import less_equal
from flowmesh.ops.reduction_ops import reduce_sum
from flowmesh.ops.resource_variable_ops import read_variable_op
from flowmesh.ops.tensor_array import from_flow, outer_template, to_flow


# --- the If op -----------------------------------------------------------------------------
def _if_grad(op: Operation, *grads: Any) -> list[Any]:
    branches = [_bound_branch(op, "then_branch"), _bound_branch(op, "else_branch")]
    grads_in = [None if _is_zero_fill(op, i, g) else _dense(g) for i, g in enumerate(grads)]
    diff_out = [i for i, g in enumerate(grads_in) if g is not None]
    xs_index = [k for k, x in enumerate(branches[0].inputs) if is_differentiable(x)]
    if not diff_out or not xs_index:
        return [None] * len(op.inputs)
    grad_graphs = [_CondGradGraph(op, i, b) for i, b in enumerate(branches)]
    for gg in grad_graphs:
        gg.differentiate(diff_out, xs_index)
    keep = [k for k in range(len(xs_index)) if any(gg.results[k] is not None for gg in grad_graphs)]
    if not keep:
        return [None] * len(op.inputs)
    for gg in grad_graphs:
        gg.finish(keep, xs_index)
    externals = unify_captures(grad_graphs)
    then_out, else_out = grad_graphs[0].outputs, grad_graphs[1].outputs
    attrs = {
        "then_branch": grad_graphs[0], "else_branch": grad_graphs[1],
        "Tout": [t.dtype for t in then_out],
        "output_shapes": [merge_shapes(a.shape, b.shape) for a, b in zip(then_out, else_out)],
    }
    graph = get_default_graph()
    inputs = [op.inputs[0]] + [grads_in[i] for i in diff_out] + externals
    grad_op = create_function_op(graph, "If", inputs, grad_graphs, attrs, "If", colocate_with=op)
    result: list[Any] = [None] * len(op.inputs)
    for out_index, k in enumerate(keep):
        result[1 + xs_index[k]] = grad_op.outputs[out_index]
    return result


register_op("If", function_op_shape, grad=_if_grad)


def _bound_branch(op: Operation, attr: str) -> FuncGraph:
    branch = op.attrs[attr]
    branch.bind(op, 1)
    return branch


def _is_zero_fill(op: Operation, index: int, grad: Any) -> bool:
    """True for the ``zeros_like(output)`` autodiff substitutes for a missing gradient."""
    return grad is None or (
        isinstance(grad, Tensor) and grad.op.type == "ZerosLike"
        and grad.op.inputs[0] is op.outputs[index]
    )


def _dense(grad: Any) -> Tensor:
    """Gradients leave functions dense (an ``IndexedSlices`` is converted)."""
    return convert_to_tensor(grad)


def zeros_for(graph: FuncGraph, forward_input: Tensor) -> Tensor:
    """Zeros shaped like the gradient of a (captured) forward input, built in ``graph``."""

    inner = graph.capture(forward_input)
    if forward_input.dtype != dtypes.resource:
        return array_ops.zeros_like(inner)
    dtype, shape = value_spec(forward_input)
    if shape.is_fully_defined():
        return array_ops.zeros(shape.as_list(), dtype=dtype)
    return array_ops.zeros_like(read_variable_op(inner, dtype))


@register_function_graph_class
class _CondGradGraph(FuncGraph):
    """The gradient function of one branch of an ``If``.

    Forward tensors it needs are mapped to outputs of the forward ``If``: captured
    inputs to the op's inputs, intermediates to new outputs (see module docstring).
    """

    def __init__(self, forward_op: Operation, branch_index: int, branch: FuncGraph):
        super().__init__(f"{branch.name}_grad", outer_graph=branch)
        self.forward = branch
        self.forward_op = forward_op
        self.branch_index = branch_index
        self.results: list[Tensor | None] = []

    def _capture_forward(self, tensor: Tensor) -> Tensor:
        source = if_intermediate(self.forward_op, self.branch_index, tensor)
        placeholder = self._captures.get(source)
        if placeholder is None:
            placeholder = self._placeholder(tensor.dtype, tensor.shape, "capture")
            self.inputs.append(placeholder)
            self._external[placeholder] = source
            self._captures[source] = placeholder
        self._captures[tensor] = placeholder
        return placeholder

    def differentiate(self, diff_out: list[int], xs_index: list[int]) -> None:
        """Builds ``d(outputs[diff_out]) / d(inputs[xs_index])``."""
        op = self.forward_op
        with self.as_default():
            grad_ys = [self.add_input(op.outputs[i].dtype, op.outputs[i].shape, "grad_y")
                       for i in diff_out]
            pairs = [(self.forward.outputs[i], gy) for i, gy in zip(diff_out, grad_ys)
                     if self.forward.outputs[i] is not None]
            xs = [self.forward.inputs[k] for k in xs_index]
            if not pairs:
                self.results = [None] * len(xs)
                return
            grads = gradients([y for y, _ in pairs], xs, grad_ys=[g for _, g in pairs])
            self.results = [None if g is None else _dense(g) for g in grads]

    def finish(self, keep: list[int], xs_index: list[int]) -> None:
        """Sets the outputs: one gradient per kept input, zeros where this branch has none."""
        outputs = []
        with self.as_default():
            for k in keep:
                grad = self.results[k]
                if grad is None:
                    source = self.forward_op.inputs[1 + xs_index[k]]
                    grad = zeros_for(self, source)
                elif grad.graph is not self:
                    grad = self.capture(grad)
                outputs.append(grad)
        self.outputs = outputs


def if_intermediate(op: Operation, branch_index: int, tensor: Tensor) -> Tensor:
    """The tensor of ``op``'s graph that carries ``tensor`` (a tensor of one branch) when
    that branch runs: an input of the op, an existing output, or a new output."""
    branches = [op.attrs["then_branch"], op.attrs["else_branch"]]
    branch = branches[branch_index]
    for j, placeholder in enumerate(branch.inputs):
        if placeholder is tensor:
            return op.inputs[1 + j]
    count = len(op.outputs)
    for i, out in enumerate(branch.outputs[:count]):
        if out is tensor:
            return op.outputs[i]
    for index, b in enumerate(branches):
        b.outputs.append(tensor if index == branch_index else None)
    return add_op_outputs(op, [(tensor.dtype, unknown_shape())])[0]


# --- tf.cond -------------------------------------------------------------------------------
def cond(pred: Any, true_fn: Callable[[], Any] | None = None,
         false_fn: Callable[[], Any] | None = None, strict: bool = False,
         name: str | None = None, fn1: Callable[[], Any] | None = None,
         fn2: Callable[[], Any] | None = None) -> Any:
    """Returns ``true_fn()`` if ``pred`` is true else ``false_fn()`` (``tf.cond``).

    Both functions are traced once into function graphs; only the selected one runs.

    Args:
        pred: a scalar ``bool`` tensor (a Python bool is rejected, as in TensorFlow).
        true_fn, false_fn: callables without arguments returning the same nested
            structure of tensors (or ops) with the same dtypes.
        strict: keep singleton lists/tuples (by default ``[x]`` comes back as ``x``).
        name: name scope of the op (default ``"cond"``).
        fn1, fn2: deprecated aliases of ``true_fn`` / ``false_fn``.

    Returns:
        Tensors in the structure ``true_fn`` returns; static shapes are the most specific
        shapes compatible with both branches.

    Raises:
        TypeError: ``pred`` is a Python bool or not a bool tensor, a function is missing
            or not callable, or the branches' structures/dtypes differ.
        ValueError: ``pred`` is not a scalar, a branch returns ``None``, or the branches'
            structures differ.
    """
    true_fn = _alias(true_fn, fn1, "true_fn", "fn1")
    false_fn = _alias(false_fn, fn2, "false_fn", "fn2")
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    with name_scope(name, "cond", [pred]) as scope:
        pred = _check_pred(convert_to_tensor(pred))
        graph = graph_of([pred])
        with graph.as_default():
            results, flats, branches = [], [], []
            for label, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
                branch = FuncGraph(f"{scope}{label[:-3]}_branch", graph)
                with branch.as_default():
                    result = fn()
                    if result is None:
                        raise ValueError(f"{label} must have a return value.")
                    flat = [function_output(branch, to_flow(v), label, pred)
                            for v in nest.flatten(result)]
                results.append(result)
                flats.append(flat)
                branches.append(branch)
            _check_same_outputs(results, flats)
            for branch, flat in zip(branches, flats):
                branch.outputs = list(flat)
            externals = unify_captures(branches)
            attrs = {
                "then_branch": branches[0], "else_branch": branches[1],
                "Tout": [t.dtype for t in flats[0]],
                "output_shapes": [merge_shapes(a.shape, b.shape) for a, b in zip(*flats)],
            }
            op = create_function_op(graph, "If", [pred] + externals, branches, attrs, scope or "If")
            if output_all_intermediates():
                for index, branch in enumerate(branches):
                    for tensor in intermediates(branch, skip=branch.inputs):
                        if_intermediate(op, index, tensor)
    templates = [_template(v) for v in nest.flatten(results[0])]
    packed = nest.pack_sequence_as(
        results[0], [from_flow(t, v) for t, v in zip(templates, op.outputs[:len(flats[0])])])
    if not strict and isinstance(packed, (list, tuple)) and len(packed) == 1:
        packed = packed[0]
    return packed


def _template(value: Any) -> Any:
    """A returned TensorArray around its handle outside the branch (others unchanged)."""
    return value if to_flow(value) is value else outer_template(value, "A tf.cond branch")


def _alias(value: Any, old: Any, name: str, old_name: str) -> Callable[[], Any]:
    if old is not None:
        if value is not None:
            raise TypeError(f"{name} and {old_name} may not be set simultaneously.")
        value = old
    if value is None:
        raise TypeError(f"{name} must not be None.")
    if not callable(value):
        raise TypeError(f"{name} must be callable.")
    return value


def _check_pred(pred: Tensor) -> Tensor:
    if pred.dtype != dtypes.bool:
        raise TypeError(
            f"pred must be a Tensor of type bool, got {pred.dtype.name} ({pred.name}); "
            "compare it, e.g. tf.not_equal(x, 0)."
        )
    if pred.shape.rank is not None and pred.shape.rank != 0:
        raise ValueError(
            f"Shape must be rank 0 but is rank {pred.shape.rank} for pred {pred.name} "
            f"(shape {pred.shape}); reduce it with tf.reduce_all/tf.reduce_any."
        )
    return pred


def _check_same_outputs(results: list[Any], flats: list[list[Tensor]]) -> None:
    try:
        nest.assert_same_structure(results[0], results[1], check_types=True)
    except (ValueError, TypeError) as exc:
        raise type(exc)(
            f"true_fn and false_fn must return the same nested structure. {exc}"
        ) from None
    t_types = [t.dtype.name for t in flats[0]]
    f_types = [t.dtype.name for t in flats[1]]
    if t_types != f_types:
        raise TypeError(
            "Outputs of 'true_fn' and 'false_fn' must have the same type(s). Received "
            f"{', '.join(t_types)} from 'true_fn' and {', '.join(f_types)} from 'false_fn'."
        )


# --- tf.case -------------------------------------------------------------------------------
def case(pred_fn_pairs: Any, default: Callable[[], Any] | None = None, exclusive: bool = False,
         strict: bool = False, name: str = "case") -> Any:
    """Runs the function of the first true predicate (``tf.case``).

    Args:
        pred_fn_pairs: a list of ``(bool scalar tensor, callable)`` pairs, or a dict.
        default: called when no predicate is true. If ``None``, the last pair's function
            is the default and an error is raised at run time when its predicate is false
            too (as in TensorFlow).
        exclusive: also check at run time that at most one predicate is true.
        strict: see :func:`cond`.
        name: name scope.

    Returns:
        The selected function's result.

    Raises:
        TypeError: malformed pairs, a non-bool predicate or a non-callable function.
        InvalidArgumentError: (at run time) no predicate is true and there is no
            default, or ``exclusive`` and several are true.
    """
    pairs = _case_pairs(pred_fn_pairs)
    if default is not None and not callable(default):
        raise TypeError("default must be callable.")
    if not pairs:
        if default is None:
            raise ValueError("pred_fn_pairs must not be empty when default is None.")
        return default()
    with name_scope(name, "case", [p for p, _ in pairs]):
        preds = [p for p, _ in pairs]
        if default is None:
            (last_pred, last_fn), pairs = pairs[-1], pairs[:-1]
            default = functools.partial(_checked_default, last_fn, last_pred, preds)
        if not pairs:
            return default()
        controls = [_assert_at_most_one(preds)] if exclusive else []
        fn: Callable[[], Any] = default
        for pred, action in reversed(pairs):
            fn = functools.partial(cond, pred, action, fn, strict=strict)
        with get_default_graph().control_dependencies(controls):
            return fn()


def _case_pairs(pred_fn_pairs: Any) -> list[tuple[Tensor, Callable[[], Any]]]:
    items = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else pred_fn_pairs
    if not isinstance(items, (list, tuple)):
        raise TypeError("pred_fn_pairs must be a list, tuple, or dict")
    pairs = []
    for item in items:
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {item!r}")
        pred, fn = item
        if isinstance(pred, bool):
            raise TypeError("pred must not be a Python bool")
        pred = convert_to_tensor(pred)
        if pred.dtype != dtypes.bool:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
        pairs.append((pred, fn))
    return pairs


def _checked_default(action: Callable[[], Any], pred: Tensor, preds: list[Tensor]) -> Any:
    check = Assert(pred, ["Input error: None of conditions evaluated as True:",
                          stack(preds, name="preds_c")], name="Assert")
    with get_default_graph().control_dependencies([check]):
        return _with_control(action())


def _with_control(result: Any) -> Any:
    """Re-creates returned tensors under the active control dependencies."""

    def wrap(value: Any) -> Any:
        if isinstance(value, Operation):
            return group(value)
        if value is None:
            return value
        return identity(convert_to_tensor(value))

    return nest.map_structure(wrap, result)


def _assert_at_most_one(preds: list[Tensor]) -> Operation:
    stacked = stack(preds, name="preds_c")
    num_true = reduce_sum(cast(stacked, dtypes.int32), name="num_true_conds")
    names = ", ".join(p.name for p in preds)
    message = f"Input error: exclusive=True: more than 1 conditions ({names}) evaluated as True:"
    return Assert(less_equal(num_true, 1), [message, stacked], name="Assert")


__all__ = ["case", "cond", "create_function_op", "function_output", "if_intermediate",
           "unify_captures", "zeros_for"]
