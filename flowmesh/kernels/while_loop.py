"""Kernels of ``flowmesh/ops/while_loop.py``: ``While`` and ``AccumulatorGetItem``.

The condition and the body are compiled once, when the kernel is created (see
``function_program.py``). Each iteration feeds the loop variables and the captured
inputs to the condition, then to the body. Outputs past the loop variables are
*accumulators*: Python lists of one body value per iteration (added when a gradient
of the loop is built), read back by ``AccumulatorGetItem``.

Loop variable 0 is the iteration counter. When nothing but its own increment reads it
(no ``maximum_iterations``, no gradient reading it), the kernel counts in Python and
skips the per-iteration counter ops.
"""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.kernels.function_program import FunctionProgram


def _counter_is_internal(cond_graph: Any, body_graph: Any, count: int) -> bool:
    counter_in_body, counter_in_cond = body_graph.inputs[0], cond_graph.inputs[0]
    increment = body_graph.outputs[0].op
    if counter_in_cond.consumers() or any(c is not increment for c in counter_in_body.consumers()):
        return False
    return all(t is not counter_in_body for t in body_graph.outputs[1:count])


@kernel("While", needs_step=True)
def _while(ctx: KernelContext):
    op = ctx.op
    num_vars = op.attrs["num_loop_vars"]
    count = len(op.outputs)
    cond_graph, body_graph = op.attrs["cond"], op.attrs["body"]
    internal = _counter_is_internal(cond_graph, body_graph, count)
    body_outputs = body_graph.outputs[1 if internal else 0:count]
    cond_fn = FunctionProgram(ctx, cond_graph, cond_graph.outputs[:1], "the condition")
    body_fn = FunctionProgram(ctx, body_graph, body_outputs, "the body")
    first = 1 if internal else 0
    device = ctx.torch_device

    def run(step: Any, *args: Any) -> Any:
        values = [None if internal else args[0]] + list(args[1:num_vars])
        captured = list(args[num_vars:])
        accumulators: list[list[Any]] = [[] for _ in range(count - num_vars)]
        iterations = 0
        while cond_fn(step, values + captured)[0]:
            outputs = body_fn(step, values + captured)
            values[first:] = outputs[:num_vars - first]
            for acc, value in zip(accumulators, outputs[num_vars - first:]):
                acc.append(value)
            iterations += 1
        if internal:
            start = int(args[0])
            values[0] = torch.tensor(start + iterations, dtype=torch.int32, device=device)
        results = values + accumulators
        return results[0] if count == 1 else tuple(results)

    return run


def _get_item(accumulator: list[Any], index: Any) -> Any:
    i = int(index)
    if not 0 <= i < len(accumulator):
        raise InvalidArgumentError(
            f"Accumulator index {i} is out of range [0, {len(accumulator)}) (internal "
            "while_loop gradient state)"
        )
    return accumulator[i]


simple_kernel("AccumulatorGetItem", _get_item)


@kernel("AccumulatorStack")
def _stack(ctx: KernelContext):
    shape = ctx.attr("element_shape")
    dtype = ctx.torch_dtype(ctx.attr("element_dtype"))
    device = ctx.torch_device

    def run(accumulator: list[Any]) -> Any:
        if accumulator:
            return torch.stack(accumulator)
        if not shape.is_fully_defined():
            raise InvalidArgumentError(
                f"Cannot stack the results of a loop that ran zero times: the element shape "
                f"{shape} is not fully defined (op {ctx.op.name}). Give the function's output a "
                "static shape (set_shape) or make sure the loop runs at least once."
            )
        return torch.empty((0, *shape.as_list()), dtype=dtype, device=device)

    return run


@kernel("AccumulatorConcat")
def _concat(ctx: KernelContext):
    dtype = ctx.torch_dtype(ctx.attr("element_dtype"))
    device = ctx.torch_device

    def run(accumulator: list[Any], row_shape: Any) -> Any:
        if accumulator:
            return torch.cat(accumulator, 0)
        return torch.empty((0, *[int(d) for d in row_shape.tolist()]), dtype=dtype, device=device)

    return run
