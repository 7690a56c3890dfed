"""``tf.debugging`` assertions (``assert_equal`` ... ``assert_rank``) and ``check_numerics``.

Each assertion compares its inputs elementwise (broadcasting) and returns an ``Assert`` op
that fails at run time with ``InvalidArgumentError``; as in TensorFlow, it raises at graph
construction when the inputs are constants that already violate it, and returns a ``no_op``
when they are constants that satisfy it. Use the result with ``tf.control_dependencies``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, math_ops, reduction_ops
from flowmesh.ops._builders import FLOATS, check_dtype, constant_value, make_tensor, same_shape
from flowmesh.ops.control_flow_ops import group, no_op
from flowmesh.ops.dispatch import binary_elementwise_assert_api
from flowmesh.ops.logging_ops import Assert


def _static(t: Tensor) -> Any:
    value = constant_value(t)
    return None if value is None else np.asarray(value)


def _check(name: str, default: str, tensors: list[Any], condition: Callable[..., Tensor],
           numpy_condition: Callable[..., Any], what: str, data: Any, summarize: Any,
           message: str | None) -> Operation:
    with name_scope(name, default, tensors) as scope:
        ts = [convert_to_tensor(t, name=f"x{i}") for i, t in enumerate(tensors)]
        values = [_static(t) for t in ts]
        if all(v is not None for v in values):
            if bool(np.all(numpy_condition(*values))):
                return no_op(name="static_checks_determined_all_ok")
            raise InvalidArgumentError(None, None, f"{message or ''} Condition {what} did not hold: "
                                       f"{' vs '.join(np.array2string(v) for v in values)}".strip())
        ok = reduction_ops.reduce_all(condition(*ts))
        if data is None:
            data = [message or "", f"Condition {what} did not hold element-wise:"]
            for t in ts:
                data += [f"{t.name} = ", t]
        return Assert(ok, data, summarize=summarize, name=scope)


def _binary_assert(op: Callable[..., Tensor], np_op: Callable[..., Any], symbol: str, default: str):
    def assertion(x: Any, y: Any, data: Any = None, summarize: Any = None, message: str | None = None,
                  name: str | None = None) -> Operation:
        return _check(name, default, [x, y], op, np_op, f"x {symbol} y", data, summarize, message)

    assertion.__name__ = default
    assertion.__doc__ = f"Asserts ``x {symbol} y`` elementwise (``tf.debugging.{default}``)."
    return binary_elementwise_assert_api(assertion)


assert_equal = _binary_assert(math_ops.equal, np.equal, "==", "assert_equal")
assert_none_equal = _binary_assert(math_ops.not_equal, np.not_equal, "!=", "assert_none_equal")
assert_less = _binary_assert(math_ops.less, np.less, "<", "assert_less")
assert_less_equal = _binary_assert(math_ops.less_equal, np.less_equal, "<=", "assert_less_equal")
assert_greater = _binary_assert(math_ops.greater, np.greater, ">", "assert_greater")
assert_greater_equal = _binary_assert(math_ops.greater_equal, np.greater_equal, ">=", "assert_greater_equal")


def _sign_assert(op: Callable[..., Tensor], np_op: Callable[..., Any], symbol: str, default: str):
    def assertion(x: Any, data: Any = None, summarize: Any = None, message: str | None = None,
                  name: str | None = None) -> Operation:
        x = convert_to_tensor(x)
        zero = np.zeros([], x.dtype.as_numpy_dtype)
        return _check(name, default, [x], lambda t: op(t, zero), lambda v: np_op(v, 0), f"x {symbol} 0",
                      data, summarize, message)

    assertion.__name__ = default
    assertion.__doc__ = f"Asserts ``x {symbol} 0`` elementwise (``tf.debugging.{default}``)."
    return assertion


assert_positive = _sign_assert(math_ops.greater, np.greater, ">", "assert_positive")
assert_negative = _sign_assert(math_ops.less, np.less, "<", "assert_negative")
assert_non_negative = _sign_assert(math_ops.greater_equal, np.greater_equal, ">=", "assert_non_negative")
assert_non_positive = _sign_assert(math_ops.less_equal, np.less_equal, "<=", "assert_non_positive")


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None, data: Any = None, summarize: Any = None,
                message: str | None = None, name: str | None = None) -> Operation:
    """Asserts ``|x - y| <= atol + rtol * |y|`` elementwise (default tolerances: 10 eps)."""
    x = convert_to_tensor(x)
    eps = float(np.finfo(x.dtype.as_numpy_dtype).eps)
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    return _check(name, "assert_near", [x, y],
                  lambda a, b: math_ops.less_equal(math_ops.abs(a - b), atol + rtol * math_ops.abs(b)),
                  lambda a, b: np.abs(a - b) <= atol + rtol * np.abs(b), "x and y not equal to tolerance",
                  data, summarize, message)


def _rank_assert(check: Callable[[int, int], bool], what: str, default: str):
    def assertion(x: Any, rank: Any, data: Any = None, summarize: Any = None, message: str | None = None,
                  name: str | None = None) -> Operation:
        x = convert_to_tensor(x)
        with name_scope(name, default, [x]):
            want = _static(convert_to_tensor(rank))
            if x.shape.rank is not None and want is not None:
                if not check(x.shape.rank, int(want)):
                    raise ValueError(f"{message or ''} Tensor {x.name} must have rank {(what + ' ').lstrip()}{int(want)}. "
                                     f"Received rank {x.shape.rank}, shape {x.shape}".strip())
                return no_op(name="static_checks_determined_all_ok")
            actual = array_ops.rank(x)
            target = convert_to_tensor(rank, dtype=dtypes.int32)
            ok = {"": math_ops.equal, "at least": math_ops.greater_equal}[what](actual, target)
            return Assert(ok, data or [message or "", f"Tensor {x.name} must have rank {what}", target,
                                       "Received rank", actual], summarize=summarize)

    assertion.__name__ = default
    return assertion


assert_rank = _rank_assert(lambda a, b: a == b, "", "assert_rank")
assert_rank_at_least = _rank_assert(lambda a, b: a >= b, "at least", "assert_rank_at_least")


def assert_rank_in(x: Any, ranks: Any, data: Any = None, summarize: Any = None, message: str | None = None,
                   name: str | None = None) -> Operation:
    """Asserts that the rank of ``x`` is one of ``ranks`` (known statically)."""
    x = convert_to_tensor(x)
    allowed = [int(r) for r in ranks]
    if x.shape.rank is None:
        raise ValueError(f"assert_rank_in needs the static rank of {x.name}")
    if x.shape.rank not in allowed:
        raise ValueError(f"{message or ''} Tensor {x.name} must have rank in {allowed}. Received rank "
                         f"{x.shape.rank}, shape {x.shape}".strip())
    return no_op(name=name or "assert_rank_in")


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    """Returns ``tensor`` after checking statically that it is a scalar."""
    t = convert_to_tensor(tensor)
    if t.shape.rank != 0:
        raise ValueError(f"{message or ''} Expected scalar shape for {t.name}, saw shape: {t.shape}.".strip())
    return t


def assert_type(tensor: Any, tf_type: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Checks statically that ``tensor`` has dtype ``tf_type``."""
    t = convert_to_tensor(tensor)
    if t.dtype != dtypes.as_dtype(tf_type):
        raise TypeError(f"{message or ''} {t.name} must be of type {dtypes.as_dtype(tf_type).name}; got "
                        f"{t.dtype.name}".strip())
    return no_op(name=name or "assert_type")


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Checks statically that ``x`` has an integer dtype."""
    t = convert_to_tensor(x)
    if not t.dtype.is_integer:
        raise TypeError(f"{message or ''} Expected {t.name} to be of integer type; found {t.dtype.name}".strip())
    return no_op(name=name or "assert_integer")


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> dtypes.DType:
    """The common floating dtype of ``tensors`` (and ``dtype``); float32 when none is given."""
    found = dtypes.as_dtype(dtype) if dtype is not None else None
    for t in tensors or []:
        t_dtype = convert_to_tensor(t).dtype
        if not t_dtype.is_floating:
            raise ValueError(f"Expected floating point type, got {t_dtype.name}.")
        if found is not None and t_dtype != found:
            raise ValueError(f"Expected {found.name}, got {t_dtype.name}.")
        found = t_dtype
    return found or dtypes.float32


def assert_proper_iterable(values: Any) -> None:
    """Raises TypeError for a tensor, array or string passed where a list is expected."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument 'values' to be a \"proper\" iterable. Found: {type(values)}")


def is_numeric_tensor(tensor: Any) -> bool:
    """True for a Tensor of a numeric dtype."""
    return isinstance(tensor, Tensor) and tensor.dtype.is_numeric


def _monotonic(x: Any, strict: bool, name: str | None) -> Tensor:
    with name_scope(name, "is_strictly_increasing" if strict else "is_non_decreasing", [x]):
        flat = array_ops.reshape(convert_to_tensor(x), [-1])
        diff = flat[1:] - flat[:-1]
        zero = np.zeros([], flat.dtype.as_numpy_dtype)
        return reduction_ops.reduce_all((math_ops.greater if strict else math_ops.greater_equal)(diff, zero))


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """True when the flattened ``x`` never decreases."""
    return _monotonic(x, False, name)


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """True when the flattened ``x`` always increases."""
    return _monotonic(x, True, name)


register_op("CheckNumerics", same_shape, grad=lambda op, g: [check_numerics(
    g, f"Not a number (NaN) or infinity (Inf) values detected in gradient. {op.attrs['message']}")])


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """``tensor`` unchanged; fails at run time (naming ``message``) when it holds NaN or Inf."""
    t = convert_to_tensor(tensor)
    check_dtype("CheckNumerics", t, FLOATS)
    return make_tensor("CheckNumerics", [t], {"message": str(message)}, name=name or "CheckNumerics")


def verify_tensor_all_finite(t: Any, msg: str, name: str | None = None, x: Any = None,
                             message: str | None = None) -> Tensor:
    """``check_numerics`` under TensorFlow 1.x's name."""
    return check_numerics(t if x is None else x, message or msg, name=name)


assert_all_finite = verify_tensor_all_finite


def add_check_numerics_ops() -> Operation:
    """A ``check_numerics`` for every half/float/double output of every op of the default
    graph, chained by control dependencies and grouped into one op that fails the step
    naming the first op (``name:output``) whose value holds a NaN or an Inf
    (``tf.add_check_numerics_ops``)."""
    from flowmesh.core.graph import get_default_graph

    graph = get_default_graph()
    checks: list[Any] = []
    for op in list(graph.get_operations()):
        for output in op.outputs:
            if output.dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
                with graph.control_dependencies(checks):
                    checks = [check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return group(*checks)
