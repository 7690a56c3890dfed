"""``tf.nest``: nested structures (lists, tuples, namedtuples, dicts) of values, with
TensorFlow's rules (dicts in sorted key order). With ``expand_composites=True`` a composite
value whose type spec has components (``RaggedTensor``, ``ExtensionType``) is expanded into
its component tensors and rebuilt from them; a SparseTensor stays one leaf."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.ops import _structure


def _components(value: Any) -> list[Any] | None:
    spec = getattr(value, "_type_spec", None)
    to_components = getattr(spec, "_to_components", None)
    return None if to_components is None else list(to_components(value))


def _expanded(structure: Any) -> Any:
    """``structure`` with every composite leaf replaced by the list of its components."""
    def expand(leaf: Any) -> Any:
        parts = _components(leaf)
        return leaf if parts is None else [_expanded(p) for p in parts]

    return _structure.map_structure(expand, structure)


def _collapse(original: Any, packed: Any) -> Any:
    """Rebuilds the composites of ``original`` from the matching lists in ``packed``."""
    if _components(original) is not None:
        parts = [_collapse(o, p) for o, p in zip(_components(original), packed)]
        return original._type_spec._from_components(parts)
    if not _structure.is_nested(original):
        return packed
    originals, packs = _structure._children(original), _structure._children(packed)
    return _rebuild_container(original, [_collapse(o, p) for o, p in zip(originals, packs)])


def _rebuild_container(original: Any, children: list[Any]) -> Any:
    if isinstance(original, dict):
        keys = _structure._sorted_keys(original)
        values = dict(zip(keys, children))
        return type(original)((k, values[k]) for k in original)
    if isinstance(original, tuple) and hasattr(original, "_fields"):
        return type(original)(*children)
    return type(original)(children)


def is_nested(seq: Any) -> bool:
    """Whether ``seq`` is a list, tuple, namedtuple or dict (not a leaf)."""
    return _structure.is_nested(seq)


def flatten(structure: Any, expand_composites: bool = False) -> list[Any]:
    """The leaves of ``structure`` in TensorFlow's order; a leaf gives ``[leaf]``."""
    return _structure.flatten(_expanded(structure) if expand_composites else structure)


def pack_sequence_as(structure: Any, flat_sequence: Sequence[Any], expand_composites: bool = False) -> Any:
    """``flat_sequence`` in the nesting of ``structure``.

    Raises:
        ValueError: a different number of leaves.
    """
    if not expand_composites:
        return _structure.pack_sequence_as(structure, flat_sequence)
    packed = _structure.pack_sequence_as(_expanded(structure), flat_sequence)
    return _collapse(structure, packed)


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    """Raises when the two nest differently (with ``check_types``, a list is not a tuple).

    Raises:
        ValueError: different nesting or numbers of elements.
        TypeError: different sequence types with ``check_types``.
    """
    if expand_composites:
        nest1, nest2 = _expanded(nest1), _expanded(nest2)
    _structure.assert_same_structure(nest1, nest2, check_types)


def map_structure(func: Callable[..., Any], *structure: Any, check_types: bool = True,
                  expand_composites: bool = False) -> Any:
    """``func`` applied to corresponding leaves, nested as the first structure.

    Raises:
        ValueError, TypeError: the structures nest differently.
    """
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types, expand_composites)
    if not expand_composites:
        return _structure.map_structure(func, *structure)
    flats = [flatten(s, True) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)], True)
