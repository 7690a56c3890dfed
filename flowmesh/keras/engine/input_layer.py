"""``tf.keras.Input`` / ``InputLayer``: a placeholder that starts a functional model."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.keras import backend
from flowmesh.keras.engine import node as node_lib
from flowmesh.keras.engine.base_layer import Layer


class InputLayer(Layer):
    """Holds the placeholder ``<name>`` (default ``input_1``, ``input_2``...) of a model input."""

    def __init__(self, input_shape: Any = None, batch_size: int | None = None, dtype: Any = None,
                 input_tensor: Any = None, sparse: bool = False, name: str | None = None,
                 batch_input_shape: Any = None, **kwargs: Any):
        if name is None:
            name = backend.unique_object_name("input", zero_based=False)
        super().__init__(name=name, dtype=dtype or backend.floatx())
        from flowmesh.ops.constant_op import placeholder

        if input_tensor is None:
            if batch_input_shape is None:
                if input_shape is None:
                    raise ValueError("An Input needs a `shape` (or `batch_shape` / `tensor`).")
                batch_input_shape = (batch_size,) + tuple(input_shape)
            input_tensor = placeholder(dtypes.as_dtype(self.dtype), list(batch_input_shape), name=name)
        self._batch_input_shape = tuple(input_tensor.shape.as_list()) if input_tensor.shape.rank is not None \
            else None
        self.built = True
        node_lib.Node(self, [], [input_tensor], {}, None)

    def get_config(self) -> dict[str, Any]:
        return {"batch_input_shape": self._batch_input_shape, "dtype": self.dtype, "name": self.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> InputLayer:
        return cls(**config)


def Input(shape: Any = None, batch_size: int | None = None, name: str | None = None, dtype: Any = None,
          sparse: bool = False, tensor: Any = None, batch_shape: Any = None, **kwargs: Any) -> Any:
    """A symbolic model input: a placeholder of shape ``(batch_size,) + shape``.

    Example:
        >>> x = tf.keras.Input((784,))
        >>> model = tf.keras.Model(x, tf.keras.layers.Dense(10)(x))
    """
    layer = InputLayer(input_shape=shape, batch_size=batch_size, dtype=dtype, input_tensor=tensor,
                       name=name, batch_input_shape=batch_shape)
    return layer._inbound_nodes[0].output_tensors[0]
