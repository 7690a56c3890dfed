"""``tf.data.experimental.Optional``: a value that may be absent, as graph tensors (a bool
``has_value`` and the value's components), and ``get_next_as_optional``, an iterator's next
element or nothing at the end of the data instead of ``OutOfRangeError``.

Where flowmesh differs: an optional is not one ``variant`` tensor but the pair above (its
``element_spec`` and ``OptionalSpec`` are TensorFlow's); an empty optional's components are
zeros of the element's shape (unknown dimensions: 0).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies, name_scope
from flowmesh.core.type_spec import OptionalSpec, TensorSpec
from flowmesh.data import structure as st
from flowmesh.ops._builders import make_op


def _zeros(spec: Any) -> Tensor:
    from flowmesh.ops.array_ops import fill

    if not isinstance(spec, TensorSpec):
        raise TypeError(f"Optional.empty: flowmesh's optionals hold tensors, got a component {spec!r}")
    dims = [0 if d is None else d for d in spec.shape.as_list()] if spec.shape.rank is not None else [0]
    zero = b"" if spec.dtype == dtypes.string else (False if spec.dtype == dtypes.bool else 0)
    return fill(dims, convert_to_tensor(zero, dtype=spec.dtype))


class Optional:
    """A value of ``element_spec`` that may be absent (build with :meth:`from_value` or
    :meth:`empty`, or get one from :func:`get_next_as_optional`)."""

    def __init__(self, has_value: Tensor, components: list[Tensor], element_spec: Any):
        self._has_value = has_value
        self._components = list(components)
        self._element_spec = element_spec

    @staticmethod
    def from_value(value: Any) -> Optional:
        """An optional holding ``value`` (a nested structure of tensors)."""
        with name_scope(None, "optional"):
            tensors = st.map_structure(lambda v: v if isinstance(v, Tensor) else convert_to_tensor(v), value)
            spec = st.map_structure(lambda t: TensorSpec(t.shape, t.dtype), tensors)
            return Optional(convert_to_tensor(True), st.flatten(tensors), spec)

    @staticmethod
    def empty(element_spec: Any) -> Optional:
        """An optional with no value, of ``element_spec``."""
        with name_scope(None, "optional_empty"):
            return Optional(convert_to_tensor(False), [_zeros(s) for s in st.flatten(element_spec)], element_spec)

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    def has_value(self, name: str | None = None) -> Tensor:
        """Whether the optional holds a value (bool scalar)."""
        from flowmesh.ops.array_ops import identity

        return identity(self._has_value, name=name or "has_value")

    def get_value(self, name: str | None = None) -> Any:
        """The value; running it on an empty optional raises ``InvalidArgumentError``."""
        from flowmesh.ops.array_ops import identity
        from flowmesh.ops.logging_ops import Assert

        with name_scope(name, "OptionalGetValue"):
            check = Assert(self._has_value, ["The optional does not have a value"])
            with control_dependencies([check]):
                return st.pack(self._element_spec, [identity(c) for c in self._components])

    @property
    def _type_spec(self) -> OptionalSpec:
        return OptionalSpec(self._element_spec)


def get_next_as_optional(iterator: Any) -> Optional:
    """The next element of ``iterator`` as an :class:`Optional`: empty at the end of the
    data (no ``OutOfRangeError``).

    Raises:
        TypeError: ``iterator`` is not a ``tf.data`` iterator, or its elements hold
            SparseTensors.
    """
    spec = getattr(iterator, "element_spec", None)
    resource = getattr(iterator, "_iterator_resource", None)
    if spec is None or resource is None:
        raise TypeError(f"get_next_as_optional takes a tf.data Iterator, got {type(iterator).__name__}")
    if any(not isinstance(s, TensorSpec) for s in st.flatten(spec)):
        raise TypeError(f"get_next_as_optional: flowmesh's optionals hold tensors, got element spec {spec!r}")
    op = make_op("IteratorGetNextAsOptional", [resource],
                 {"output_types": st.flat_types(spec), "output_shapes": st.flat_shapes(spec)},
                 name="IteratorGetNextAsOptional")
    return Optional(op.outputs[0], list(op.outputs[1:]), spec)
