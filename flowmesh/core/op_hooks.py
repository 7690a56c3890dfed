"""Graph-op functions the core calls without importing ``flowmesh.ops`` (which builds on it).

The core creates no op types itself (see ``core/convert.py``); where a core class needs an
op (``-indexed_slices``, the static shape of a ``SparseTensor``'s shape tensor), ``ops``
registers the function here under a name:

==================== ==================================================================
name                 function
==================== ==================================================================
``negative``         ``math_ops.negative`` (``IndexedSlices.__neg__``)
``shape_from_tensor`` ``ops/_builders.shape_from_tensor``: the static shape a 1-D shape
                     tensor describes (``IndexedSlices.shape``, ``SparseTensor.shape``)
==================== ==================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_hooks: dict[str, Callable[..., Any]] = {}


def register(name: str, fn: Callable[..., Any]) -> None:
    """Registers the ops function ``name`` (done by ``flowmesh.ops`` on import)."""
    _hooks[name] = fn


def call(name: str, *args: Any) -> Any:
    """Calls the registered function ``name``.

    Raises:
        RuntimeError: nothing registered it (``flowmesh.ops`` was not imported).
    """
    fn = _hooks.get(name)
    if fn is None:
        raise RuntimeError(f"No op function {name!r} registered with the core: import flowmesh")
    return fn(*args)
