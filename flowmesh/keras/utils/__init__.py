"""``tf.keras.utils``: ``to_categorical``, ``Progbar``."""

from flowmesh.keras.utils.np_utils import to_categorical
from flowmesh.keras.utils.progbar import Progbar

__all__ = ["Progbar", "to_categorical"]
