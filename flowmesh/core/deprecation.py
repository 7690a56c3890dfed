"""Deprecation notices and ``tf.experimental.enable_strict_mode``.

As TensorFlow's ``tensorflow/python/util/deprecation.py``: a name decorated with
:func:`deprecated` logs one warning the first time it is called; after
:func:`enable_strict_mode`, that first call logs an error and raises ``RuntimeError``
instead (TensorFlow's ``_log_deprecation``). Every deprecation notice of flowmesh's
TensorFlow API goes through :func:`log_deprecation`, the one place that reads the switch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from flowmesh import tf_logging

_F = TypeVar("_F", bound=Callable[..., Any])

_strict_mode = False
_warned: set[Callable[..., Any]] = set()


def enable_strict_mode() -> None:
    """``tf.experimental.enable_strict_mode``: from now on, calling a deprecated API raises
    ``RuntimeError`` instead of logging a deprecation warning. It cannot be turned off."""
    global _strict_mode
    _strict_mode = True


def strict_mode_enabled() -> bool:
    """Whether :func:`enable_strict_mode` has been called."""
    return _strict_mode


def log_deprecation(msg: str, *args: Any) -> None:
    """Logs a deprecation warning, or in strict mode logs an error and raises.

    Raises:
        RuntimeError: strict mode is on (TensorFlow's message).
    """
    if _strict_mode:
        tf_logging.error(msg, *args)
        raise RuntimeError("This behavior has been deprecated, which raises an error in strict mode.")
    tf_logging.warning(msg, *args)


def deprecated(date: str | None, instructions: str) -> Callable[[_F], _F]:
    """Marks a function deprecated (TensorFlow's ``@deprecated(date, instructions)``): its
    first call goes through :func:`log_deprecation`.

    Args:
        date: when it is removed (``"YYYY-MM-DD"``), or None for "in a future version".
        instructions: what to use instead.
    """

    def decorate(func: _F) -> _F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if wrapper not in _warned:
                _warned.add(wrapper)
                when = f"after {date}" if date else "in a future version"
                log_deprecation("%s (from %s) is deprecated and will be removed %s.\nInstructions for "
                                "updating:\n%s", func.__qualname__, func.__module__, when, instructions)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
