"""``tf.keras.backend`` tensor functions (``K.sum``, ``K.shape``, ``K.repeat_elements``...)
as tf-keras defines them in graph mode, built from flowmesh ops; re-exported by
:mod:`flowmesh.keras.backend`."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.ops import array_ops, cast_ops, clip_ops, linalg_ops, manip_ops, math_ops, reduction_ops


def _floatx() -> str:
    from flowmesh.keras.backend_state import floatx

    return floatx()


def _float_if_bool(x: Any) -> Any:
    x = convert_to_tensor(x)
    return cast_ops.cast(x, _floatx()) if x.dtype == dtypes.bool else x


def _unary(name: str) -> Callable[[Any], Any]:
    """``K.<name>(x)``: ``math_ops.<name>`` element-wise."""
    op = getattr(math_ops, name)

    def fn(x: Any) -> Any:
        return op(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Element-wise ``{name}`` of ``x``."
    return fn


def _binary(name: str) -> Callable[[Any, Any], Any]:
    """``K.<name>(x, y)``: ``math_ops.<name>`` element-wise, with broadcasting."""
    op = getattr(math_ops, name)

    def fn(x: Any, y: Any) -> Any:
        return op(x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Element-wise ``{name}`` of ``x`` and ``y`` (broadcasting)."
    return fn


# --- shapes and types ---------------------------------------------------------------------
def shape(x: Any) -> Any:
    """The dynamic shape of ``x`` (an int32 tensor)."""
    return array_ops.shape(x)


def ndim(x: Any) -> int | None:
    return convert_to_tensor(x).shape.rank


def dtype(x: Any) -> str:
    return x.dtype.base_dtype.name


def cast(x: Any, dtype: Any) -> Any:  # noqa: A002 - Keras's argument name
    return cast_ops.cast(x, dtype)


def cast_to_floatx(x: Any) -> Any:
    """NumPy values become NumPy arrays of ``floatx()``; tensors are cast."""
    if isinstance(x, (np.ndarray, float, int, list, tuple)):
        return np.asarray(x, dtype=_floatx())
    return cast_ops.cast(x, _floatx())


def count_params(x: Any) -> int:
    return int(np.prod(x.shape.as_list()))


def is_sparse(tensor: Any) -> bool:
    from flowmesh.core.sparse_tensor import SparseTensor

    return isinstance(tensor, SparseTensor)


def to_dense(tensor: Any) -> Any:
    if is_sparse(tensor):
        from flowmesh.ops.sparse_ops import sparse_tensor_to_dense

        return sparse_tensor_to_dense(tensor)
    return tensor


def is_keras_tensor(x: Any) -> bool:
    """Whether ``x`` was produced by a Keras layer (or ``tf.keras.Input``).

    Raises:
        ValueError: ``x`` is not a tensor.
    """
    from flowmesh.core.graph import Tensor
    from flowmesh.keras.engine import node as node_lib

    if not isinstance(x, Tensor) and not is_sparse(x) and type(x).__name__ not in ("Variable", "ResourceVariable"):
        raise ValueError(f"Unexpectedly found an instance of type `{type(x)}`. Expected a symbolic tensor instance.")
    return node_lib.history(x) is not None


# --- reductions ---------------------------------------------------------------------------
def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001 - Keras's name
    return reduction_ops.reduce_sum(x, axis, keepdims=keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return reduction_ops.reduce_prod(x, axis, keepdims=keepdims)


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return reduction_ops.reduce_max(x, axis, keepdims=keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return reduction_ops.reduce_min(x, axis, keepdims=keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The mean (booleans are averaged as ``floatx()``)."""
    return reduction_ops.reduce_mean(_float_if_bool(x), axis, keepdims=keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return reduction_ops.reduce_variance(_float_if_bool(x), axis=axis, keepdims=keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return reduction_ops.reduce_std(_float_if_bool(x), axis=axis, keepdims=keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return reduction_ops.reduce_any(cast_ops.cast(x, dtypes.bool), axis, keepdims=keepdims)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return reduction_ops.reduce_all(cast_ops.cast(x, dtypes.bool), axis, keepdims=keepdims)


def argmax(x: Any, axis: int = -1) -> Any:
    return reduction_ops.argmax(x, axis)


def argmin(x: Any, axis: int = -1) -> Any:
    return reduction_ops.argmin(x, axis)


def cumsum(x: Any, axis: int = 0) -> Any:
    return reduction_ops.cumsum(x, axis=axis)


def cumprod(x: Any, axis: int = 0) -> Any:
    return reduction_ops.cumprod(x, axis=axis)


# --- element-wise -------------------------------------------------------------------------
abs = _unary("abs")  # noqa: A001 - Keras's name
square = _unary("square")
exp = _unary("exp")
log = _unary("log")
round = _unary("round")  # noqa: A001 - Keras's name
sign = _unary("sign")
sin = _unary("sin")
cos = _unary("cos")
equal = _binary("equal")
not_equal = _binary("not_equal")
greater = _binary("greater")
greater_equal = _binary("greater_equal")
less = _binary("less")
less_equal = _binary("less_equal")
maximum = _binary("maximum")
minimum = _binary("minimum")


def sqrt(x: Any) -> Any:
    """``sqrt(max(x, 0))`` (negative inputs give 0, as tf-keras)."""
    x = convert_to_tensor(x)
    return math_ops.sqrt(clip_ops.clip_by_value(x, 0.0, np.inf))


def pow(x: Any, a: Any) -> Any:  # noqa: A001
    return math_ops.pow(x, a)


def clip(x: Any, min_value: Any, max_value: Any) -> Any:
    """``x`` clipped to ``[min_value, max_value]`` (``max_value < min_value`` clips to
    ``min_value``; None means unbounded)."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and max_value < min_value:
        max_value = min_value
    min_value = -np.inf if min_value is None else min_value
    max_value = np.inf if max_value is None else max_value
    return clip_ops.clip_by_value(x, min_value, max_value)


# --- products -----------------------------------------------------------------------------
def dot(x: Any, y: Any) -> Any:
    """``x @ y``; for higher ranks the last axis of ``x`` with the second-to-last of ``y``
    (result ``x.shape[:-1] + y.shape[:-2] + y.shape[-1:]``, as Theano's ``dot``)."""
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    if x.shape.rank is not None and y.shape.rank is not None and (x.shape.rank > 2 or y.shape.rank > 2):
        return linalg_ops.tensordot(x, y, [[x.shape.rank - 1], [builtins.max(y.shape.rank - 2, 0)]])
    return linalg_ops.matmul(x, y)


def _move_axis(x: Any, source: int, destination: int) -> Any:
    rank = x.shape.rank
    pattern = [i for i in range(rank) if i != source]
    pattern.insert(destination if destination >= 0 else rank + destination, source)
    return array_ops.transpose(x, pattern) if pattern != list(range(rank)) else x


def _batch_dot_axes(x: Any, y: Any, axes: Any) -> list[int]:
    x_ndim, y_ndim = x.shape.rank, y.shape.rank
    if x_ndim is None or y_ndim is None or x_ndim < 2 or y_ndim < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received inputs with shapes "
                         f"{x.shape} and {y.shape}.")
    if isinstance(axes, int):
        axes = [axes, axes]
    elif axes is None:
        axes = [x_ndim - 1, y_ndim - 1] if y_ndim == 2 else [x_ndim - 1, y_ndim - 2]
    if builtins.any(isinstance(a, (list, tuple)) for a in axes):
        raise ValueError(f"Multiple target dimensions are not supported. Expected: None, int, (int, int), "
                         f"Provided: {axes}")
    axes = [axes[0] + x_ndim if axes[0] < 0 else axes[0], axes[1] + y_ndim if axes[1] < 0 else axes[1]]
    if 0 in axes:
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not batched, add a dummy "
                         f"batch dimension to your inputs using K.expand_dims(x, 0). Received axes {axes}")
    d1, d2 = x.shape[axes[0]], y.shape[axes[1]]
    if d1 is not None and d2 is not None and d1 != d2:
        raise ValueError(f"Cannot do batch_dot on inputs with shapes {x.shape} and {y.shape} with axes={axes}. "
                         f"x.shape[{axes[0]}] != y.shape[{axes[1]}] ({d1} != {d2}).")
    return axes


def batch_dot(x: Any, y: Any, axes: Any = None) -> Any:
    """Per-sample dot products of two batches: the ``axes`` of ``x`` and ``y`` are summed
    over, the batch axis is kept (tf-keras's result shapes, rank-2 inputs included)."""
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    a0, a1 = _batch_dot_axes(x, y, axes)
    x_rank, y_rank = x.shape.rank, y.shape.rank
    if x_rank == 2:
        x, a0 = array_ops.expand_dims(x, 1), a0 + 1
    if y_rank == 2:
        y = array_ops.expand_dims(y, 2)
    x, y = _move_axis(x, a0, -1), _move_axis(y, a1, 1)
    x_mid = y_trail = None
    if x.shape.rank > 3:
        dims = array_ops.shape(x)
        x_mid = dims[1:-1]
        x = array_ops.reshape(x, array_ops.stack([dims[0], -1, dims[-1]]))
    if y.shape.rank > 3:
        dims = array_ops.shape(y)
        y_trail = dims[2:]
        y = array_ops.reshape(y, array_ops.stack([dims[0], dims[1], -1]))
    result = linalg_ops.matmul(x, y)
    if x_mid is not None or y_trail is not None:
        out = array_ops.shape(result)
        parts = [out[:1], x_mid if x_mid is not None else out[1:2], y_trail if y_trail is not None else out[2:]]
        result = array_ops.reshape(result, array_ops.concat(parts, 0))
    if x_rank == 2:
        return array_ops.squeeze(result, [1])
    if y_rank == 2:
        return array_ops.squeeze(result, [-1])
    return result


# --- shape manipulation -------------------------------------------------------------------
def reshape(x: Any, shape: Any) -> Any:  # noqa: A002
    return array_ops.reshape(x, shape)


def transpose(x: Any) -> Any:
    return array_ops.transpose(x)


def permute_dimensions(x: Any, pattern: Any) -> Any:
    return array_ops.transpose(x, list(pattern))


def expand_dims(x: Any, axis: int = -1) -> Any:
    return array_ops.expand_dims(x, axis)


def squeeze(x: Any, axis: Any) -> Any:
    return array_ops.squeeze(x, [axis] if isinstance(axis, int) else axis)


def stack(x: Any, axis: int = 0) -> Any:
    return array_ops.stack(x, axis=axis)


def concatenate(tensors: Any, axis: int = -1) -> Any:
    """Concatenation along ``axis`` (a negative axis counts from the first tensor's rank)."""
    if axis < 0:
        rank = ndim(tensors[0])
        axis = axis % rank if rank else 0
    return array_ops.concat(list(tensors), axis)


def flatten(x: Any) -> Any:
    return array_ops.reshape(x, [-1])


def batch_flatten(x: Any) -> Any:
    """``[batch, d1, d2, ...]`` -> ``[batch, d1 * d2 * ...]``."""
    dims = array_ops.shape(x)
    return array_ops.reshape(x, array_ops.stack([-1, reduction_ops.reduce_prod(dims[1:])]))


def repeat_elements(x: Any, rep: int, axis: int) -> Any:
    """Each slice of ``x`` along ``axis`` repeated ``rep`` times (``np.repeat``); a known
    size along ``axis`` keeps the static shape (slices concatenated, as tf-keras)."""
    x = convert_to_tensor(x)
    size = x.shape.as_list()[axis] if x.shape.rank is not None else None
    if size is not None:
        slices = array_ops.split(x, size, axis=axis) if size > 1 else [x]
        return array_ops.concat([s for s in slices for _ in range(rep)], axis)
    return manip_ops.repeat(x, rep, axis=axis)


def repeat(x: Any, n: int) -> Any:
    """``[batch, dim]`` -> ``[batch, n, dim]``."""
    return manip_ops.tile(array_ops.expand_dims(x, 1), [1, n, 1])


def tile(x: Any, n: Any) -> Any:
    return manip_ops.tile(x, [n] if isinstance(n, int) else n)


def reverse(x: Any, axes: Any) -> Any:
    return manip_ops.reverse(x, [axes] if isinstance(axes, int) else list(axes))


def gather(reference: Any, indices: Any) -> Any:
    from flowmesh.ops.gather_ops import gather as gather_op

    return gather_op(reference, indices)


def one_hot(indices: Any, num_classes: int) -> Any:
    return manip_ops.one_hot(indices, depth=num_classes, axis=-1)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = "int32") -> Any:  # noqa: A002
    """``range(start, stop, step)`` as a tensor (a negative lone ``start`` gives [])."""
    from flowmesh.ops.range_ops import range as range_op

    if stop is None and isinstance(start, (int, float)) and start < 0:
        start = 0
    result = range_op(start, limit=stop, delta=step, name="arange")
    return result if dtype == "int32" else cast_ops.cast(result, dtype)


# --- constructors -------------------------------------------------------------------------
def _constant_variable(value: Any, dtype: Any, name: str | None) -> Any:
    from flowmesh.keras.backend_state import variable

    return variable(value, dtype=dtype, name=name)


def zeros(shape: Any, dtype: Any = None, name: str | None = None) -> Any:  # noqa: A002
    """A variable of zeros (a tensor when ``shape`` is not fully known)."""
    dtype = dtype or _floatx()
    if builtins.all(isinstance(d, int) for d in shape):
        return _constant_variable(np.zeros(shape), dtype, name)
    return array_ops.zeros(shape, dtype=dtype, name=name)


def ones(shape: Any, dtype: Any = None, name: str | None = None) -> Any:  # noqa: A002
    """A variable of ones (a tensor when ``shape`` is not fully known)."""
    dtype = dtype or _floatx()
    if builtins.all(isinstance(d, int) for d in shape):
        return _constant_variable(np.ones(shape), dtype, name)
    return array_ops.ones(shape, dtype=dtype, name=name)


def eye(size: Any, dtype: Any = None, name: str | None = None) -> Any:
    """An identity-matrix variable (``size`` an int or ``(rows, cols)``)."""
    rows, cols = (size, size) if isinstance(size, int) else size
    return _constant_variable(np.eye(rows, cols), dtype or _floatx(), name)


def zeros_like(x: Any, dtype: Any = None, name: str | None = None) -> Any:
    return array_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x: Any, dtype: Any = None, name: str | None = None) -> Any:
    return array_ops.ones_like(x, dtype=dtype, name=name)


# --- variables and gradients --------------------------------------------------------------
def update(x: Any, new_x: Any) -> Any:
    from flowmesh.ops.state_ops import assign

    return assign(x, new_x)


def update_add(x: Any, increment: Any) -> Any:
    from flowmesh.ops.state_ops import assign_add

    return assign_add(x, increment)


def update_sub(x: Any, decrement: Any) -> Any:
    from flowmesh.ops.state_ops import assign_sub

    return assign_sub(x, decrement)


def moving_average_update(x: Any, value: Any, momentum: float) -> Any:
    """``x = x * momentum + value * (1 - momentum)`` (an assign op)."""
    from flowmesh.ops.state_ops import assign_sub

    return assign_sub(x, (x - cast_ops.cast(value, x.dtype.base_dtype)) * (1.0 - momentum))


def gradients(loss: Any, variables: Any) -> Any:
    from flowmesh.ops.gradients_impl import gradients as gradients_op

    return gradients_op(loss, variables, colocate_gradients_with_ops=True)


def stop_gradient(variables: Any) -> Any:
    if isinstance(variables, (list, tuple)):
        return [array_ops.stop_gradient(v) for v in variables]
    return array_ops.stop_gradient(variables)


def print_tensor(x: Any, message: str = "", summarize: int = 3) -> Any:
    """``x``, printing ``message`` and its value (to stdout) whenever it is computed."""
    import sys

    from flowmesh.core.graph import control_dependencies
    from flowmesh.ops.print_ops import print_v2

    printed = print_v2(message, x, output_stream=sys.stdout, summarize=summarize)
    with control_dependencies([printed]):
        return array_ops.identity(x)


__all__ = [
    "abs", "all", "any", "arange", "argmax", "argmin", "batch_dot", "batch_flatten", "cast",
    "cast_to_floatx", "clip", "concatenate", "cos", "count_params", "cumprod", "cumsum", "dot",
    "dtype", "equal", "exp", "expand_dims", "eye", "flatten", "gather", "gradients", "greater",
    "greater_equal", "is_keras_tensor", "is_sparse", "less", "less_equal", "log", "max", "maximum",
    "mean", "min", "minimum", "moving_average_update", "ndim", "not_equal", "one_hot", "ones",
    "ones_like", "permute_dimensions", "pow", "print_tensor", "prod", "repeat", "repeat_elements",
    "reshape", "reverse", "round", "shape", "sign", "sin", "sqrt", "square", "squeeze", "stack",
    "std", "stop_gradient", "sum", "tile", "to_dense", "transpose", "update", "update_add",
    "update_sub", "var", "zeros", "zeros_like",
]
