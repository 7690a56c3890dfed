"""``tf.logging``: TensorFlow 1.x's logging functions on the ``flowmesh`` logger.

``tf.logging.set_verbosity(tf.logging.INFO)`` shows flowmesh's own messages (checkpoints
saved, sessions re-created, steps per second) next to the program's ``tf.logging.info``
lines. The first use attaches a stderr handler to the ``flowmesh`` logger unless the
program configured logging itself.
"""

from __future__ import annotations

import logging as _logging
import sys
from typing import Any

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = WARNING = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_counts: dict[tuple[str, int], int] = {}


def get_logger() -> _logging.Logger:
    """The ``flowmesh`` logger, with a stderr handler when nothing handles its records."""
    logger = _logging.getLogger("flowmesh")
    if not logger.handlers and not _logging.getLogger().handlers:
        handler = _logging.StreamHandler(sys.stderr)
        handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
        logger.addHandler(handler)
    return logger


def set_verbosity(level: int) -> None:
    """Shows messages at ``level`` and above (``DEBUG INFO WARN ERROR FATAL``)."""
    get_logger().setLevel(level)


def get_verbosity() -> int:
    return get_logger().getEffectiveLevel()


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().debug(msg, *args, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().info(msg, *args, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().error(msg, *args, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().critical(msg, *args, **kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """TensorFlow's verbose log: ``level`` 1 is DEBUG, higher levels are quieter still."""
    get_logger().log(DEBUG - max(level - 1, 0), msg, *args, **kwargs)


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs the 1st, (n+1)th, (2n+1)th... call from this call site."""
    if _calls_before() % max(n, 1) == 0:
        log(level, msg, *args)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs only the first ``n`` calls from this call site."""
    if _calls_before() < n:
        log(level, msg, *args)


def _calls_before() -> int:
    """How often the caller's caller (file, line) got here before; counts this call."""
    frame = sys._getframe(2)
    site = (frame.f_code.co_filename, frame.f_lineno)
    count = _counts.get(site, 0)
    _counts[site] = count + 1
    return count


def log_if(level: int, msg: Any, condition: bool, *args: Any) -> None:
    """Logs ``msg % args`` at ``level`` when ``condition`` holds."""
    if condition:
        log(level, msg, *args)


def flush() -> None:
    """Flushes the handlers of TensorFlow's logger."""
    for handler in get_logger().handlers:
        handler.flush()


def TaskLevelStatusMessage(msg: Any) -> None:  # noqa: N802 - TensorFlow's name
    """Logs a task-level status message (at ``ERROR``, as TensorFlow does)."""
    error(msg)
