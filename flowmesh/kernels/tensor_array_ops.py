"""Kernels of ``flowmesh/ops/tensor_array_ops.py``: TensorFlow 1.x's ``TensorArray*V3`` ops.

The handle value is a :class:`~flowmesh.kernels.tensor_array_state.TensorArrayState`
(one per execution of ``TensorArrayV3``); every other op takes it as input 0. The
``flow`` scalars only order the ops (a write's flow output is its flow input).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.tensor_array_state import TensorArrayState, check_empty_shape

_COUNTER = itertools.count()


def _zeros_fn(ctx: KernelContext, dtype: dtypes.DType) -> Callable[[tuple[int, ...]], Any]:
    if dtype == dtypes.string:
        return lambda shape: np.full(shape, b"", dtype=object)
    torch_dtype, device = ctx.torch_dtype(dtype), ctx.torch_device
    return lambda shape: torch.zeros(shape, dtype=torch_dtype, device=device)


def _state(ctx: KernelContext, handle: Any) -> TensorArrayState:
    if not isinstance(handle, TensorArrayState):
        raise InvalidArgumentError(
            f"{ctx.op.type} '{ctx.op.name}': input 0 is not a TensorArray handle (got "
            f"{type(handle).__name__}); pass the handle of a tf.TensorArray.")
    return handle


def _int(value: Any) -> int:
    return int(value.item() if hasattr(value, "item") else value)


def _ints(ctx: KernelContext, value: Any, what: str) -> list[int]:
    if len(tuple(value.shape)) != 1:
        raise InvalidArgumentError(
            f"{ctx.op.type} '{ctx.op.name}': Expected {what} to be a vector, but received "
            f"shape: {list(value.shape)}")
    return [int(v) for v in value.tolist()]


@kernel("TensorArrayV3")
def _create(ctx: KernelContext):
    dtype = ctx.attr("dtype")
    zeros = _zeros_fn(ctx, dtype)
    base = ctx.attr("tensor_array_name") or ctx.op.name
    shape = as_shape(ctx.attr("element_shape"))
    identical = bool(ctx.attr("identical_element_shapes", False))
    dynamic, clear = bool(ctx.attr("dynamic_size", False)), bool(ctx.attr("clear_after_read", True))
    device = ctx.torch_device

    def run(size: Any) -> tuple[Any, Any]:
        if len(tuple(size.shape)) != 0:
            raise InvalidArgumentError(
                f"TensorArray size must be scalar, but had shape: {list(size.shape)}")
        n = _int(size)
        if n < 0:
            raise InvalidArgumentError(f"TensorArray '{ctx.op.name}': Size should be >= 0.")
        state = TensorArrayState(f"{base}_{next(_COUNTER)}", n, shape, identical, dynamic, clear,
                                 zeros)
        return state, torch.zeros((), dtype=torch.float32, device=device)

    return run


@kernel("TensorArrayGradV3")
def _grad(ctx: KernelContext):
    source = ctx.attr("source")

    def run(handle: Any, flow: Any) -> tuple[Any, Any]:
        return _state(ctx, handle).gradient_array(source), flow

    return run


@kernel("TensorArrayWriteV3")
def _write(ctx: KernelContext):
    def run(handle: Any, index: Any, value: Any, flow: Any) -> Any:
        _state(ctx, handle).write(_int(index), value)
        return flow

    return run


@kernel("TensorArrayReadV3")
def _read(ctx: KernelContext):
    def run(handle: Any, index: Any, flow: Any) -> Any:
        return _state(ctx, handle).read(_int(index))

    return run


def _stack_values(values: list[Any]) -> Any:
    if isinstance(values[0], np.ndarray):
        return np.stack(values)
    return torch.stack(values)


def _concat_values(values: list[Any]) -> Any:
    if isinstance(values[0], np.ndarray):
        return np.concatenate(values, 0)
    return torch.cat(values, 0)


@kernel("TensorArrayGatherV3")
def _gather(ctx: KernelContext):
    element_shape = as_shape(ctx.attr("element_shape"))

    def run(handle: Any, indices: Any, flow: Any) -> Any:
        state = _state(ctx, handle)
        state.set_element_shape(element_shape)
        positions = _ints(ctx, indices, "indices")
        if not positions:
            check_empty_shape(state, state.element_shape, "packing")
            return state.zeros((0, *state.element_shape.as_list()))
        values = state.read_many(positions)
        first = tuple(values[0].shape)
        if not element_shape.is_compatible_with(TensorShape(list(first))):
            raise InvalidArgumentError(
                f"TensorArray was passed element_shape {element_shape} which does not match "
                f"the Tensor at index 0: {list(first)}")
        for i, value in enumerate(values[1:], 1):
            if tuple(value.shape) != first:
                raise InvalidArgumentError(
                    f"TensorArray {state.name} has inconsistent shapes.  Index 0 has shape: "
                    f"{list(first)} but index {i} has shape: {list(value.shape)}")
        return _stack_values(values)

    return run


@kernel("TensorArrayScatterV3")
def _scatter(ctx: KernelContext):
    def run(handle: Any, indices: Any, value: Any, flow: Any) -> Any:
        state = _state(ctx, handle)
        positions = _ints(ctx, indices, "indices")
        if len(tuple(value.shape)) == 0:
            raise InvalidArgumentError(
                f"TensorArray {state.name}: Expected value to be at least a vector, but "
                f"received shape: {list(value.shape)}")
        if len(positions) != value.shape[0]:
            raise InvalidArgumentError(
                f"TensorArray {state.name}: Expected len(indices) == values.shape[0], but saw: "
                f"{len(positions)} vs. {value.shape[0]}")
        if positions and not state.dynamic_size and max(positions) >= state.size():
            raise InvalidArgumentError(
                f"TensorArray {state.name}: Max scatter index must be < array size "
                f"({max(positions)} vs. {state.size()})")
        state.write_many(positions, [value[i] for i in range(len(positions))])
        return flow

    return run


@kernel("TensorArrayConcatV3")
def _concat(ctx: KernelContext):
    except0 = as_shape(ctx.attr("element_shape_except0"))
    device = ctx.torch_device

    def run(handle: Any, flow: Any) -> tuple[Any, Any]:
        state = _state(ctx, handle)
        size = state.size()
        if size == 0:
            check_empty_shape(state, except0, "concatenating")
            return (state.zeros((0, *except0.as_list())),
                    torch.zeros(0, dtype=torch.int64, device=device))
        values = state.read_many(range(size))
        _check_concat_shapes(state, except0, values)
        lengths = torch.tensor([v.shape[0] for v in values], dtype=torch.int64, device=device)
        return _concat_values(values), lengths

    return run


def _check_concat_shapes(state: TensorArrayState, except0: TensorShape, values: list[Any]) -> None:
    first: tuple[int, ...] | None = None
    for i, value in enumerate(values):
        shape = tuple(value.shape)
        if not shape:
            raise InvalidArgumentError(
                f"TensorArray {state.name}: Concat saw a scalar shape at index {i} but "
                "requires at least vectors.  Did you mean to call pack?")
        if first is None:
            first = shape[1:]
            if not except0.is_compatible_with(TensorShape(list(first))):
                raise InvalidArgumentError(
                    f"TensorArray {state.name} was passed element_shape_except0 {except0} but "
                    f"index 0 has (excepting dimension 0) shape: {list(first)} which does not "
                    "match.")
        elif shape[1:] != first:
            raise InvalidArgumentError(
                f"TensorArray {state.name} has inconsistent shapes.  Index 0 has (excepting "
                f"dimension 0) shape: {list(first)} but index {i} has (excepting dimension 0) "
                f"shape: {list(shape[1:])}")


@kernel("TensorArraySplitV3")
def _split(ctx: KernelContext):
    def run(handle: Any, value: Any, lengths: Any, flow: Any) -> Any:
        state = _state(ctx, handle)
        sizes = _ints(ctx, lengths, "lengths")
        if len(tuple(value.shape)) == 0:
            raise InvalidArgumentError(
                f"TensorArray {state.name}: Expected value to be at least a vector, but "
                f"received shape: {list(value.shape)}")
        if sum(sizes) != value.shape[0]:
            raise InvalidArgumentError(
                f"TensorArray {state.name}: Expected sum of lengths to be equal to "
                f"values.shape[0], but sum of lengths is {sum(sizes)} and value's shape is: "
                f"{list(value.shape)}")
        if not state.dynamic_size and state.size() != len(sizes):
            raise InvalidArgumentError(
                f"TensorArray {state.name}: TensorArray's size is not equal to the size of "
                f"lengths ({state.size()} vs. {len(sizes)}), and the TensorArray is not marked "
                "as dynamically resizeable")
        starts = list(itertools.accumulate([0] + sizes))
        state.write_many(range(len(sizes)),
                         [value[starts[i]:starts[i + 1]] for i in range(len(sizes))])
        return flow

    return run


@kernel("TensorArraySizeV3")
def _size(ctx: KernelContext):
    device = ctx.torch_device

    def run(handle: Any, flow: Any) -> Any:
        return torch.tensor(_state(ctx, handle).size(), dtype=torch.int32, device=device)

    return run


@kernel("TensorArrayCloseV3")
def _close(ctx: KernelContext):
    def run(handle: Any) -> None:
        _state(ctx, handle).close()

    return run
