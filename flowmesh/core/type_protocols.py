"""``tf.types.experimental``: the typing names of TensorFlow's core types.

* :class:`TensorProtocol`: any object with ``__tf_tensor__(dtype=None, name=None)``, which
  ``tf.convert_to_tensor`` calls to convert it;
* ``TensorLike``: the ``Union`` of what ``tf.convert_to_tensor`` accepts, for annotations;
* :class:`FunctionType`: an ``inspect.Signature`` describing a TensorFlow callable.
"""

from __future__ import annotations

import abc
import inspect
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from flowmesh.core.tensor import Tensor


@runtime_checkable
class TensorProtocol(Protocol):
    """An object ``tf.convert_to_tensor`` converts by calling its ``__tf_tensor__``."""

    def __tf_tensor__(self, dtype: Any = None, name: str | None = None) -> Tensor:
        """Converts this object to a Tensor of ``dtype`` (None: its natural dtype)."""
        ...


TensorLike = Union[Tensor, TensorProtocol, int, float, bool, str, bytes, complex, tuple, list,
                   np.ndarray, np.generic]
"""Everything ``tf.convert_to_tensor`` can convert to a Tensor (for type annotations)."""


class FunctionType(inspect.Signature, metaclass=abc.ABCMeta):
    """The type of a TensorFlow callable: its parameters (and return annotation) as an
    ``inspect.Signature``, built with :meth:`from_callable`."""

    @classmethod
    def from_callable(cls, obj: Any, *, follow_wrapped: bool = True) -> FunctionType:
        """The ``FunctionType`` of callable ``obj`` (its signature)."""
        return super().from_callable(obj, follow_wrapped=follow_wrapped)
