"""``tf.switch_case``: runs the branch whose number is ``branch_index`` (an int32 scalar),
or ``default`` (by default the branch with the highest number) when no branch has that
number. Built on :func:`flowmesh.ops.cond.case`: only the selected branch runs and
gradients flow through it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import name_scope
from flowmesh.ops.cond import case
from flowmesh.ops.math_ops import equal


def _numbered(branch_fns: Any) -> list[tuple[int, Callable[[], Any]]]:
    if isinstance(branch_fns, dict):
        pairs = list(branch_fns.items())
    else:
        pairs = [p if isinstance(p, tuple) else (i, p) for i, p in enumerate(branch_fns)]
    if not pairs:
        raise ValueError("tf.switch_case needs at least one branch in branch_fns")
    for key, fn in pairs:
        if not isinstance(key, int) or not callable(fn):
            raise TypeError("tf.switch_case: branch_fns must map int keys to callables, got "
                            f"({key!r}, {fn!r})")
    keys = sorted(k for k, _ in pairs)
    if keys != list(range(len(keys))):
        raise ValueError(f"tf.switch_case: branch numbers must be 0..{len(keys) - 1} (each once), "
                         f"got {keys}")
    return sorted(pairs)


def switch_case(branch_index: Any, branch_fns: Any, default: Callable[[], Any] | None = None,
                name: str = "switch_case") -> Any:
    """``branch_fns[branch_index]()`` (``tf.switch_case``).

    Args:
        branch_index: an int32 scalar tensor.
        branch_fns: a list of callables (numbered 0..n-1), a list of ``(int, callable)`` pairs
            or a dict ``{int: callable}`` numbered ``0..n-1``; every callable returns the
            same structure.
        default: runs for numbers no branch has (default: the highest-numbered branch).
        name: name scope.

    Raises:
        TypeError: a non-integer index or branch key, or a branch that is not callable.
        ValueError: branch numbers that are not ``0..n-1``.
    """
    pairs = _numbered(branch_fns)
    with name_scope(name, "switch_case", [branch_index]):
        index = convert_to_tensor(branch_index, name="branch_index")
        if index.dtype != dtypes.int32:
            raise TypeError(f"tf.switch_case: branch_index must be int32, got {index.dtype.name}")
        if default is None:
            pairs, default = pairs[:-1], pairs[-1][1]
        preds = [(equal(index, key), fn) for key, fn in pairs]
        if not preds:
            return case([(equal(index, index), default)], exclusive=False)
        return case(preds, default=default, exclusive=False)
