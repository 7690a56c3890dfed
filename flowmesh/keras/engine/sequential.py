"""``tf.keras.Sequential``: a linear stack of layers.

With an input shape on the first layer (``input_shape=``/``batch_input_shape=`` or an
``InputLayer``) the model is a functional graph from ``<first layer>_input`` as soon as
layers are added; otherwise it is built from the first data given to ``fit``/``predict``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.keras.engine import node as node_lib
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_layer import Input, InputLayer
from flowmesh.keras.engine.training import Model


class Sequential(Model):
    """Layers applied one after the other.

    Example:
        >>> model = tf.keras.Sequential([
        ...     tf.keras.layers.Dense(256, activation="relu", input_shape=(784,)),
        ...     tf.keras.layers.Dense(10, activation="softmax")])
    """

    def __init__(self, layers: list[Layer] | None = None, name: str | None = None):
        super().__init__(name=name)
        self._seq_layers: list[Layer] = []
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self) -> list[Layer]:
        return list(self._seq_layers)

    def _sublayers(self) -> list[Layer]:
        return list(self._seq_layers)

    def add(self, layer: Layer) -> None:
        """Appends ``layer`` (connecting it now when the model has an input shape).

        ``layer`` may be the tensor of ``tf.keras.Input(...)``: the model starts from it.

        Raises:
            TypeError: not a Layer.
            ValueError: the layer does not accept the previous layer's output (names both).
        """
        found = node_lib.history(layer) if isinstance(layer, Tensor) else None
        if found is not None and isinstance(found[0], InputLayer):
            layer = found[0]  # Sequential([tf.keras.Input(shape), ...]), as Keras's guides write it
        if isinstance(layer, InputLayer):
            self._input_tensor = layer._inbound_nodes[0].output_tensors[0]
            self._init_graph_network([self._input_tensor], [self._input_tensor])
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Received: {layer!r}")
        if any(existing.name == layer.name for existing in self._seq_layers):
            raise ValueError(f"All layers added to a Sequential model should have unique names. Name "
                             f"\"{layer.name}\" is already the name of a layer in this model.")
        if self.outputs:
            output = layer(self.outputs[0])
            self._seq_layers.append(layer)
            self._init_graph_network(self.inputs, [output])
        elif not self._seq_layers and layer._batch_input_shape is not None:
            x = Input(batch_shape=layer._batch_input_shape, name=f"{layer.name}_input", dtype=layer._dtype)
            output = layer(x)
            self._seq_layers.append(layer)
            self._init_graph_network([x], [output])
        else:
            self._seq_layers.append(layer)
        self._training_graph = None

    def pop(self) -> None:
        """Removes the last layer (rebuilding the graph network from the remaining ones)."""
        if not self._seq_layers:
            raise TypeError("There are no layers in the model.")
        self._seq_layers.pop()
        if self.inputs:
            self.outputs = [self._seq_layers[-1]._inbound_nodes[-1].output_tensors[0]] if self._seq_layers \
                else list(self.inputs)
            self._init_graph_network(self.inputs, self.outputs)

    def _set_inputs(self, placeholders: list[Any]) -> None:
        x = placeholders[0]
        for layer in self._seq_layers:
            x = layer(x)
        self._init_graph_network(placeholders, [x])

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        x = inputs
        for layer in self._seq_layers:
            kwargs = {"training": training} if training is not None and layer._expects_training else {}
            x = layer(x, **kwargs)
        return x

    def get_config(self) -> dict[str, Any]:
        """tf-keras's layout: an ``InputLayer`` entry (when built), then the layers."""
        from flowmesh.keras.saving.model_config import sequential_config

        return sequential_config(self)

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: dict | None = None) -> Sequential:
        from flowmesh.keras.saving.model_config import sequential_from_config

        return sequential_from_config(config, custom_objects)
