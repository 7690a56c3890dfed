"""The gradient of the ``While`` op (see :mod:`flowmesh.ops.while_loop`).

For a forward loop ``x(k+1) = body(x(k), c)`` run ``N`` times, the gradient is another
``While`` op whose loop variables are

* ``k``: the backward iteration (0 .. N-1), reading forward values of iteration
  ``N - 1 - k``;
* the adjoints of the differentiable loop variables (initially the incoming gradients);
* one running sum per differentiable captured tensor (initially zeros) - captured
  variables are handles, so gradients of variables read in the body accumulate here.

Its body is the gradient function of the forward body, built with ``tf.gradients`` in a
:class:`~flowmesh.core.function.FuncGraph` whose ``forward`` is the forward body. When
that gradient needs a forward value:

* a captured (loop-invariant) input is passed as an input of the gradient op;
* any other value (a loop variable or an intermediate) is *accumulated*: the forward
  ``While`` gains an output holding the list of its per-iteration values, and the
  gradient body reads item ``N - 1 - k`` with ``AccumulatorGetItem``.

The gradient ``While`` is colocated with the forward one (the accumulators stay on that
device). Second-order gradients through a loop are not supported (a clear error).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.function import (
    FuncGraph,
    add_op_outputs,
    is_differentiable,
    register_function_graph_class,
    value_spec,
)
from flowmesh.core.graph import Graph, Operation, Tensor, get_default_graph
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.ops import array_ops, gather_ops, math_ops, strided_slice_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.function_call import create_function_op, unify_captures
from flowmesh.ops.gradients_impl import gradients
from flowmesh.ops.math_ops import less
from flowmesh.ops.resource_variable_ops import read_variable_op, variable_shape
from flowmesh.ops.while_accumulators import accumulator_concat, accumulator_get_item


def while_grad(op: Operation, *grads: Any) -> list[Any]:
    """Gradient function of ``While``: one entry per input of ``op``."""
    if not op.attrs.get("back_prop", True):
        return [None] * len(op.inputs)
    body = op.attrs["body"]
    n = op.attrs["num_loop_vars"]
    body.bind(op, 0)
    op.attrs["cond"].bind(op, 0)
    if any(o.type == "AccumulatorGetItem" for o in body.get_operations()):
        raise LookupError(
            f"Cannot differentiate '{op.name}': second-order gradients through tf.while_loop "
            "are not supported (the gradient loop reads the forward loop's per-iteration "
            "values). Take first-order gradients only, or unroll the loop in Python."
        )
    incoming = [None if _is_zero_fill(op, i, g) else g for i, g in enumerate(grads)]
    loop_idx = [i for i in range(1, n) if is_differentiable(op.outputs[i])]
    acc_grads = [(i, convert_to_tensor(incoming[i])) for i in range(n, len(op.outputs))
                 if incoming[i] is not None]
    if not acc_grads and not any(incoming[i] is not None for i in loop_idx):
        return [None] * len(op.inputs)
    cap_idx = [j for j, x in enumerate(body.captured_inputs) if is_differentiable(x)]
    grad_body = _WhileGradBody(op, body)
    grad_body.build(loop_idx, cap_idx, acc_grads)
    home = get_default_graph()
    grad_cond = _grad_cond(op, home, grad_body)
    functions = [grad_cond, grad_body]
    externals = unify_captures(functions)
    dense_caps = [j for j, kind in zip(cap_idx, grad_body.capture_kinds) if kind == "dense"]
    inputs = _initial_values(op, grads, loop_idx, dense_caps) + externals
    attrs = {
        "cond": grad_cond, "body": grad_body,
        "Tout": [t.dtype for t in grad_body.inputs[:grad_body.num_args]],
        "output_shapes": [t.shape for t in grad_body.inputs[:grad_body.num_args]],
        "num_loop_vars": grad_body.num_args,
        "parallel_iterations": op.attrs.get("parallel_iterations", 10),
        "back_prop": True,
    }
    grad_op = create_function_op(home, "While", inputs, functions, attrs, "While",
                                 colocate_with=op)
    result: list[Any] = [None] * len(op.inputs)
    for pos, i in enumerate(loop_idx):
        result[i] = grad_op.outputs[1 + pos]
    for pos, j in enumerate(dense_caps):
        result[n + j] = grad_op.outputs[1 + len(loop_idx) + pos]
    for j, (values, indices) in zip(cap_idx, grad_body.sparse_parts):
        if values is not None:
            result[n + j] = _sparse_gradient(grad_op, values, indices, op.inputs[n + j])
    return result


def _sparse_gradient(grad_op: Operation, values: Tensor, indices: Tensor,
                     forward_input: Tensor) -> IndexedSlices | Tensor:
    """Concatenates the per-iteration ``IndexedSlices`` parts the gradient loop collected."""

    if forward_input.dtype == dtypes.resource:
        dense_shape = variable_shape(forward_input, out_type=indices.dtype)
    else:
        dense_shape = array_ops.shape(forward_input, out_type=indices.dtype)
    row_shape = strided_slice_ops.strided_slice(dense_shape, [1], [0], [1], end_mask=1)
    all_values = accumulator_concat(while_accumulator(grad_op, values), row_shape, values.dtype,
                                    TensorShape([None]).concatenate(values.shape[1:])
                                    if values.shape.rank else unknown_shape())
    all_indices = accumulator_concat(while_accumulator(grad_op, indices),
                                     constant([], dtype=indices.dtype), indices.dtype,
                                     TensorShape([None]))
    sparse = IndexedSlices(all_values, all_indices, dense_shape)
    # Variables keep sparse gradients (sparse optimizer updates, as TensorFlow 1.x); plain
    # tensors get a dense one, as TensorFlow's while_v2 returns (built once, after the loop).
    return sparse if forward_input.dtype == dtypes.resource else convert_to_tensor(sparse)


def _is_zero_fill(op: Operation, index: int, grad: Any) -> bool:
    return grad is None or (
        isinstance(grad, Tensor) and grad.op.type == "ZerosLike"
        and grad.op.inputs[0] is op.outputs[index]
    )


def _initial_values(op: Operation, grads: tuple[Any, ...], loop_idx: list[int],
                    cap_idx: list[int]) -> list[Tensor]:
    values = [constant(0, dtype=dtypes.int32, name="iteration")]
    for i in loop_idx:
        g = grads[i]
        values.append(array_ops.zeros_like(op.outputs[i]) if g is None else convert_to_tensor(g))
    n = op.attrs["num_loop_vars"]
    for j in cap_idx:
        values.append(_zeros_like_value(op.inputs[n + j]))
    return values


def _zeros_like_value(tensor: Tensor) -> Tensor:
    """Zeros shaped like the gradient of ``tensor`` (a variable's value for handles)."""

    if tensor.dtype != dtypes.resource:
        return array_ops.zeros_like(tensor)
    dtype, shape = value_spec(tensor)
    if shape.is_fully_defined():
        return array_ops.zeros(shape.as_list(), dtype=dtype)
    return array_ops.zeros_like(read_variable_op(tensor, dtype))


def _grad_cond(op: Operation, home: Graph, grad_body: _WhileGradBody) -> FuncGraph:
    graph = FuncGraph(f"{op.attrs['cond'].name}_grad", home)
    with graph.as_default():
        args = [graph.add_input(t.dtype, t.shape, "loop_var")
                for t in grad_body.inputs[:grad_body.num_args]]
        graph.outputs = [less(args[0], op.outputs[0], name="more_iterations")]
    return graph


def while_accumulator(op: Operation, tensor: Tensor) -> Tensor:
    """The output of ``op`` listing ``tensor``'s value at every iteration (added once)."""
    body = op.attrs["body"]
    n = op.attrs["num_loop_vars"]
    for i in range(n, len(op.outputs)):
        if body.outputs[i] is tensor:
            return op.outputs[i]
    body.outputs.append(tensor)
    return add_op_outputs(op, [(dtypes.variant, unknown_shape())])[0]


@register_function_graph_class
class _WhileGradBody(FuncGraph):
    """The body of the gradient ``While``: the forward body's gradient for one iteration."""

    def __init__(self, forward_op: Operation, body: FuncGraph):
        super().__init__(f"{body.name}_grad", outer_graph=body)
        self.forward = body
        self.forward_op = forward_op
        self.reverse_index: Tensor | None = None
        self.capture_kinds: list[str | None] = []
        self.sparse_parts: list[tuple[Tensor | None, Tensor | None]] = []

    def _capture_forward(self, tensor: Tensor) -> Tensor:
        op, body = self.forward_op, self.forward
        n = op.attrs["num_loop_vars"]
        for j, placeholder in enumerate(body.captured_inputs):
            if placeholder is tensor:
                value = self._capture_as(op.inputs[n + j], tensor.shape)
                break
        else:
            accumulator = self._capture_as(while_accumulator(op, tensor), unknown_shape())
            with self.as_default(), self.control_dependencies(None), self.colocate_with(None):
                value = accumulator_get_item(accumulator, self.reverse_index, tensor.dtype,
                                             tensor.shape)
        self._captures[tensor] = value
        return value

    def _capture_as(self, source: Tensor, shape: TensorShape) -> Tensor:
        placeholder = self._captures.get(source)
        if placeholder is None:
            placeholder = self._placeholder(source.dtype, shape, "capture")
            self.inputs.append(placeholder)
            self._external[placeholder] = source
            self._captures[source] = placeholder
        return placeholder

    def build(self, loop_idx: list[int], cap_idx: list[int],
              acc_grads: list[tuple[int, Tensor]]) -> None:
        """Creates the loop variables and the one-iteration gradient computation.

        ``acc_grads`` are incoming gradients of accumulator outputs (``[N, ...]`` dense):
        iteration ``k`` adds row ``N - 1 - k`` to the gradient of the accumulated value.
        """

        op, body = self.forward_op, self.forward
        shapes = op.attrs["output_shapes"]
        with self.as_default():
            k = self.add_input(dtypes.int32, [], "iteration")
            adjoints = [self.add_input(op.outputs[i].dtype, shapes[i], "grad") for i in loop_idx]
            sums = [self.add_input(*value_spec(body.captured_inputs[j]), name="grad_sum")
                    for j in cap_idx]
            total = self.capture(op.outputs[0])
            self.reverse_index = math_ops.subtract(math_ops.subtract(total, 1), k,
                                                   name="forward_iteration")
            rows = [gather_ops.gather(self.capture(g), self.reverse_index) for _, g in acc_grads]
            ys = [body.outputs[i] for i in loop_idx] + [body.outputs[i] for i, _ in acc_grads]
            xs = [body.inputs[i] for i in loop_idx] + [body.captured_inputs[j] for j in cap_idx]
            grads = gradients(ys, xs, grad_ys=adjoints + rows)
            new_adjoints = [array_ops.zeros_like(a) if g is None else self._local(convert_to_tensor(g))
                            for a, g in zip(adjoints, grads[:len(loop_idx)])]
            kept_sums, new_sums = self._capture_gradients(sums, grads[len(loop_idx):])
            self.outputs = [math_ops.add(k, 1, name="next_iteration")] + new_adjoints + new_sums
        captured = self.inputs[self.num_args:]
        self.inputs = [k] + adjoints + kept_sums + captured
        self.num_args = 1 + len(adjoints) + len(kept_sums)

    def _capture_gradients(self, sums: list[Tensor], grads: list[Any]) -> tuple[list, list]:
        """Dense gradients of captured inputs are summed in loop variables; sparse ones
        (``IndexedSlices``, e.g. a gather in the body) are collected per iteration."""
        kept, new_sums = [], []
        self.capture_kinds, self.sparse_parts = [], []
        for s, g in zip(sums, grads):
            if isinstance(g, IndexedSlices):
                self.capture_kinds.append("sparse")
                self.sparse_parts.append((self._local(g.values), self._local(g.indices)))
                continue
            self.sparse_parts.append((None, None))
            if g is None:
                self.capture_kinds.append(None)
                continue
            self.capture_kinds.append("dense")
            kept.append(s)
            new_sums.append(math_ops.add(s, self._local(convert_to_tensor(g))))
        return kept, new_sums

    def _local(self, tensor: Tensor) -> Tensor:
        return tensor if tensor.graph is self else self.capture(tensor)


__all__ = ["while_accumulator", "while_grad"]
