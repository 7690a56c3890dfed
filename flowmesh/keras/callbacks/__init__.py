"""``tf.keras.callbacks``."""

from flowmesh.keras.callbacks.base import Callback, CallbackList
from flowmesh.keras.callbacks.history import History, ProgbarLogger

__all__ = ["Callback", "CallbackList", "History", "ProgbarLogger"]
