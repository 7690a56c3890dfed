"""``convert_to_tensor`` and TensorFlow's rules for turning Python values into arrays.

Conversion functions are registered per Python type (Variables, IndexedSlices, ...);
plain Python and NumPy values become ``Const`` ops through a function registered by
``flowmesh.ops.constant`` (the core never creates ops of a particular type itself).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor

ConversionFn = Callable[[Any, "dtypes.DType | None", "str | None"], Tensor]
_CONVERTERS: list[tuple[int, type, ConversionFn]] = []
_constant_fn: ConversionFn | None = None
_autopack_fn: ConversionFn | None = None

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def register_tensor_conversion_function(base_type: type, fn: ConversionFn, priority: int = 100) -> None:
    """Registers ``fn(value, dtype, name) -> Tensor`` for instances of ``base_type``."""
    _CONVERTERS.append((priority, base_type, fn))
    _CONVERTERS.sort(key=lambda item: item[0])


def register_autopack_fn(fn: ConversionFn) -> None:
    """Registers the function that packs lists/tuples containing tensors (``tf.stack``),
    so ``tf.reshape(x, [tf.shape(x)[0], -1])`` works as in TensorFlow."""
    global _autopack_fn
    _autopack_fn = fn


def register_constant_fn(fn: ConversionFn) -> None:
    """Registers the function that turns Python/NumPy values into constant tensors."""
    global _constant_fn
    _constant_fn = fn


def convert_to_tensor(
    value: Any,
    dtype: Any = None,
    name: str | None = None,
    preferred_dtype: Any = None,
    dtype_hint: Any = None,
) -> Tensor:
    """Converts ``value`` (Tensor, Variable, NumPy array, Python scalar or list) to a Tensor.

    Raises:
        TypeError: if the value cannot be converted or its dtype does not match ``dtype``.
    """
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise TypeError(
                f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                f"{value.dtype.name}: {value!r}"
            )
        return value
    if hasattr(type(value), "__tf_tensor__"):  # tf.types.experimental.TensorProtocol
        result = value.__tf_tensor__(dtype, name)
        if not isinstance(result, Tensor):
            raise TypeError(f"{type(value).__name__}.__tf_tensor__ returned {type(result).__name__}, not a Tensor")
        return convert_to_tensor(result, dtype)
    for _, base_type, fn in _CONVERTERS:
        if isinstance(value, base_type):
            result = fn(value, dtype, name)
            if dtype is not None and result.dtype != dtype:
                raise TypeError(
                    f"Tensor conversion requested dtype {dtype.name} for {type(value).__name__} "
                    f"with dtype {result.dtype.name}"
                )
            return result
    if _autopack_fn is not None and isinstance(value, (list, tuple)) and contains_tensor(value):
        return _autopack_fn(value, dtype, name)
    hint = preferred_dtype if preferred_dtype is not None else dtype_hint
    if dtype is None and hint is not None:
        try:
            return _make_constant(value, dtypes.as_dtype(hint), name)
        except (TypeError, ValueError):
            pass
    return _make_constant(value, dtype, name)


def _make_constant(value: Any, dtype: dtypes.DType | None, name: str | None) -> Tensor:
    if _constant_fn is None:  # pragma: no cover - flowmesh.ops registers it at import
        raise RuntimeError("flowmesh.ops.constant is not imported")
    return _constant_fn(value, dtype, name)


def convert_n_to_tensor(values: Any, dtype: Any = None, name: str | None = None) -> list[Tensor]:
    return [convert_to_tensor(v, dtype, name) for v in values]


def is_tensor_like(value: Any) -> bool:
    """True for Tensors and objects with a registered conversion (e.g. Variables)."""
    if isinstance(value, Tensor):
        return True
    return any(isinstance(value, base) for _, base, _ in _CONVERTERS)


def contains_tensor(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(contains_tensor(v) for v in value)
    return is_tensor_like(value)


# --- Python / NumPy -> ndarray --------------------------------------------------------------
def infer_dtype(value: Any) -> dtypes.DType:
    """TensorFlow's inference: int -> int32 (int64 if it does not fit), float -> float32,
    NumPy values keep their dtype, str/bytes -> string."""
    if isinstance(value, np.ndarray):
        return dtypes.dtype_of_numpy(value)
    if isinstance(value, np.generic):
        return dtypes.as_dtype(value.dtype)
    if isinstance(value, bool):
        return dtypes.bool
    if isinstance(value, int):
        return dtypes.int32 if _INT32_MIN <= value <= _INT32_MAX else dtypes.int64
    if isinstance(value, float):
        return dtypes.float32
    if isinstance(value, complex):
        return dtypes.complex128
    if isinstance(value, (str, bytes)):
        return dtypes.string
    if isinstance(value, (list, tuple)):
        if not value:
            return dtypes.float32
        kinds = [infer_dtype(v) for v in value]
        return _combine(kinds, value)
    if hasattr(value, "__array__"):
        return dtypes.dtype_of_numpy(np.asarray(value))
    raise TypeError(
        f"Failed to convert object of type {type(value).__name__} to Tensor. Contents: "
        f"{value!r}. Consider casting elements to a supported type."
    )


def _combine(kinds: list[dtypes.DType], value: Any) -> dtypes.DType:
    if all(k == kinds[0] for k in kinds):
        return kinds[0]
    if dtypes.string in kinds:
        raise TypeError(f"Can't mix strings and numbers in one tensor: {value!r}")
    if any(k.is_complex for k in kinds):
        return dtypes.complex128
    floats = [k for k in kinds if k.is_floating]
    if floats:
        return max(floats, key=lambda k: k.size)
    if dtypes.int64 in kinds:
        return dtypes.int64
    ints = [k for k in kinds if k.is_integer]
    return max(ints, key=lambda k: k.size) if ints else kinds[0]


def to_numpy(value: Any, dtype: dtypes.DType | None = None) -> np.ndarray:
    """Converts a Python/NumPy value to an ndarray of the requested (or inferred) dtype.

    Raises:
        TypeError: when a value cannot be represented in ``dtype`` without loss
            (e.g. 1.5 as int32) or the nesting is ragged.
    """
    target = dtype if dtype is not None else infer_dtype(value)
    if target == dtypes.string:
        return _to_string_array(value)
    if target in (dtypes.resource, dtypes.variant):
        raise TypeError(f"Cannot create a constant of dtype {target.name}")
    try:
        source = np.asarray(value)
    except ValueError as exc:
        raise TypeError(f"Failed to convert {value!r} to a tensor: {exc}") from None
    if source.dtype == object:
        raise TypeError(f"Failed to convert {value!r} to a {target.name} tensor (ragged or mixed).")
    if source.dtype.kind in "SU":
        raise TypeError(f"Expected {target.name}, got {value!r} of type 'str' instead.")
    if target.is_quantized:  # held as the integer of the same width
        source = source.view(source.dtype[0]) if source.dtype.fields else source
        return source.astype(target.as_numpy_dtype[0])
    np_type = target.as_numpy_dtype
    converted = source.astype(np_type)
    if target.is_integer or target.is_bool:
        if source.dtype.kind in "fc" and not np.array_equal(converted, source):
            raise TypeError(
                f"Expected {target.name}, got {value!r} of type '{type(value).__name__}' instead."
            )
        if target.is_integer and source.dtype.kind in "iu" and source.size:
            if source.min() < target.min or source.max() > target.max:
                raise TypeError(f"Value {value!r} is out of range for {target.name}")
    elif target.is_floating and source.dtype.kind == "c":
        raise TypeError(f"Expected {target.name}, got complex value {value!r}")
    return converted


def _to_string_array(value: Any) -> np.ndarray:
    def as_bytes(item: Any) -> bytes:
        if isinstance(item, bytes):
            return item
        if isinstance(item, str):
            return item.encode("utf-8")
        if isinstance(item, np.bytes_):
            return bytes(item)
        if isinstance(item, np.str_):
            return str(item).encode("utf-8")
        raise TypeError(f"Expected string, got {item!r} of type '{type(item).__name__}' instead.")

    array = np.asarray(value, dtype=object)
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = as_bytes(item)
    return out
