"""``tf.train.experimental.PythonState``: Python state saved in checkpoints as a string.

A ``tf.train.Saver`` given a ``PythonState`` in a ``var_list`` dict saves ``serialize()``
under ``<key>_py_state`` (TensorFlow's saveable conversion names it so) and calls
``deserialize(value)`` with the saved bytes after a restore::

    class Counter(tf.train.experimental.PythonState):
        def __init__(self): self.n = 0
        def serialize(self): return str(self.n).encode()
        def deserialize(self, string_value): self.n = int(string_value)

    saver = tf.train.Saver({"w": w, "counter": counter})  # key "counter_py_state"
"""

from __future__ import annotations

import abc
from typing import Any

PYTHON_STATE = "py_state"
"""The attribute name TensorFlow appends to the key (``<key>_py_state``)."""


class PythonState(abc.ABC):
    """A mixin for putting Python state in a checkpoint (``tf.train.experimental.PythonState``).

    Subclasses implement :meth:`serialize` and :meth:`deserialize`.
    """

    @abc.abstractmethod
    def serialize(self) -> Any:
        """Returns the state as a string (``bytes`` or ``str``)."""

    @abc.abstractmethod
    def deserialize(self, string_value: bytes) -> None:
        """Restores the state from the bytes :meth:`serialize` returned."""
