"""Element structures: nested tuples/dicts of component specs, as ``tf.data`` sees them.

``tf.data``'s nesting rules differ from ``tf.nest``'s in one way: a Python **list** is a
single tensor (``from_tensor_slices([1, 2, 3])`` has one component), while tuples,
namedtuples and dicts nest. A structure's leaves are :class:`TensorSpec` objects (one
component each) or :class:`DatasetSpec` objects (a nested dataset, ``window``'s elements).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.shapes import TensorShape
from flowmesh.core.type_spec import SparseTensorSpec, TensorSpec
from flowmesh.ops.ragged_tensor_spec import RaggedTensorSpec


def with_shape(spec: Any, shape: Any) -> Any:
    """A spec of the same kind and dtype as ``spec`` with another static shape (a ragged
    spec gains a ragged dimension per dimension added in front, as batching does)."""
    if is_ragged(spec):
        shape = TensorShape(shape)
        added = 0 if shape.rank is None or spec.shape.rank is None else shape.rank - spec.shape.rank
        return RaggedTensorSpec(shape, spec.dtype, spec.ragged_rank + added, spec.row_splits_dtype)
    return type(spec)(shape, spec.dtype)


def is_sparse(spec: Any) -> bool:
    return isinstance(spec, SparseTensorSpec)


def is_ragged(spec: Any) -> bool:
    return isinstance(spec, RaggedTensorSpec)


def is_variant_leaf(spec: Any) -> bool:
    """A SparseTensor or RaggedTensor leaf: one ``variant`` scalar component."""
    return isinstance(spec, (SparseTensorSpec, RaggedTensorSpec))


class DatasetSpec:
    """A nested dataset whose elements have ``element_spec``."""

    __slots__ = ("element_spec",)
    dtype = dtypes.variant
    shape = TensorShape([])

    def __init__(self, element_spec: Any):
        self.element_spec = element_spec

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec!r})"


def is_nested(value: Any) -> bool:
    """Tuples (namedtuples too, but not ``SparseTensorValue``) and dicts nest; lists do not
    (see the module docstring)."""
    from flowmesh.core.sparse_tensor import SparseTensorValue

    return isinstance(value, (tuple, Mapping)) and not isinstance(value, SparseTensorValue)


def _children(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [value[k] for k in sorted(value)]
    return list(value)


def flatten(structure: Any) -> list[Any]:
    """The leaves of ``structure`` in order (dicts by sorted key)."""
    if is_nested(structure):
        return [leaf for child in _children(structure) for leaf in flatten(child)]
    return [structure]


def pack(structure: Any, flat: Sequence[Any]) -> Any:
    """Rebuilds ``structure`` with the values of ``flat``."""
    values = iter(flat)
    packed = _pack(structure, values)
    return packed


def _pack(structure: Any, values: Any) -> Any:
    if isinstance(structure, Mapping):
        built = {k: _pack(structure[k], values) for k in sorted(structure)}
        return type(structure)(built) if not isinstance(structure, dict) else \
            {k: built[k] for k in structure}
    if isinstance(structure, tuple):
        items = [_pack(child, values) for child in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else tuple(items)
    return next(values)


def map_structure(fn: Callable[[Any], Any], structure: Any) -> Any:
    """``structure`` with ``fn`` applied to every leaf."""
    return pack(structure, [fn(leaf) for leaf in flatten(structure)])


def same_structure(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` nest the same way (same dict keys, tuple lengths)."""
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return isinstance(a, Mapping) and isinstance(b, Mapping) and sorted(a) == sorted(b) and \
            all(same_structure(a[k], b[k]) for k in a)
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and \
            all(same_structure(x, y) for x, y in zip(a, b))
    return True


def flat_types(structure: Any) -> list[dtypes.DType]:
    """The dtypes of the components (``variant`` for a SparseTensor or RaggedTensor)."""
    return [dtypes.variant if is_variant_leaf(spec) else spec.dtype for spec in flatten(structure)]


def flat_shapes(structure: Any) -> list[TensorShape]:
    """The shapes of the components (a SparseTensor's or RaggedTensor's one value is a scalar)."""
    return [TensorShape([]) if is_variant_leaf(spec) else spec.shape for spec in flatten(structure)]


def types_of(structure: Any) -> Any:
    """The nested ``output_types`` of an element spec."""
    return map_structure(lambda s: s.dtype, structure)


def shapes_of(structure: Any) -> Any:
    """The nested ``output_shapes`` of an element spec."""
    return map_structure(lambda s: s.shape, structure)


def classes_of(structure: Any) -> Any:
    """The nested ``output_classes`` (``tf.Tensor`` or ``Dataset``) of an element spec."""
    from flowmesh.core.graph import Tensor

    def cls(spec: Any) -> Any:
        if is_sparse(spec):
            from flowmesh.core.sparse_tensor import SparseTensor

            return SparseTensor
        if is_ragged(spec):
            return spec.value_type
        if isinstance(spec, DatasetSpec):
            from flowmesh.data.dataset import Dataset

            return Dataset
        return Tensor

    return map_structure(cls, structure)


def specs_from(types: Any, shapes: Any = None, classes: Any = None) -> Any:
    """An element spec from nested ``output_types`` and (optionally) ``output_shapes`` and
    ``output_classes`` (``tf.SparseTensor`` leaves become :class:`SparseTensorSpec`).

    Raises:
        ValueError: the structures do not match.
    """
    if shapes is None:
        shapes = map_structure(lambda t: None, types)
    for other, what in ((shapes, "output_shapes"), (classes, "output_classes")):
        if other is not None and is_nested(types) and not same_structure(types, other):
            raise ValueError(f"output_types {types!r} and {what} {other!r} do not have the same structure")
    flat_t = flatten(types)
    flat_s = flatten(shapes) if is_nested(types) else [shapes]
    flat_c = [None] * len(flat_t) if classes is None else (flatten(classes) if is_nested(types) else [classes])
    return pack(types, [SparseTensorSpec(s, t) if getattr(c, "__name__", "") == "SparseTensor" else TensorSpec(s, t)
                        for t, s, c in zip(flat_t, flat_s, flat_c)])


def most_specific_compatible(a: Any, b: Any) -> Any:
    """The element spec compatible with both ``a`` and ``b`` (dims that differ unknown)."""
    from flowmesh.core.function import merge_shapes

    return pack(a, [with_shape(x, merge_shapes(x.shape, y.shape)) for x, y in zip(flatten(a), flatten(b))])


def to_components(structure: Any, values: Any) -> list[Any]:
    """The component tensors of ``values`` (nested like ``structure``): a SparseTensor
    becomes one variant tensor."""
    from flowmesh.ops import ragged_element_ops
    from flowmesh.ops.sparse_element_ops import to_variant

    out = []
    for spec, value in zip(flatten(structure), flatten(values)):
        if is_sparse(spec):
            value = to_variant(value)
        elif is_ragged(spec):
            value = ragged_element_ops.to_variant(value, spec.row_splits_dtype)
        elif isinstance(spec, DatasetSpec) and hasattr(value, "_variant_tensor"):
            value = value._variant_tensor
        out.append(value)
    return out


def from_components(structure: Any, components: Sequence[Any]) -> Any:
    """``structure`` rebuilt from component tensors (variants back to SparseTensors and
    RaggedTensors)."""
    from flowmesh.ops import ragged_element_ops
    from flowmesh.ops.sparse_element_ops import from_variant

    def rebuild(spec: Any, component: Any) -> Any:
        if is_sparse(spec):
            return from_variant(component, spec.dtype, spec.shape)
        if is_ragged(spec):
            return ragged_element_ops.from_variant(component, spec)
        return component

    return pack(structure, [rebuild(spec, c) for spec, c in zip(flatten(structure), components)])
