"""Data types of tensors: :class:`DType` and the ``tf.float32``-style constants.

Pure Python and NumPy; the torch mapping lives in ``flowmesh.kernels.contract.convert``.
``string`` tensors hold ``bytes``; ``resource`` is the internal type of variable handles.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

try:  # ml_dtypes provides a NumPy bfloat16 (TensorFlow uses the same package).
    import ml_dtypes

    _NP_BFLOAT16: Any = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - ml_dtypes is a declared dependency
    _NP_BFLOAT16 = None


def _ml_dtype(name: str) -> Any:
    return getattr(ml_dtypes, name, None) if _NP_BFLOAT16 is not None else None


def _finfo(np_type: Any) -> Any:
    try:
        return np.finfo(np_type)
    except (TypeError, ValueError):
        return ml_dtypes.finfo(np_type)


def _iinfo(np_type: Any) -> Any:
    try:
        return np.iinfo(np_type)
    except (TypeError, ValueError):
        return ml_dtypes.iinfo(np_type)


class DType:
    """A tensor element type, compared by name (``tf.float32 == "float32"`` is True)."""

    __slots__ = ("_name", "_np", "_kind", "_size", "_enum")

    def __init__(self, name: str, np_type: Any, kind: str, size: int, enum: int):
        self._name = name
        self._np = np_type
        self._kind = kind  # f=float, i=signed int, u=unsigned, b=bool, c=complex, s=string, r=other
        self._size = size
        self._enum = enum

    @property
    def name(self) -> str:
        return self._name

    @property
    def as_numpy_dtype(self) -> Any:
        """The NumPy scalar type (``object`` for strings)."""
        return self._np

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        return {"complex64": float32, "complex128": float64}.get(self._name, self)

    @property
    def as_datatype_enum(self) -> int:
        return self._enum

    @property
    def is_floating(self) -> bool:
        return self._kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._kind == "u"

    @property
    def is_bool(self) -> bool:
        return self._kind == "b"

    @property
    def is_complex(self) -> bool:
        return self._kind == "c"

    @property
    def is_quantized(self) -> bool:
        """True for ``qint8 quint8 qint16 quint16 qint32`` (integers with a float range)."""
        return self._kind == "q"

    @property
    def is_numeric(self) -> bool:
        return self._kind in "fiuc"

    @property
    def size(self) -> int:
        return self._size

    @property
    def min(self) -> Any:
        if self.is_floating:
            return float(_finfo(self._np).min)
        if self.is_integer:
            return int(_iinfo(self._np).min)
        raise TypeError(f"Cannot find minimum value of {self}.")

    @property
    def max(self) -> Any:
        if self.is_floating:
            return float(_finfo(self._np).max)
        if self.is_integer:
            return int(_iinfo(self._np).max)
        raise TypeError(f"Cannot find maximum value of {self}.")

    def is_compatible_with(self, other: Any) -> bool:
        return self == as_dtype(other)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self._name == other._name
        try:
            return self._name == as_dtype(other)._name
        except TypeError:
            return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: '{self._name}'>"

    def __reduce__(self):
        return (as_dtype, (self._name,))


float16 = DType("float16", np.float16, "f", 2, 19)
half = float16
bfloat16 = DType("bfloat16", _NP_BFLOAT16, "f", 2, 14)
float32 = DType("float32", np.float32, "f", 4, 1)
float64 = DType("float64", np.float64, "f", 8, 2)
double = float64
int8 = DType("int8", np.int8, "i", 1, 6)
int16 = DType("int16", np.int16, "i", 2, 5)
int32 = DType("int32", np.int32, "i", 4, 3)
int64 = DType("int64", np.int64, "i", 8, 9)
uint8 = DType("uint8", np.uint8, "u", 1, 4)
uint16 = DType("uint16", np.uint16, "u", 2, 17)
uint32 = DType("uint32", np.uint32, "u", 4, 22)
uint64 = DType("uint64", np.uint64, "u", 8, 23)
bool = DType("bool", np.bool_, "b", 1, 10)  # noqa: A001 - TensorFlow's public name
complex64 = DType("complex64", np.complex64, "c", 8, 8)
complex128 = DType("complex128", np.complex128, "c", 16, 18)
string = DType("string", object, "s", 0, 7)
resource = DType("resource", object, "r", 0, 20)
variant = DType("variant", object, "r", 0, 21)
# Quantized integers: stored as the integer of the same width, fetched as TensorFlow's
# structured NumPy dtype (``[("qint8", "i1")]``).
qint8 = DType("qint8", np.dtype([("qint8", np.int8)]), "q", 1, 11)
quint8 = DType("quint8", np.dtype([("quint8", np.uint8)]), "q", 1, 12)
qint32 = DType("qint32", np.dtype([("qint32", np.int32)]), "q", 4, 13)
qint16 = DType("qint16", np.dtype([("qint16", np.int16)]), "q", 2, 15)
quint16 = DType("quint16", np.dtype([("quint16", np.uint16)]), "q", 2, 16)
QUANTIZED_DTYPES = frozenset({qint8, quint8, qint16, quint16, qint32})

# Low-precision dtypes (``tf.dtypes.experimental``), NumPy types from ml_dtypes as in
# TensorFlow. torch holds the float8 ones natively; the others are held widened (int8,
# uint8, float32) with every value exactly representable (``kernels/contract/convert.py``).
float8_e5m2 = DType("float8_e5m2", _ml_dtype("float8_e5m2"), "f", 1, 24)
float8_e4m3fn = DType("float8_e4m3fn", _ml_dtype("float8_e4m3fn"), "f", 1, 25)
float8_e4m3fnuz = DType("float8_e4m3fnuz", _ml_dtype("float8_e4m3fnuz"), "f", 1, 26)
float8_e4m3b11fnuz = DType("float8_e4m3b11fnuz", _ml_dtype("float8_e4m3b11fnuz"), "f", 1, 27)
float8_e5m2fnuz = DType("float8_e5m2fnuz", _ml_dtype("float8_e5m2fnuz"), "f", 1, 28)
int4 = DType("int4", _ml_dtype("int4"), "i", 1, 29)
uint4 = DType("uint4", _ml_dtype("uint4"), "u", 1, 30)
int2 = DType("int2", _ml_dtype("int2"), "i", 1, 31)
uint2 = DType("uint2", _ml_dtype("uint2"), "u", 1, 32)
float4_e2m1fn = DType("float4_e2m1fn", _ml_dtype("float4_e2m1fn"), "f", 1, 33)
NARROW_DTYPES = frozenset({float8_e5m2, float8_e4m3fn, float8_e4m3fnuz, float8_e4m3b11fnuz, float8_e5m2fnuz,
                           int4, uint4, int2, uint2, float4_e2m1fn})

ALL_DTYPES: tuple[DType, ...] = (
    float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
    uint64, bool, complex64, complex128, string, resource, variant, qint8, quint8, qint16, quint16, qint32,
    *sorted(NARROW_DTYPES, key=lambda d: d.as_datatype_enum),
)
_BY_NAME: dict[str, DType] = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"half": float16, "float": float32, "double": float64})
_BY_ENUM: dict[int, DType] = {d.as_datatype_enum: d for d in ALL_DTYPES}
_BY_NP: dict[Any, DType] = {
    np.dtype(d.as_numpy_dtype): d for d in ALL_DTYPES if d.as_numpy_dtype not in (None, object)
}
_PY_TYPES: dict[Any, DType] = {float: float32, builtins.bool: bool}


def as_dtype(type_value: Any) -> DType:
    """Converts a DType, a name (``"float32"``), a NumPy dtype or ``float``/``bool``.

    Raises:
        TypeError: if the value names no known dtype.
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        found = _BY_NAME.get(type_value)
        if found is not None:
            return found
    elif isinstance(type_value, int) and not isinstance(type_value, type):
        found = _BY_ENUM.get(type_value)
        if found is not None:
            return found
    elif type_value in _PY_TYPES:
        return _PY_TYPES[type_value]
    else:
        try:
            np_dtype = np.dtype(type_value)
        except TypeError:
            np_dtype = None
        if np_dtype is not None:
            if np_dtype.kind in "OSU":
                return string
            found = _BY_NP.get(np_dtype)
            if found is not None:
                return found
    raise TypeError(
        f"Cannot convert {type_value!r} to a flowmesh DType; use one of "
        f"{', '.join(sorted(d.name for d in ALL_DTYPES if d.name not in ('resource', 'variant')))}"
    )


def dtype_of_numpy(array: np.ndarray) -> DType:
    """The flowmesh dtype for a NumPy array (object/str/bytes arrays are ``string``)."""
    return as_dtype(array.dtype)
