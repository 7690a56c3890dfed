"""Conditional accumulators: gradients from many workers, averaged once enough arrived.

``tf.ConditionalAccumulator`` (dense) and ``tf.SparseConditionalAccumulator``
(``IndexedSlices``) are resources on the device they are placed on (the ps task of the
variable they aggregate for), shared by every session of the cluster. A worker applies a
gradient tagged with the ``local_step`` it was computed at; gradients older than the
accumulator's global step are *stale* and silently dropped. ``take_grad(n)`` blocks
until ``n`` fresh gradients have arrived, returns their average (or sum), clears the
accumulator and advances its global step. This is what ``SyncReplicasOptimizer``
builds on.

Differences from TensorFlow:

* handles are ``resource`` tensors (TensorFlow's dense accumulator has a resource
  variant, its sparse one only a ref-string handle);
* the sparse accumulator first sums repeated indices inside one gradient, then averages
  each row over the gradients that touched it (TensorFlow keeps a repeated index of a
  single gradient as a separate row);
* *(flowmesh)* :meth:`ConditionalAccumulatorBase.cancel_pending_takes` wakes every
  ``take_grad`` blocked right now with ``CancelledError`` (the accumulator keeps its
  state), so a chief can stop its aggregation thread without waiting for gradients that
  will never come.

A blocked ``take_grad`` also returns when its step is aborted (a peer died) or its
deadline passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.ops._builders import make_op, make_tensor
from flowmesh.ops.cast_ops import cast

_RESOURCE = [(dtypes.resource, TensorShape([]))]
_REDUCTIONS = ("MEAN", "SUM")


# --- op definitions ------------------------------------------------------------------------
def _accumulator_attrs(handle: Tensor) -> dict[str, Any] | None:
    op = handle.op
    if op.type in ("ResourceConditionalAccumulator", "SparseConditionalAccumulator"):
        return op.attrs
    return None


def _apply_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    handle, local_step, grad = inputs
    if local_step.dtype != dtypes.int64:
        raise TypeError(f"local_step must be int64, got {local_step.dtype.name}")
    spec = _accumulator_attrs(handle)
    if spec is not None:
        if grad.dtype != spec["dtype"]:
            raise TypeError(f"Accumulator '{handle.op.name}' holds {spec['dtype'].name} gradients; got "
                            f"{grad.dtype.name}")
        if not grad.shape.is_compatible_with(spec["shape"]):
            raise ValueError(f"Shapes {grad.shape} and {spec['shape']} are incompatible: gradient applied "
                             f"to accumulator '{handle.op.name}'")
    return []


def _take_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    spec = _accumulator_attrs(inputs[0])
    shape = spec["shape"] if spec is not None else unknown_shape()
    return [(attrs["dtype"], shape)]


def _sparse_apply_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    handle, local_step, indices, values, shape = inputs
    if local_step.dtype != dtypes.int64 or indices.dtype != dtypes.int64 or shape.dtype != dtypes.int64:
        raise TypeError("SparseAccumulatorApplyGradient takes int64 local_step, indices and shape, got "
                        f"{local_step.dtype.name}, {indices.dtype.name}, {shape.dtype.name}")
    spec = _accumulator_attrs(handle)
    if spec is not None and values.dtype != spec["dtype"]:
        raise TypeError(f"Accumulator '{handle.op.name}' holds {spec['dtype'].name} gradients; got "
                        f"{values.dtype.name}")
    return []


def _sparse_take_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    spec = _accumulator_attrs(inputs[0])
    full = spec["shape"] if spec is not None else unknown_shape()
    row = full[1:] if full.rank else unknown_shape()
    rank = full.rank if full.rank else None
    return [(dtypes.int64, TensorShape([None])), (attrs["dtype"], TensorShape([None]).concatenate(row)),
            (dtypes.int64, TensorShape([rank]))]


def _no_outputs(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return []


register_op("ResourceConditionalAccumulator", lambda i, a: _RESOURCE, not_differentiable=True, stateful=True)
register_op("SparseConditionalAccumulator", lambda i, a: _RESOURCE, not_differentiable=True, stateful=True)
register_op("ResourceAccumulatorApplyGradient", _apply_shape, not_differentiable=True, stateful=True)
register_op("ResourceAccumulatorTakeGradient", _take_shape, not_differentiable=True, stateful=True)
register_op("SparseAccumulatorApplyGradient", _sparse_apply_shape, not_differentiable=True, stateful=True)
register_op("SparseAccumulatorTakeGradient", _sparse_take_shape, not_differentiable=True, stateful=True)
register_op("ResourceAccumulatorNumAccumulated", lambda i, a: [(dtypes.int32, TensorShape([]))],
            not_differentiable=True, stateful=True)
register_op("ResourceAccumulatorSetGlobalStep", _no_outputs, not_differentiable=True, stateful=True)
register_op("AccumulatorCancelPendingTakes", _no_outputs, not_differentiable=True, stateful=True)


# --- the Python API -------------------------------------------------------------------------
def _int64(value: Any, name: str) -> Tensor:
    return cast(convert_to_tensor(value, name=name), dtypes.int64)


def _check_reduction(reduction_type: str) -> str:
    if reduction_type not in _REDUCTIONS:
        raise ValueError(f"reduction_type must be one of {list(_REDUCTIONS)}, got {reduction_type!r}")
    return reduction_type


class ConditionalAccumulatorBase:
    """What dense and sparse accumulators share (``tf.ConditionalAccumulatorBase``).

    Args:
        dtype: the gradients' dtype.
        shape: the gradients' shape (``TensorShape``, possibly partial).
        accumulator_ref: the resource handle.
    """

    def __init__(self, dtype: Any, shape: Any, accumulator_ref: Tensor):
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = as_shape(shape) if shape is not None else unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name

    @property
    def accumulator_ref(self) -> Tensor:
        return self._accumulator_ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    def num_accumulated(self, name: str | None = None) -> Tensor:
        """How many gradients are accumulated now (an int32 scalar)."""
        return make_tensor("ResourceAccumulatorNumAccumulated", [self._accumulator_ref],
                           name=name or "AccumulatorNumAccumulated")

    def set_global_step(self, new_global_step: Any, name: str | None = None) -> Operation:
        """Sets the accumulator's global step (gradients with a lower local step are stale)."""
        step = _int64(new_global_step, "new_global_step")
        return make_op("ResourceAccumulatorSetGlobalStep", [self._accumulator_ref, step],
                       name=name or "AccumulatorSetGlobalStep")

    def cancel_pending_takes(self, name: str | None = None) -> Operation:
        """*(flowmesh)* Fails every ``take_grad`` blocked now with ``CancelledError``; the
        accumulated gradients and the global step stay as they are."""
        return make_op("AccumulatorCancelPendingTakes", [self._accumulator_ref],
                       name=name or "AccumulatorCancelPendingTakes")


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Averages dense gradients (``tf.ConditionalAccumulator``).

    Args:
        dtype: the gradients' dtype.
        shape: their shape (default unknown: the first gradient fixes it).
        shared_name: shares the accumulator under this name across sessions.
        name: the op name.
        reduction_type: ``"MEAN"`` (default) or ``"SUM"``.

    Raises:
        ValueError: an unknown ``reduction_type``.

    Example:
        >>> acc = tf.ConditionalAccumulator(tf.float32, shape=[10], shared_name="w/grad_accum")
        >>> apply = acc.apply_grad(grad, local_step=step)
        >>> average = acc.take_grad(num_required=2)    # blocks until two fresh gradients
    """

    def __init__(self, dtype: Any, shape: Any = None, shared_name: str | None = None,
                 name: str = "conditional_accumulator", reduction_type: str = "MEAN"):
        dtype = dtypes.as_dtype(dtype)
        shape = as_shape(shape) if shape is not None else unknown_shape()
        attrs = {"dtype": dtype, "shape": shape, "container": "", "shared_name": shared_name or "",
                 "reduction_type": _check_reduction(reduction_type)}
        ref = make_tensor("ResourceConditionalAccumulator", [], attrs, name=name)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None) -> Operation:
        """Adds ``grad`` unless it is stale (``local_step`` < the accumulator's global step).

        Raises:
            ValueError: ``grad`` has an incompatible shape.
        """
        grad = convert_to_tensor(grad, dtype=self._dtype, name="grad")
        if not grad.shape.is_compatible_with(self._shape):
            raise ValueError(f"Shapes {grad.shape} and {self._shape} are incompatible: gradient applied "
                             f"to accumulator '{self._name}'")
        step = _int64(local_step, "local_step")
        return make_op("ResourceAccumulatorApplyGradient", [self._accumulator_ref, step, grad],
                       {"dtype": self._dtype}, name=name or "AccumulatorApplyGradient")

    def take_grad(self, num_required: Any, name: str | None = None) -> Tensor:
        """The average (or sum) once ``num_required`` gradients arrived; then clears the
        accumulator and increments its global step. Blocks until then (or until the step
        is cancelled)."""
        n = convert_to_tensor(num_required, dtype=dtypes.int32, name="num_required")
        out = make_tensor("ResourceAccumulatorTakeGradient", [self._accumulator_ref, n],
                          {"dtype": self._dtype}, name=name or "AccumulatorTakeGradient")
        if self._shape.rank is not None:
            out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Averages ``IndexedSlices`` gradients row by row (``tf.SparseConditionalAccumulator``).

    Each row of the result is the average over the gradients that touched it.

    Args:
        dtype: the gradients' dtype.
        shape: the dense shape (a rank-0 or unknown shape accepts any).
        shared_name: shares the accumulator under this name across sessions.
        name: the op name.
        reduction_type: ``"MEAN"`` (default) or ``"SUM"``.
    """

    def __init__(self, dtype: Any, shape: Any = None, shared_name: str | None = None,
                 name: str = "sparse_conditional_accumulator", reduction_type: str = "MEAN"):
        dtype = dtypes.as_dtype(dtype)
        shape = as_shape(shape) if shape is not None else unknown_shape()
        attrs = {"dtype": dtype, "shape": shape, "container": "", "shared_name": shared_name or "",
                 "reduction_type": _check_reduction(reduction_type)}
        ref = make_tensor("SparseConditionalAccumulator", [], attrs, name=name)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad: IndexedSlices, local_step: Any = 0,
                                  name: str | None = None) -> Operation:
        """Adds an ``IndexedSlices`` gradient unless it is stale."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step,
                               name=name or "AccumulatorApplyGradient")

    def apply_grad(self, grad_indices: Any, grad_values: Any, grad_shape: Any = None,
                   local_step: Any = 0, name: str | None = None) -> Operation:
        """Adds rows ``grad_values`` at ``grad_indices`` unless stale.

        Raises:
            ValueError: values whose row shape does not match the accumulator's.
        """
        values = convert_to_tensor(grad_values, dtype=self._dtype, name="grad_values")
        if self._shape.rank and values.shape.rank is not None and \
                not values.shape[1:].is_compatible_with(self._shape[1:]):
            raise ValueError(f"Gradient rows of shape {values.shape[1:]} do not match accumulator "
                             f"'{self._name}' of shape {self._shape}")
        indices = _int64(grad_indices, "grad_indices")
        known = grad_shape is not None
        shape = _int64(grad_shape if known else [], "grad_shape")
        return make_op("SparseAccumulatorApplyGradient",
                       [self._accumulator_ref, _int64(local_step, "local_step"), indices, values, shape],
                       {"dtype": self._dtype, "has_known_shape": known},
                       name=name or "SparseAccumulatorApplyGradient")

    def take_grad(self, num_required: Any, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """``(indices, values, dense_shape)`` once ``num_required`` gradients arrived."""
        n = convert_to_tensor(num_required, dtype=dtypes.int32, name="num_required")
        op = make_op("SparseAccumulatorTakeGradient", [self._accumulator_ref, n], {"dtype": self._dtype},
                     name=name or "SparseAccumulatorTakeGradient")
        return op.outputs[0], op.outputs[1], op.outputs[2]

    def take_indexed_slices_grad(self, num_required: Any, name: str | None = None) -> IndexedSlices:
        """The averaged gradient as ``IndexedSlices``."""
        indices, values, shape = self.take_grad(num_required, name=name)
        return IndexedSlices(values, indices, shape)


__all__ = ["ConditionalAccumulator", "ConditionalAccumulatorBase", "SparseConditionalAccumulator"]
