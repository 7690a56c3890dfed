"""``tf.nest``: nested structures (lists, tuples, namedtuples, dicts) of values, with
TensorFlow's rules (dicts in sorted key order). ``expand_composites`` is accepted: a
SparseTensor stays one leaf (flowmesh has no composite tensors to expand)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.ops import _structure


def is_nested(seq: Any) -> bool:
    """Whether ``seq`` is a list, tuple, namedtuple or dict (not a leaf)."""
    return _structure.is_nested(seq)


def flatten(structure: Any, expand_composites: bool = False) -> list[Any]:
    """The leaves of ``structure`` in TensorFlow's order; a leaf gives ``[leaf]``."""
    return _structure.flatten(structure)


def pack_sequence_as(structure: Any, flat_sequence: Sequence[Any], expand_composites: bool = False) -> Any:
    """``flat_sequence`` in the nesting of ``structure``.

    Raises:
        ValueError: a different number of leaves.
    """
    return _structure.pack_sequence_as(structure, flat_sequence)


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    """Raises when the two nest differently (with ``check_types``, a list is not a tuple).

    Raises:
        ValueError: different nesting or numbers of elements.
        TypeError: different sequence types with ``check_types``.
    """
    _structure.assert_same_structure(nest1, nest2, check_types)


def map_structure(func: Callable[..., Any], *structure: Any, check_types: bool = True,
                  expand_composites: bool = False) -> Any:
    """``func`` applied to corresponding leaves, nested as the first structure.

    Raises:
        ValueError, TypeError: the structures nest differently.
    """
    for other in structure[1:]:
        _structure.assert_same_structure(structure[0], other, check_types)
    return _structure.map_structure(func, *structure)
