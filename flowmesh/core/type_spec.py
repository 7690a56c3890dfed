"""``tf.TypeSpec``, ``tf.TensorSpec`` / ``tf.SparseTensorSpec`` (the leaves of ``tf.data``'s
element structures, ``data/structure.py``) and the specs of composite values:
``IndexedSlicesSpec``, ``NoneTensorSpec``, ``OptionalSpec``, ``TensorArraySpec``
(``tf.type_spec_from_value`` is in ``flowmesh/type_specs.py``). Specs are immutable
descriptions: equal when their fields are, compatible when dtypes match and shapes are
compatible."""

from __future__ import annotations

import abc
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.shapes import TensorShape, as_shape


def _shape_repr(shape: TensorShape) -> str:
    return "TensorShape(None)" if shape.rank is None else f"TensorShape({shape.as_list()})"


class TypeSpec(abc.ABC):  # noqa: B024 - subclasses define _fields
    """Base class of value specs (``tf.TypeSpec``)."""

    value_type: Any = None

    def _fields(self) -> tuple[Any, ...]:
        return ()

    def _key(self) -> tuple[Any, ...]:
        return tuple(f.as_list() if isinstance(f, TensorShape) and f.rank is not None else
                     ("?" if isinstance(f, TensorShape) else f) for f in self._fields())

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self._key())))

    def __repr__(self) -> str:
        parts = [_shape_repr(f) if isinstance(f, TensorShape) else
                 (f"tf.{f.name}" if isinstance(f, dtypes.DType) else repr(f)) for f in self._fields()]
        return f"{type(self).__name__}({', '.join(parts)})"

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        """Same kind, same dtypes, compatible shapes."""
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else getattr(spec_or_value, "_type_spec", None)
        if type(other) is not type(self):
            return False
        for a, b in zip(self._fields(), other._fields()):
            if isinstance(a, TensorShape):
                if not a.is_compatible_with(b):
                    return False
            elif isinstance(a, TypeSpec):
                if not a.is_compatible_with(b):
                    return False
            elif a != b:
                return False
        return True

    def most_specific_compatible_type(self, other: TypeSpec) -> TypeSpec:
        """The spec both are compatible with (shapes merged to their common dimensions).

        Raises:
            ValueError: the specs are not compatible.
        """
        if not self.is_compatible_with(other):
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        fields = [_common(a, b) for a, b in zip(self._fields(), other._fields())]
        return type(self)(*fields)

    most_specific_common_supertype = most_specific_compatible_type


def _common(a: Any, b: Any) -> Any:
    return common_shape(a, b) if isinstance(a, TensorShape) else a


def common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both ``a`` and ``b`` are compatible with: the dimensions they
    agree on, ``None`` elsewhere (unknown rank when the ranks differ)."""
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class ShapedTypeSpec(TypeSpec):  # noqa: B024 - subclasses define _fields
    """A spec of a value with one static shape and one dtype, which subclasses keep in
    ``_shape`` and ``_dtype``: the ``shape`` and ``dtype`` properties."""

    _shape: TensorShape
    _dtype: dtypes.DType

    @property
    def shape(self) -> TensorShape:
        """The static shape of the value."""
        return self._shape

    @property
    def dtype(self) -> dtypes.DType:
        """The dtype of the value's elements."""
        return self._dtype


class IndexedSlicesSpec(ShapedTypeSpec):
    """The dense shape and dtypes of an ``IndexedSlices``."""

    def __init__(self, shape: Any = None, dtype: Any = dtypes.float32, indices_dtype: Any = dtypes.int64,
                 dense_shape_dtype: Any = None, indices_shape: Any = None):
        self._shape, self._dtype = as_shape(shape), dtypes.as_dtype(dtype)
        self._indices_dtype = dtypes.as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else dtypes.as_dtype(dense_shape_dtype)
        self._indices_shape = as_shape(indices_shape).with_rank(1) if indices_shape is not None else TensorShape([None])

    def _fields(self) -> tuple[Any, ...]:
        return self._shape, self._dtype, self._indices_dtype, self._dense_shape_dtype, self._indices_shape

    @property
    def value_type(self) -> Any:  # type: ignore[override]
        from flowmesh.core.indexed_slices import IndexedSlices

        return IndexedSlices


class NoneTensorSpec(TypeSpec):
    """The spec of ``None`` where a tensor structure has no value."""

    value_type = type(None)


class OptionalSpec(TypeSpec):
    """The spec of an optional value holding ``element_spec`` (``tf.data`` optionals)."""

    def __init__(self, element_spec: Any):
        self._element_spec = element_spec

    def _fields(self) -> tuple[Any, ...]:
        return (self._element_spec,)

    @property
    def element_spec(self) -> Any:
        return self._element_spec


class TensorArraySpec(TypeSpec):
    """The element shape, dtype and growth policy of a ``TensorArray``."""

    def __init__(self, element_shape: Any = None, dtype: Any = dtypes.float32, dynamic_size: bool = False,
                 infer_shape: bool = True):
        self._element_shape, self._dtype = as_shape(element_shape), dtypes.as_dtype(dtype)
        self._dynamic_size, self._infer_shape = bool(dynamic_size), bool(infer_shape)

    def _fields(self) -> tuple[Any, ...]:
        return self._element_shape, self._dtype, self._dynamic_size, self._infer_shape

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype


# --- the specs of one tensor (tf.data's structure leaves; TypeSpecs by registration) ---------
class TensorSpec:
    """The dtype and static shape of one component (``tf.TensorSpec``)."""

    __slots__ = ("dtype", "shape", "name")

    def __init__(self, shape: Any, dtype: Any = dtypes.float32, name: str | None = None):
        self.shape = as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TensorSpec) and (self.dtype, self.shape.as_list()
                                                  if self.shape.rank is not None else None) == \
            (other.dtype, other.shape.as_list() if other.shape.rank is not None else None)

    def __hash__(self) -> int:
        return hash(self.dtype)

    def is_compatible_with(self, other: Any) -> bool:
        return self.dtype == other.dtype and self.shape.is_compatible_with(other.shape)


class SparseTensorSpec:
    """A ``SparseTensor`` component (``tf.SparseTensorSpec``): the dtype of its values and
    its static dense shape. In the pipeline it is one ``variant`` value
    (``kernels/pipeline/sparse_value.py``)."""

    __slots__ = ("dtype", "shape", "name")
    component_dtype = dtypes.variant

    def __init__(self, shape: Any = None, dtype: Any = dtypes.float32, name: str | None = None):
        self.shape = as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def __repr__(self) -> str:
        return f"SparseTensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, SparseTensorSpec) or self.dtype != other.dtype:
            return False
        dims = [None if spec.shape.rank is None else spec.shape.as_list() for spec in (self, other)]
        return dims[0] == dims[1]

    def __hash__(self) -> int:
        return hash(self.dtype)

    def is_compatible_with(self, other: Any) -> bool:
        return isinstance(other, SparseTensorSpec) and self.dtype == other.dtype and \
            self.shape.is_compatible_with(other.shape)


TypeSpec.register(TensorSpec)
TypeSpec.register(SparseTensorSpec)
