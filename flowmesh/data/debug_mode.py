"""``tf.data.experimental.enable_debug_mode``: pipelines built afterwards run synchronously,
sequentially and deterministically, so a failing element shows up at the element that
caused it and in order.

As in TensorFlow, it affects how pipelines are *built*: call it before defining them. Then
``map`` and ``interleave`` ignore ``num_parallel_calls`` (one element at a time, in
order) and ``prefetch`` adds no stage. Where flowmesh differs: TensorFlow allows it only in
eager mode and also runs the user functions as Python (``py_function``); flowmesh builds
graphs, so its functions stay traced graphs (print with ``tf.print``).
"""

from __future__ import annotations

_STATE = {"enabled": False}


def enable_debug_mode() -> None:
    """Makes the input pipelines defined from now on sequential and deterministic."""
    toggle_debug_mode(True)


def toggle_debug_mode(enabled: bool) -> None:
    """Turns debug mode on or off (TensorFlow's internal switch, used by tests)."""
    _STATE["enabled"] = bool(enabled)


def debug_mode_enabled() -> bool:
    """Whether pipelines being built should be sequential and deterministic."""
    return _STATE["enabled"]
