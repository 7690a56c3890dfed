"""``tf.experimental.ExtensionType``: user-defined composite values with typed fields.

A subclass lists its fields as annotations (``values: tf.Tensor``, ``name: str``, another
ExtensionType ...). flowmesh gives it, as TensorFlow does: a constructor taking the fields
(or the class's own ``__init__``), conversion and checking of every field
(``extension_type_field.py``), ``__validate__`` after construction, immutability,
``__eq__`` (a bool Tensor when fields are tensors), ``__repr__``, a nested ``Spec`` class
(``cls.Spec``, an ``ExtensionTypeSpec``) and ``_type_spec``. ``tf.nest`` with
``expand_composites=True`` sees its component tensors; ``Session.run`` fetches an
ExtensionType as the same class holding NumPy values in its tensor fields (built without
re-validation; TensorFlow 1.x sessions do not fetch them at all).
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.core.sparse_tensor import SparseTensor, SparseTensorValue
from flowmesh.core.type_spec import SparseTensorSpec, TensorSpec, TypeSpec
from flowmesh.ops import array_ops, math_ops, reduction_ops
from flowmesh.ops.extension_type_field import NO_DEFAULT, Field, check_annotation, convert_value

_IN_CONSTRUCTOR = "_tf_extension_type_in_constructor"


class ExtensionTypeSpec(TypeSpec):
    """The type of an ExtensionType value (``tf.experimental.ExtensionTypeSpec``): the specs
    of its tensor fields and the values of the others."""

    value_type: Any = None

    def __init__(self, **fields: Any):
        self._field_specs = dict(fields)

    def _fields(self) -> tuple[Any, ...]:
        return tuple((name, _freeze(spec)) for name, spec in self._field_specs.items())

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._field_specs.items())
        return f"{type(self).__qualname__}({fields})"

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else getattr(spec_or_value, "_type_spec", None)
        if type(other) is not type(self) or list(other._field_specs) != list(self._field_specs):
            return False
        return all(_compatible(a, other._field_specs[k]) for k, a in self._field_specs.items())

    @classmethod
    def from_value(cls, value: Any) -> ExtensionTypeSpec:
        """The spec of ``value``'s fields."""
        return cls(**{f.name: _spec_of(value.__dict__[f.name]) for f in type(value)._tf_extension_type_fields()})

    def _to_components(self, value: Any) -> list[Any]:
        """The component tensors of ``value``, every composite field expanded."""
        out: list[Any] = []
        for f in type(value)._tf_extension_type_fields():
            _collect(value.__dict__[f.name], out)
        return out

    def _from_components(self, components: Any) -> Any:
        """A value of this spec rebuilt from components (not re-validated)."""
        items = iter(list(components))
        fields = {name: _rebuild(spec, items) for name, spec in self._field_specs.items()}
        return _construct_unchecked(self.value_type, fields)


class ExtensionType:
    """Base class of user-defined composite types (``tf.experimental.ExtensionType``).

    Raises (at class definition): TypeError for an unsupported field annotation.
    """

    _tf_extension_type_field_list: tuple[Field, ...] = ()
    Spec: type = ExtensionTypeSpec

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        cls._tf_extension_type_field_list = _collect_fields(cls)
        user_init = cls.__dict__.get("__init__")
        cls.__init__ = _wrap_init(cls, user_init)  # type: ignore[method-assign]
        spec_base = next((base.Spec for base in cls.__mro__[1:] if "Spec" in base.__dict__
                          and isinstance(base.Spec, type) and issubclass(base.Spec, ExtensionTypeSpec)),
                         ExtensionTypeSpec)
        user_spec = cls.__dict__.get("Spec")
        bases = (user_spec, spec_base) if isinstance(user_spec, type) and user_spec is not spec_base else (spec_base,)
        cls.Spec = type("Spec", bases, {"value_type": cls, "__qualname__": f"{cls.__qualname__}.Spec",
                                         "__module__": cls.__module__})

    def __init__(self, *args: Any, **kwargs: Any):
        raise AssertionError("Cannot create an instance of ExtensionType because ExtensionType is an abstract "
                             "base class; subclass it with annotated fields")

    @classmethod
    def _tf_extension_type_fields(cls) -> tuple[Field, ...]:
        return cls._tf_extension_type_field_list

    def __validate__(self) -> None:
        """Checks after construction (override it; raise to reject a value)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get(_IN_CONSTRUCTOR) and any(f.name == name for f in self._tf_extension_type_fields()):
            self.__dict__[name] = value
            return
        raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom constructor of ExtensionType.")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom constructor of ExtensionType.")

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={self.__dict__.get(f.name)!r}" for f in self._tf_extension_type_fields())
        return f"{type(self).__qualname__}({fields})"

    @property
    def _type_spec(self) -> ExtensionTypeSpec:
        return type(self).Spec.from_value(self)

    def __eq__(self, other: Any) -> Any:
        """False for another type or spec; else a bool Tensor: every component tensor equal
        (shapes included)."""
        if type(self) is not type(other) or self._type_spec != other._type_spec:
            return False
        mine, theirs = self._type_spec._to_components(self), other._type_spec._to_components(other)
        if not mine:
            return True
        conditions = []
        for a, b in zip(mine, theirs):
            same_rank = a.shape.rank is not None and a.shape.rank == b.shape.rank
            if not same_rank:
                return False
            conditions.append(reduction_ops.reduce_all(math_ops.equal(array_ops.shape(a), array_ops.shape(b))))
            conditions.append(reduction_ops.reduce_all(math_ops.equal(a, b)))
        return reduction_ops.reduce_all(array_ops.stack(conditions))

    def __ne__(self, other: Any) -> Any:
        same = self.__eq__(other)
        return math_ops.logical_not(same) if isinstance(same, Tensor) else not same

    __hash__ = None  # type: ignore[assignment]

    # --- Session.run -------------------------------------------------------------------
    def _fetch_components(self) -> tuple[list[Any], Any]:
        spec = self._type_spec
        return spec._to_components(self), lambda *values: spec._from_components(values)


class ExtensionTypeBatchEncoder:
    """Batches ExtensionType specs field by field (``tf.experimental.ExtensionTypeBatchEncoder``):
    each tensor field's spec gains (or loses) a leading batch dimension."""

    def batch(self, spec: ExtensionTypeSpec, batch_size: int | None) -> ExtensionTypeSpec:
        """The spec of a batch of ``batch_size`` values of ``spec``."""
        return type(spec)(**{k: _map_specs(v, lambda s: TensorSpec([batch_size] + _dims(s), s.dtype))
                             for k, v in spec._field_specs.items()})

    def unbatch(self, spec: ExtensionTypeSpec) -> ExtensionTypeSpec:
        """The spec of one value of a batched ``spec``.

        Raises:
            ValueError: a tensor field is a scalar (nothing to unbatch).
        """
        def drop(s: TensorSpec) -> TensorSpec:
            if s.shape.rank == 0:
                raise ValueError(f"Cannot unbatch {spec}: a field is a scalar")
            return TensorSpec(_dims(s)[1:], s.dtype)

        return type(spec)(**{k: _map_specs(v, drop) for k, v in spec._field_specs.items()})

    def encode(self, spec: ExtensionTypeSpec, value: Any, minimum_rank: int = 0) -> list[Any]:
        """``value``'s component tensors."""
        return spec._to_components(value)

    def decode(self, spec: ExtensionTypeSpec, encoded_value: Any) -> Any:
        """The value of ``spec`` with the component tensors ``encoded_value``."""
        return spec._from_components(encoded_value)

    def encoding_specs(self, spec: ExtensionTypeSpec) -> list[Any]:
        """The specs of :meth:`encode`'s tensors."""
        out: list[Any] = []
        for v in spec._field_specs.values():
            _map_specs(v, lambda s: out.append(s) or s)
        return out




def as_dict(value: ExtensionType) -> dict[str, Any]:
    """The fields of ``value`` as a dict (not recursive: nested ExtensionTypes stay values)."""
    return {f.name: getattr(value, f.name) for f in value._tf_extension_type_fields()}


# --- class construction ---------------------------------------------------------------------
def _collect_fields(cls: type) -> tuple[Field, ...]:
    try:
        hints = typing.get_type_hints(cls)
    except NameError as exc:
        raise TypeError(f"{cls.__name__}: cannot resolve a field annotation ({exc}); define the types it "
                        "names at module level") from None
    fields = []
    for name, annotation in hints.items():
        if name.startswith("_") or typing.get_origin(annotation) is typing.ClassVar or name == "Spec":
            continue
        check_annotation(annotation, f"{cls.__name__}.{name}")
        default = NO_DEFAULT
        for klass in cls.__mro__:
            if name in klass.__dict__:
                default = klass.__dict__[name]
                break
        fields.append(Field(name, annotation, default))
    return tuple(fields)


def _wrap_init(cls: type, user_init: Any) -> Any:
    fields = cls._tf_extension_type_field_list  # type: ignore[attr-defined]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        self.__dict__[_IN_CONSTRUCTOR] = True
        try:
            if user_init is not None:
                user_init(self, *args, **kwargs)
            else:
                _assign(self, fields, args, kwargs)
            for f in fields:
                if f.name not in self.__dict__:
                    raise ValueError(f"{cls.__name__}: the constructor did not set field {f.name!r}")
                self.__dict__[f.name] = convert_value(f.annotation, self.__dict__[f.name], f"{cls.__name__}.{f.name}")
        finally:
            del self.__dict__[_IN_CONSTRUCTOR]
        self.__validate__()

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _assign(self: Any, fields: tuple[Field, ...], args: tuple, kwargs: dict) -> None:
    name = type(self).__name__
    if len(args) > len(fields):
        raise TypeError(f"{name}() takes {len(fields)} field arguments ({', '.join(f.name for f in fields)}), "
                        f"got {len(args)}")
    values = dict(zip((f.name for f in fields), args))
    for key, value in kwargs.items():
        if key in values:
            raise TypeError(f"{name}() got multiple values for field {key!r}")
        if not any(f.name == key for f in fields):
            raise TypeError(f"{name}() got an unexpected field {key!r}; its fields: {[f.name for f in fields]}")
        values[key] = value
    for f in fields:
        if f.name not in values:
            if f.default is NO_DEFAULT:
                raise TypeError(f"{name}() missing required field {f.name!r}")
            values[f.name] = f.default
        self.__dict__[f.name] = values[f.name]


def _construct_unchecked(cls: type, fields: dict[str, Any]) -> Any:
    value = object.__new__(cls)
    value.__dict__.update(fields)
    return value


# --- specs of field values ------------------------------------------------------------------
def _spec_of(value: Any) -> Any:
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    if hasattr(value, "_type_spec"):
        return value._type_spec
    if isinstance(value, tuple):
        return tuple(_spec_of(v) for v in value)
    if isinstance(value, collections.abc.Mapping):
        return types.MappingProxyType({k: _spec_of(v) for k, v in value.items()})
    return value


def _freeze(spec: Any) -> Any:
    if isinstance(spec, TensorShape):
        return ("TensorShape", None if spec.rank is None else tuple(spec.as_list()))
    if isinstance(spec, TensorSpec):
        return ("TensorSpec", spec.dtype.name, None if spec.shape.rank is None else tuple(spec.shape.as_list()))
    if isinstance(spec, collections.abc.Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in spec.items()))
    if isinstance(spec, tuple):
        return tuple(_freeze(v) for v in spec)
    return spec


def _compatible(a: Any, b: Any) -> bool:
    if isinstance(a, TensorSpec):
        return isinstance(b, TensorSpec) and a.is_compatible_with(b)
    if isinstance(a, TypeSpec):
        return a.is_compatible_with(b)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_compatible(x, y) for x, y in zip(a, b))
    if isinstance(a, collections.abc.Mapping):
        return isinstance(b, collections.abc.Mapping) and set(a) == set(b) and all(_compatible(a[k], b[k]) for k in a)
    return a == b


def _collect(value: Any, out: list[Any]) -> None:
    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, SparseTensor):
        out.extend([value.indices, value.values, value.dense_shape])
    elif hasattr(value, "_type_spec") and hasattr(value._type_spec, "_to_components"):
        for component in value._type_spec._to_components(value):
            _collect(component, out)
    elif isinstance(value, tuple):
        for v in value:
            _collect(v, out)
    elif isinstance(value, collections.abc.Mapping):
        for k in sorted(value):
            _collect(value[k], out)


def _rebuild(spec: Any, items: Any) -> Any:
    if isinstance(spec, TensorSpec):
        return next(items)
    if isinstance(spec, SparseTensorSpec):
        parts = [next(items) for _ in range(3)]
        return SparseTensor(*parts) if isinstance(parts[1], Tensor) else SparseTensorValue(*parts)
    if isinstance(spec, TypeSpec) and hasattr(spec, "_from_components"):
        count = len(_component_specs(spec))
        return spec._from_components([next(items) for _ in range(count)])
    if isinstance(spec, tuple):
        return tuple(_rebuild(s, items) for s in spec)
    if isinstance(spec, collections.abc.Mapping):
        rebuilt = {k: _rebuild(spec[k], items) for k in sorted(spec)}
        return types.MappingProxyType({k: rebuilt[k] for k in spec})
    return spec


def _component_specs(spec: Any) -> list[Any]:
    """One entry per component tensor of a composite spec."""
    if isinstance(spec, ExtensionTypeSpec):
        out: list[Any] = []
        for v in spec._field_specs.values():
            out.extend(_component_specs(v))
        return out
    if isinstance(spec, TensorSpec):
        return [spec]
    if isinstance(spec, SparseTensorSpec):
        return [spec] * 3
    if isinstance(spec, tuple):
        return [c for s in spec for c in _component_specs(s)]
    if isinstance(spec, collections.abc.Mapping):
        return [c for k in sorted(spec) for c in _component_specs(spec[k])]
    count = getattr(spec, "_component_count", None)
    return [None] * count() if callable(count) else []


def _map_specs(spec: Any, fn: Any) -> Any:
    if isinstance(spec, TensorSpec):
        return fn(spec)
    if isinstance(spec, tuple):
        return tuple(_map_specs(s, fn) for s in spec)
    if isinstance(spec, collections.abc.Mapping):
        return types.MappingProxyType({k: _map_specs(v, fn) for k, v in spec.items()})
    if isinstance(spec, ExtensionTypeSpec):
        return type(spec)(**{k: _map_specs(v, fn) for k, v in spec._field_specs.items()})
    return spec


def _dims(spec: TensorSpec) -> list[Any]:
    if spec.shape.rank is None:
        raise ValueError("Cannot batch a field of unknown rank")
    return spec.shape.as_list()


class BatchableExtensionType(ExtensionType):
    """An ExtensionType whose values can be batched and unbatched
    (``tf.experimental.BatchableExtensionType``) with its ``__batch_encoder__``."""

    __batch_encoder__ = ExtensionTypeBatchEncoder()
