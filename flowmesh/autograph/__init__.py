"""``tf.autograph``: AutoGraph's conversion (``to_graph``, ``to_code``) is not supported;
its logging and tracing helpers work (flowmesh never converts code, so ``trace`` prints at
graph-construction time, as TensorFlow's does while tracing)."""

from __future__ import annotations

import sys
from typing import Any

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "autograph")

_VERBOSITY = [0]



def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """Sets AutoGraph's logging level (kept; flowmesh has no conversion to log)."""
    _VERBOSITY[0] = int(level)


def trace(*args: Any) -> None:
    """Prints ``args`` now (while the graph is built), as AutoGraph's ``trace`` does while
    tracing."""
    print(*args, file=sys.stdout)


__all__ = ["experimental", "set_verbosity", "to_code", "to_graph", "trace"]
