"""``tf.cast`` and its helpers (``saturate_cast``, ``to_float`` ...).

TensorFlow's rules: casting to the same dtype returns the input unchanged (no op);
floats cast to integers truncate toward zero; complex to real keeps the real part;
``IndexedSlices`` are cast value-wise. The gradient flows back (cast to the source
dtype) only between floating/complex dtypes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.ops._builders import INTEGERS, make_tensor

INTEGER_TYPES = INTEGERS
_GRADIENT_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                   dtypes.complex64, dtypes.complex128)
_CASTABLE = _GRADIENT_TYPES + INTEGERS + (dtypes.bool,) + tuple(dtypes.NARROW_DTYPES)


def _cast_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["DstT"], inputs[0].shape)]


def _cast_grad(op: Any, g: Tensor) -> list:
    if op.inputs[0].dtype in _GRADIENT_TYPES and g.dtype in _GRADIENT_TYPES:
        return [cast(g, op.inputs[0].dtype)]
    return [None]


register_op("Cast", _cast_shape, grad=_cast_grad)


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Casts ``x`` (a Tensor, Variable, IndexedSlices or Python value) to ``dtype``.

    Args:
        x: the value to cast.
        dtype: the target dtype.
        name: op name.

    Returns:
        ``x`` itself when it already has ``dtype``, else a ``Cast`` op's output (or an
        IndexedSlices with cast values).

    Raises:
        TypeError: casting to or from ``string`` or ``resource`` (use ``tf.strings`` ops).
    """
    target = dtypes.as_dtype(dtype)
    if hasattr(x, "values") and hasattr(x, "indices") and not isinstance(x, Tensor):
        from flowmesh.core.indexed_slices import IndexedSlices

        return IndexedSlices(cast(x.values, target, name), x.indices, x.dense_shape)
    t = convert_to_tensor(x) if isinstance(x, Tensor) or hasattr(x, "_as_graph_element") else \
        convert_to_tensor(x, preferred_dtype=target)
    if t.dtype == target:
        return t
    if t.dtype not in _CASTABLE or target not in _CASTABLE:
        raise TypeError(
            f"Cast from {t.dtype.name} to {target.name} is not supported (op Cast, input "
            f"{t.name}); strings need tf.strings ops such as tf.strings.to_number."
        )
    return make_tensor("Cast", [t], {"SrcT": t.dtype, "DstT": target}, name=name or "Cast")


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Casts ``value`` to ``dtype``, first clamping it to the range ``dtype`` can hold."""
    target = dtypes.as_dtype(dtype)
    with name_scope(name, "saturate_cast", [value]) as scope:
        t = convert_to_tensor(value)
        if t.dtype.is_complex or target.is_complex or target == dtypes.bool:
            return cast(t, target, name=scope)
        if t.dtype.min < target.min:
            low = convert_to_tensor(_representable(target.min, t.dtype), t.dtype)
            t = make_tensor("Maximum", [t, low], name="Maximum")  # math_ops builds on casts
        if t.dtype.max > target.max:
            high = convert_to_tensor(_representable(target.max, t.dtype), t.dtype)
            t = make_tensor("Minimum", [t, high], name="Minimum")
        return cast(t, target, name=scope)


def _representable(bound: Any, dtype: dtypes.DType) -> Any:
    """``bound`` in ``dtype`` without overflow (float32 rounds 2**31-1 up to 2**31)."""
    import numpy as np

    if not dtype.is_floating:
        return bound
    value = np.asarray(bound, dtype=dtype.as_numpy_dtype) if dtype != dtypes.bfloat16 else \
        np.asarray(float(bound), dtype=np.float32)
    if float(value) > float(bound):
        value = np.nextafter(value, np.asarray(0, dtype=value.dtype))
    elif float(value) < float(bound):
        value = np.nextafter(value, np.asarray(0, dtype=value.dtype))
    return value.item()


def to_float(x: Any, name: str = "ToFloat") -> Tensor:
    """``cast(x, float32)`` (deprecated TensorFlow alias)."""
    return cast(x, dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Tensor:
    """``cast(x, float64)`` (deprecated TensorFlow alias)."""
    return cast(x, dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Tensor:
    """``cast(x, int32)`` (deprecated TensorFlow alias)."""
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Tensor:
    """``cast(x, int64)`` (deprecated TensorFlow alias)."""
    return cast(x, dtypes.int64, name=name)


def to_bfloat16(x: Any, name: str = "ToBFloat16") -> Tensor:
    """``cast(x, bfloat16)`` (deprecated TensorFlow alias)."""
    return cast(x, dtypes.bfloat16, name=name)
