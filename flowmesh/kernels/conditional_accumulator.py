"""Kernels of ``flowmesh/ops/conditional_accumulator.py``: gradient accumulators.

An accumulator lives in the resource store of its device (the ps task of the variable
it aggregates for). Appliers add fresh gradients under its lock; ``take_grad`` waits on
its condition variable (see :func:`flowmesh.kernels.data_flow_ops.wait_until`, which
honours step aborts and deadlines) until enough gradients arrived, then hands out the
average and advances the accumulator's global step.

``stats()`` (flowmesh) counts applied, stale-dropped and taken gradients; tests and
monitoring read it from the resource store.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import torch

from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import CancelledError, InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.data_flow_ops import wait_until

logger = logging.getLogger("flowmesh.train")


class AccumulatorState:
    """What dense and sparse accumulators share: counts, global step, waiting."""

    kind = "ConditionalAccumulator"

    def __init__(self, name: str, shape: TensorShape, reduction: str):
        self.name = name
        self.declared_shape = shape if shape is not None else unknown_shape()
        self.reduction = reduction
        self.cond = threading.Condition()
        self.count = 0
        self.global_step = 0
        self.cancel_epoch = 0
        self.applied = 0
        self.stale_dropped = 0
        self.taken = 0

    def stats(self) -> dict[str, int]:
        """*(flowmesh)* ``applied``, ``stale_dropped``, ``taken`` counts, ``count`` now and
        the ``global_step``."""
        with self.cond:
            return {"applied": self.applied, "stale_dropped": self.stale_dropped, "taken": self.taken,
                    "count": self.count, "global_step": self.global_step}

    def is_fresh(self, local_step: int) -> bool:
        """With the lock held: False (and counted) for a stale gradient."""
        if local_step < self.global_step:
            self.stale_dropped += 1
            return False
        self.applied += 1
        return True

    def set_global_step(self, step: int) -> None:
        with self.cond:
            if step < self.global_step:
                logger.warning("Attempt to set the global step of accumulator %s to %d, lower than "
                               "its current step %d", self.name, step, self.global_step)
            self.global_step = step

    def cancel_pending_takes(self) -> None:
        with self.cond:
            self.cancel_epoch += 1
            self.cond.notify_all()

    def wait_for(self, step: Any, num_required: int) -> None:
        """With the lock held: waits until ``num_required`` gradients are in.

        Raises:
            InvalidArgumentError: ``num_required`` < 1.
            CancelledError: :meth:`cancel_pending_takes` ran, or the step was aborted.
        """
        if num_required < 1:
            raise InvalidArgumentError(
                f"Argument num_required must be positive, but was {num_required} (accumulator "
                f"'{self.name}')")
        epoch = self.cancel_epoch
        wait_until(self.cond, lambda: self.count >= num_required or self.cancel_epoch != epoch, step,
                   f"take {num_required} gradient(s) from {self.kind} '{self.name}'")
        if self.count < num_required:
            raise CancelledError(None, None, f"take_grad on {self.kind} '{self.name}' was cancelled "
                                             f"with {self.count} of {num_required} gradients")

    def finish_take(self) -> None:
        self.count = 0
        self.global_step += 1
        self.taken += 1


class DenseAccumulatorState(AccumulatorState):
    """A running sum of dense gradients."""

    def __init__(self, name: str, shape: TensorShape, reduction: str):
        super().__init__(name, shape, reduction)
        self.sum: Any = None

    def apply(self, local_step: int, grad: Any) -> None:
        with self.cond:
            expected = self.declared_shape if self.sum is None else TensorShape(list(self.sum.shape))
            if not expected.is_compatible_with(tuple(grad.shape)):
                raise InvalidArgumentError(
                    f"Shape mismatch: expected {expected}, got {list(grad.shape)} for the gradient "
                    f"applied to ConditionalAccumulator '{self.name}'")
            if not self.is_fresh(local_step):
                return
            self.sum = grad.clone() if self.sum is None else self.sum.add_(grad)
            self.count += 1
            self.cond.notify_all()

    def take(self, step: Any, num_required: int) -> Any:
        with self.cond:
            self.wait_for(step, num_required)
            total, count = self.sum, self.count
            self.sum = None
            self.finish_take()
        if self.reduction == "SUM":
            return total
        if total.is_floating_point() or total.is_complex():
            return total.div_(count)
        return torch.div(total, count, rounding_mode="trunc")


class SparseAccumulatorState(AccumulatorState):
    """Sparse gradients kept as (unique indices, summed rows) per applied gradient."""

    kind = "SparseConditionalAccumulator"

    def __init__(self, name: str, shape: TensorShape, reduction: str):
        super().__init__(name, shape, reduction)
        self.entries: list[tuple[Any, Any]] = []
        self.dense_shape: list[int] | None = None
        self.row_shape: tuple[int, ...] | None = None

    def _validate(self, indices: Any, values: Any, shape: list[int] | None) -> None:
        if indices.dim() != 1 or values.dim() < 1 or values.shape[0] != indices.shape[0]:
            raise InvalidArgumentError(
                f"SparseConditionalAccumulator '{self.name}': indices must be a vector with one entry "
                f"per row of values; got indices {list(indices.shape)} and values {list(values.shape)}")
        known = self.declared_shape if self.declared_shape.rank else None
        row = tuple(values.shape[1:])
        if (known is not None and not known[1:].is_compatible_with(row)) or \
                (self.row_shape is not None and row != self.row_shape):
            raise InvalidArgumentError(
                f"Shape mismatch: gradient rows of shape {list(row)} applied to "
                f"SparseConditionalAccumulator '{self.name}' expecting rows of "
                f"{known[1:] if known is not None else list(self.row_shape or ())}")
        if shape is not None:
            if (known is not None and not known.is_compatible_with(shape)) or \
                    (self.dense_shape is not None and shape != self.dense_shape):
                raise InvalidArgumentError(
                    f"Shape mismatch: gradient of dense shape {shape} applied to "
                    f"SparseConditionalAccumulator '{self.name}' of shape "
                    f"{self.dense_shape if self.dense_shape is not None else known}")
            if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= shape[0]):
                raise InvalidArgumentError(
                    f"SparseConditionalAccumulator '{self.name}': an index is outside [0, {shape[0]})")

    def apply(self, local_step: int, indices: Any, values: Any, shape: list[int] | None) -> None:
        indices = indices.long()
        with self.cond:
            self._validate(indices, values, shape)
            if not self.is_fresh(local_step):
                return
            unique, inverse = torch.unique(indices, return_inverse=True)
            rows = torch.zeros((unique.numel(), *values.shape[1:]), dtype=values.dtype)
            rows.index_add_(0, inverse, values)
            self.entries.append((unique, rows))
            self.row_shape = tuple(values.shape[1:])
            if shape is not None:
                self.dense_shape = list(shape)
            self.count += 1
            self.cond.notify_all()

    def take(self, step: Any, num_required: int) -> tuple[Any, Any, Any]:
        with self.cond:
            self.wait_for(step, num_required)
            entries, dense_shape = self.entries, self.dense_shape
            self.entries = []
            self.finish_take()
        all_indices = torch.cat([e[0] for e in entries])
        unique, inverse = torch.unique(all_indices, return_inverse=True)
        rows = torch.cat([e[1] for e in entries])
        sums = torch.zeros((unique.numel(), *rows.shape[1:]), dtype=rows.dtype).index_add_(0, inverse, rows)
        if self.reduction == "MEAN":
            counts = torch.bincount(inverse, minlength=unique.numel()).to(sums.dtype)
            sums = sums / counts.reshape((-1,) + (1,) * (sums.dim() - 1))
        shape = dense_shape or self._fallback_shape(unique, rows)
        return unique, sums, torch.tensor(shape, dtype=torch.int64)

    def _fallback_shape(self, unique: Any, rows: Any) -> list[int]:
        if self.declared_shape.rank and self.declared_shape.is_fully_defined():
            return self.declared_shape.as_list()
        top = int(unique.max()) + 1 if unique.numel() else 0
        return [top, *rows.shape[1:]]


def _state(ctx: KernelContext, cls: type) -> AccumulatorState:
    name = ctx.attr("shared_name") or ctx.op.name
    return ctx.device.resources.lookup_or_create(
        ctx.attr("container", ""), name,
        lambda: cls(name, ctx.attr("shape"), ctx.attr("reduction_type", "MEAN")))


@kernel("ResourceConditionalAccumulator")
def _dense_accumulator(ctx: KernelContext):
    state = _state(ctx, DenseAccumulatorState)
    return lambda: state


@kernel("SparseConditionalAccumulator")
def _sparse_accumulator(ctx: KernelContext):
    state = _state(ctx, SparseAccumulatorState)
    return lambda: state


def _as(value: Any, cls: type, op_type: str) -> Any:
    if not isinstance(value, cls):
        raise InvalidArgumentError(f"{op_type} expects a {cls.kind} handle, got {type(value).__name__}")
    return value


@kernel("ResourceAccumulatorApplyGradient")
def _apply(ctx: KernelContext):
    def apply(handle: Any, local_step: Any, grad: Any) -> None:
        _as(handle, DenseAccumulatorState, "ResourceAccumulatorApplyGradient").apply(int(local_step), grad)

    return apply


@kernel("ResourceAccumulatorTakeGradient", needs_step=True)
def _take(ctx: KernelContext):
    def take(step: Any, handle: Any, num_required: Any) -> Any:
        state = _as(handle, DenseAccumulatorState, "ResourceAccumulatorTakeGradient")
        return state.take(step, int(num_required))

    return take


@kernel("SparseAccumulatorApplyGradient")
def _sparse_apply(ctx: KernelContext):
    known = bool(ctx.attr("has_known_shape", False))

    def apply(handle: Any, local_step: Any, indices: Any, values: Any, shape: Any) -> None:
        state = _as(handle, SparseAccumulatorState, "SparseAccumulatorApplyGradient")
        dense = [int(d) for d in shape.reshape(-1).tolist()] if known else None
        state.apply(int(local_step), indices, values, dense)

    return apply


@kernel("SparseAccumulatorTakeGradient", needs_step=True)
def _sparse_take(ctx: KernelContext):
    def take(step: Any, handle: Any, num_required: Any) -> Any:
        state = _as(handle, SparseAccumulatorState, "SparseAccumulatorTakeGradient")
        return state.take(step, int(num_required))

    return take


@kernel("ResourceAccumulatorNumAccumulated")
def _num_accumulated(ctx: KernelContext):
    def num(handle: Any) -> Any:
        state = _as(handle, AccumulatorState, "ResourceAccumulatorNumAccumulated")
        with state.cond:
            return torch.tensor(state.count, dtype=torch.int32)

    return num


@kernel("ResourceAccumulatorSetGlobalStep")
def _set_global_step(ctx: KernelContext):
    return lambda handle, step: _as(handle, AccumulatorState, "ResourceAccumulatorSetGlobalStep"
                                    ).set_global_step(int(step))


@kernel("AccumulatorCancelPendingTakes")
def _cancel(ctx: KernelContext):
    return lambda handle: _as(handle, AccumulatorState, "AccumulatorCancelPendingTakes").cancel_pending_takes()
