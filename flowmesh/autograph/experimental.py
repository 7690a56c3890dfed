"""``tf.autograph.experimental``: the decorators and loop options of code written for
AutoGraph; flowmesh runs such code without converting it."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any


class Feature(enum.Enum):
    """AutoGraph's optional conversions (accepted; flowmesh converts nothing)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def do_not_convert(func: Callable[..., Any] | None = None) -> Any:
    """Marks ``func`` as not to be converted by AutoGraph: ``func`` itself (flowmesh never
    converts); usable as ``@do_not_convert`` and ``@do_not_convert()``."""
    if func is None:
        return do_not_convert
    return func


def set_loop_options(parallel_iterations: Any = None, swap_memory: Any = None, maximum_iterations: Any = None,
                     shape_invariants: Any = None) -> None:
    """Options of the loop AutoGraph converts around this call; without a conversion it does
    nothing, as TensorFlow's does outside converted loops."""
