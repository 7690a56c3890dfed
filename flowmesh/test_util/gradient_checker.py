"""``tf.test.compute_gradient`` / ``compute_gradient_error`` of TensorFlow 1.x: the Jacobian
of ``y`` with respect to ``x`` from the graph's gradients (one backward pass per element of
``y``) next to central finite differences (two forward passes per element of ``x``), both
run in the default session."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.default_session import get_default_session_or_raise
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.ops import array_ops, cast_ops, gradients_impl
from flowmesh.ops.constant_op import constant

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _size(shape: Any) -> int:
    return int(np.prod(shape, dtype=np.int64)) if not isinstance(shape, int) else shape


def _feeds(extra: dict | None, new: dict) -> dict:
    return {**(extra or {}), **new}


def _theoretical(x: Any, x_shape: Any, x_data: np.ndarray, dy: Any, y_shape: Any, dx: Any,
                 extra: dict | None) -> np.ndarray:
    sess = get_default_session_or_raise()
    x_size, dy_size = _size(x_shape), _size(y_shape)
    row = _size(list(x_shape)[1:]) if len(list(x_shape)) > 1 else 1
    jacobian = np.zeros((x_size, dy_size), dtype=np.float64 if x.dtype == dtypes.float64 else np.float32)
    dy_data = np.zeros(y_shape, dtype=dy.dtype.as_numpy_dtype)
    flat = dy_data.reshape(-1)
    for col in range(dy_size):
        flat[col] = 1
        feed = _feeds(extra, {x: x_data, dy: dy_data})
        if isinstance(dx, IndexedSlices):
            indices, values = sess.run([dx.indices, dx.values], feed)
            for i, v in zip(indices, values):
                jacobian[i * row:(i + 1) * row, col] += np.asarray(v).reshape(-1)
        else:
            jacobian[:, col] = np.asarray(sess.run(dx, feed)).reshape(-1)
        flat[col] = 0
    if not dy_size:
        back = np.asarray(sess.run(dx, _feeds(extra, {x: x_data, dy: dy_data})))
        if back.shape != x_data.shape:
            raise ValueError(f"Empty gradient has wrong shape: expected {x_data.shape}, got {back.shape}")
        if np.any(back):
            raise ValueError("Empty tensor with nonzero gradients")
    return jacobian


def _numeric(x: Any, x_shape: Any, x_data: np.ndarray, y: Any, y_shape: Any, delta: float,
             extra: dict | None) -> np.ndarray:
    sess = get_default_session_or_raise()
    if x.dtype == dtypes.bfloat16:
        x_data = x_data.astype(np.float32)
    if y.dtype == dtypes.bfloat16:
        y = cast_ops.cast(y, dtypes.float32)
    x_size, y_size = _size(x_shape), _size(y_shape)
    jacobian = np.zeros((x_size, y_size), dtype=np.float64 if x.dtype == dtypes.float64 else np.float32)
    scale = np.asarray(2 * delta, dtype=np.float64 if y.dtype == dtypes.float64 else np.float32)
    for r in range(x_size):
        pos, neg = x_data.copy(), x_data.copy()
        pos.reshape(-1)[r] += delta
        neg.reshape(-1)[r] -= delta
        y_pos = np.asarray(sess.run(y, _feeds(extra, {x: pos})))
        y_neg = np.asarray(sess.run(y, _feeds(extra, {x: neg})))
        jacobian[r, :] = ((y_pos - y_neg) / scale).reshape(-1)
    return jacobian


def _dx_and_dy(x: Any, y: Any, y_shape: Any) -> tuple[Any, Any]:
    with x.graph.as_default():
        dy_orig = constant(1.0, shape=list(y_shape), dtype=y.dtype)
        dy = array_ops.identity(dy_orig)
    grads = gradients_impl.gradients(y, x, dy)
    if grads[0] is None:
        raise ValueError(f"compute_gradient: {y.name} does not depend on {x.name} through differentiable ops")
    return grads[0], dy_orig


def _one(x: Any, x_shape: Any, dx: Any, y: Any, y_shape: Any, dy: Any, x_init_value: Any, delta: float,
         extra: dict | None) -> tuple[np.ndarray, np.ndarray]:
    for t, what in ((x, "x"), (y, "y")):
        if t.dtype.base_dtype not in _FLOATS:
            raise TypeError(f"compute_gradient: {what} must be a float tensor (complex is not supported), got "
                            f"{t.dtype.name}")
    if x_init_value is not None:
        if list(x_shape) != list(np.shape(x_init_value)):
            raise ValueError(f"x_shape = {list(x_shape)}, init_data shape = {list(np.shape(x_init_value))}")
        x_data = np.asarray(x_init_value)
    else:
        x_data = np.random.random_sample(x_shape).astype(x.dtype.as_numpy_dtype)
    return (_theoretical(x, x_shape, x_data, dy, y_shape, dx, extra),
            _numeric(x, x_shape, x_data, y, y_shape, delta, extra))


def compute_gradient(x: Any, x_shape: Any, y: Any, y_shape: Any, x_init_value: Any = None, delta: float = 1e-3,
                     init_targets: Any = None, extra_feed_dict: dict | None = None) -> Any:
    """``(jacobian_theoretical, jacobian_numerical)``, each ``[x_size, y_size]``, or a list
    of such pairs when ``x`` is a list. ``x`` is fed with ``x_init_value`` (random in [0, 1)
    when None); ``init_targets`` are run first (e.g. variable initializers).

    Raises:
        ValueError: no default session, or ``x_init_value`` of another shape.
    """
    if isinstance(x, list):
        pairs = [_dx_and_dy(xi, y, y_shape) for xi in x]
        for init in init_targets or ():
            init.run()
        inits = x_init_value if x_init_value is not None else [None] * len(x)
        return [_one(xi, si, dxi, y, y_shape, dyi, vi, delta, extra_feed_dict)
                for xi, si, (dxi, dyi), vi in zip(x, x_shape, pairs, inits)]
    for init in init_targets or ():
        init.run()
    dx, dy = _dx_and_dy(x, y, y_shape)
    return _one(x, x_shape, dx, y, y_shape, dy, x_init_value, delta, extra_feed_dict)


def compute_gradient_error(x: Any, x_shape: Any, y: Any, y_shape: Any, x_init_value: Any = None,
                           delta: float = 1e-3, init_targets: Any = None,
                           extra_feed_dict: dict | None = None) -> float:
    """The largest absolute difference between the theoretical and the numerical Jacobian."""
    grad = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict)
    error = 0.0
    for theoretical, numerical in ([grad] if isinstance(grad, tuple) else grad):
        if theoretical.size or numerical.size:
            error = max(error, float(np.fabs(theoretical - numerical).max()))
    return error
