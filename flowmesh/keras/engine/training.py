"""``tf.keras.Model``: functional (``Model(inputs, outputs)``) or subclassed (``call``),
with ``compile``/``fit``/``evaluate``/``predict`` in graph mode.

The train, test and predict graphs are built once per model (on the first call that
needs them) and every step is one ``Session.run`` of NumPy batches fed to placeholders.
A subclassed model (or a ``Sequential`` without an input shape) gets its input
placeholders from the first data it sees.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor, get_default_graph
from flowmesh.keras import backend
from flowmesh.keras.engine import compile_utils, functional, training_loop
from flowmesh.keras.engine import node as node_lib
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.ops import _structure as nest


class Model(Layer):
    """A trainable group of layers.

    Example:
        >>> inputs = tf.keras.Input((784,))
        >>> h = tf.keras.layers.Dense(256, activation="relu")(inputs)
        >>> model = tf.keras.Model(inputs, tf.keras.layers.Dense(10)(h))
        >>> model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
        >>> model.fit(x, y, batch_size=128, epochs=3)
    """

    def __init__(self, *args: Any, **kwargs: Any):
        inputs = kwargs.pop("inputs", args[0] if len(args) > 0 else None)
        outputs = kwargs.pop("outputs", args[1] if len(args) > 1 else None)
        name = kwargs.pop("name", None)
        super().__init__(name=name, trainable=kwargs.pop("trainable", True), **kwargs)
        self.inputs: list[Any] = []
        self.outputs: list[Any] = []
        self._nodes: list[node_lib.Node] = []
        self._layers: list[Layer] = []
        self._is_graph_network = False
        self._compiled: compile_utils.CompileConfig | None = None
        self._training_graph: Any = None
        self._predict_outputs: Any = None
        self.stop_training = False
        self.history: Any = None
        if inputs is not None and outputs is not None:
            self._init_graph_network(inputs, outputs)

    # --- structure -----------------------------------------------------------------------
    def _init_graph_network(self, inputs: Any, outputs: Any) -> None:
        self._nested_outputs = outputs
        self.inputs = list(nest.flatten(inputs))
        self.outputs = list(nest.flatten(outputs))
        for t in self.inputs + self.outputs:
            if not isinstance(t, Tensor):
                raise ValueError(f"Model inputs and outputs must be tensors from tf.keras.Input and Keras "
                                 f"layers, got {t!r}")
        self._nodes = functional.nodes_between(self.inputs, self.outputs)
        self._layers = functional.layers_of(self._nodes, self.inputs, self.outputs)
        self._is_graph_network = True
        self.built = True

    @property
    def layers(self) -> list[Layer]:
        if self._is_graph_network:
            return list(self._layers)  # a functional model lists its InputLayers first, as Keras does
        return self._sublayers()

    def _sublayers(self) -> list[Layer]:
        if self._is_graph_network:
            return self.layers
        return [layer for layer in super()._sublayers() if layer is not self]

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        """A layer by name or index.

        Raises:
            ValueError: no such layer (the message lists the layer names).
        """
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[layer.name for layer in self.layers]}.")

    def _node_attr(self, attr: str) -> Any:
        """A functional model's ``input``/``output`` (and their shapes) are its own inputs and
        outputs, also before it is called on other tensors (as Keras's)."""
        if self._is_graph_network and self.inputs:
            tensors = self.inputs if attr == "input_tensors" else self.outputs
            return tensors[0] if len(tensors) == 1 else list(tensors)
        return super()._node_attr(attr)

    @property
    def input_names(self) -> list[str]:
        return [node_lib.history(t)[0].name if node_lib.history(t) else t.op.name for t in self.inputs]

    @property
    def output_names(self) -> list[str]:
        names = []
        for t in self.outputs:
            found = node_lib.history(t)
            names.append(found[0].name if found else t.op.name.split("/")[0])
        return names

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        if not self._is_graph_network:
            raise NotImplementedError(f"Model {self.name}: a subclassed Model must implement call()")
        new_outputs = functional.replay(self._nodes, self.inputs, list(nest.flatten(inputs)), self.outputs,
                                        training)
        return nest.pack_sequence_as(self._nested_outputs, new_outputs)

    def build(self, input_shape: Any) -> None:
        """Builds a subclassed model by calling it on placeholders of ``input_shape``."""
        from flowmesh.ops.constant_op import placeholder

        if self._is_graph_network:
            return
        if isinstance(input_shape, (list, tuple)) and input_shape and isinstance(input_shape[0], (list, tuple)):
            xs = [placeholder(dtypes.float32, list(s)) for s in input_shape]
        else:
            xs = [placeholder(dtypes.float32, list(input_shape))]
        self._set_inputs(xs)

    def _maybe_build(self, inputs: Any) -> None:
        self.built = True  # a subclassed model's layers build themselves inside call()

    def _set_inputs(self, placeholders: list[Any]) -> None:
        outputs = self(placeholders[0] if len(placeholders) == 1 else placeholders)
        self.inputs = placeholders
        self.outputs = list(nest.flatten(outputs))
        self.built = True

    def _ensure_inputs(self, xs: list[np.ndarray]) -> None:
        """Creates input placeholders from the first data for models without inputs."""
        if self.inputs:
            return
        from flowmesh.ops.constant_op import placeholder

        placeholders = []
        for x in xs:
            kind = np.asarray(x).dtype
            dtype = dtypes.int32 if np.issubdtype(kind, np.integer) else dtypes.float32
            placeholders.append(placeholder(dtype, [None] + list(np.shape(x)[1:]),
                                            name=backend.unique_object_name("input", zero_based=False)))
        self._set_inputs(placeholders)

    # --- compile -------------------------------------------------------------------------
    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None,
                loss_weights: Any = None, sample_weight_mode: Any = None, weighted_metrics: Any = None,
                target_tensors: Any = None, **kwargs: Any) -> None:
        """Sets the optimizer, loss(es) and metrics. Names are checked now; nothing is added
        to the graph until ``fit``/``evaluate`` need it.

        Raises:
            ValueError: an unknown optimizer/loss/metric name (listing the valid ones) or a
                per-output list/dict that does not match the outputs.
        """
        names = self.output_names if self.outputs else ["output_1"]
        shapes = [t.shape.as_list() for t in self.outputs] if self.outputs else [None]
        self._compiled = compile_utils.resolve(optimizer, loss, metrics, loss_weights, names, shapes,
                                               sample_weight_mode, weighted_metrics)
        from flowmesh.distribute import distribute_lib

        self._distribution = distribute_lib.get_strategy() if distribute_lib.has_strategy() else None
        if self._distribution is not None:
            backend.require_devices(self._distribution.extended.worker_devices)
        self.optimizer = self._compiled.optimizer
        self.loss = loss
        self._training_graph = None

    @property
    def metrics_names(self) -> list[str]:
        return ["loss"] + (self._compiled.metric_names if self._compiled else [])

    def _require_compiled(self, what: str) -> compile_utils.CompileConfig:
        if self._compiled is None:
            raise RuntimeError(f"You must compile your model before {what}. Use `model.compile(optimizer, "
                               "loss)`.")
        return self._compiled

    def _graph_for(self, ys: list[np.ndarray]) -> compile_utils.TrainingGraph:
        config = self._require_compiled("training/testing")
        if self._compiled is not None and config.output_names != self.output_names and len(self.outputs) == 1:
            config.output_names = self.output_names
        shapes = [tuple(np.shape(y)) for y in ys]
        built = self._training_graph
        if built is not None and built.graph is get_default_graph() and \
                [tuple(t.shape.as_list()[1:]) for t in built.targets] == [s[1:] for s in shapes]:
            return built
        training_loop.check_targets(self, config, shapes)
        from flowmesh.keras.engine import distributed_training
        from flowmesh.keras.engine import parameter_server_training as ps_training

        strategy = getattr(self, "_distribution", None)
        if ps_training.is_parameter_server(strategy):
            self._training_graph = ps_training.ParameterServerTrainingGraph(self, config, shapes, strategy)
        elif distributed_training.is_distributed(strategy):
            self._training_graph = distributed_training.DistributedTrainingGraph(self, config, shapes, strategy)
        else:
            self._training_graph = compile_utils.TrainingGraph(self, config, shapes)
        return self._training_graph

    # --- fit / evaluate / predict -------------------------------------------------------
    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
            verbose: int = 1, callbacks: Any = None, validation_split: float = 0.0,
            validation_data: Any = None, shuffle: bool | str = True, class_weight: Any = None,
            sample_weight: Any = None, initial_epoch: int = 0, steps_per_epoch: int | None = None,
            validation_steps: int | None = None, validation_freq: int = 1, **kwargs: Any) -> Any:
        """Trains for ``epochs`` epochs; returns a ``History``.

        Raises:
            RuntimeError: the model is not compiled.
            ValueError: x and y lengths differ, targets do not fit the outputs, unknown
                names, bad ``validation_split``/``class_weight``.
        """
        self._require_compiled("training")
        return training_loop.fit(self, x, y, batch_size, epochs, verbose, callbacks, validation_split,
                                 validation_data, shuffle, class_weight, sample_weight, initial_epoch,
                                 steps_per_epoch, validation_steps, validation_freq)

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None, verbose: int = 1,
                 sample_weight: Any = None, steps: int | None = None, callbacks: Any = None,
                 return_dict: bool = False, **kwargs: Any) -> Any:
        """The loss (and metrics) over the data: a scalar, a list, or a dict."""
        self._require_compiled("evaluating")
        logs = training_loop.evaluate(self, x, y, batch_size, verbose, sample_weight, steps, callbacks)
        if return_dict:
            return logs
        values = [logs[n] for n in self.metrics_names]
        return values[0] if len(values) == 1 else values

    def predict(self, x: Any, batch_size: int | None = None, verbose: int = 0, steps: int | None = None,
                callbacks: Any = None, **kwargs: Any) -> Any:
        """The outputs for ``x``, batch by batch, concatenated (a list for several outputs)."""
        return training_loop.predict(self, x, batch_size, verbose, steps, callbacks)

    def train_on_batch(self, x: Any, y: Any, sample_weight: Any = None, class_weight: Any = None,
                       reset_metrics: bool = True, return_dict: bool = False) -> Any:
        """One training step on one batch; returns the loss (and metrics)."""
        logs = training_loop.run_batch(self, x, y, sample_weight, class_weight, train=True)
        return logs if return_dict else _values(logs, self.metrics_names)

    def test_on_batch(self, x: Any, y: Any, sample_weight: Any = None, reset_metrics: bool = True,
                      return_dict: bool = False) -> Any:
        logs = training_loop.run_batch(self, x, y, sample_weight, None, train=False)
        return logs if return_dict else _values(logs, self.metrics_names)

    def predict_on_batch(self, x: Any) -> Any:
        return training_loop.predict(self, x, None, 0, None, None, one_batch=True)

    # --- inspection ------------------------------------------------------------------------
    def summary(self, line_length: int | None = None, positions: Any = None, print_fn: Any = None) -> None:
        """Prints the layers, their output shapes and parameter counts, as Keras does."""
        from flowmesh.keras.engine.summary import print_summary

        print_summary(self, line_length=line_length, print_fn=print_fn)

    def get_config(self) -> dict[str, Any]:
        from flowmesh.keras.saving.model_config import functional_config

        if not self._is_graph_network:
            raise NotImplementedError(f"Model {self.name} is subclassed: its config is its Python code; use "
                                      "save_weights/load_weights")
        return functional_config(self)

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: dict | None = None) -> Model:
        from flowmesh.keras.saving.model_config import model_from_config

        return model_from_config({"class_name": "Functional", "config": config}, custom_objects)

    def to_json(self, **kwargs: Any) -> str:
        """The architecture as tf-keras's JSON (``tf.keras.models.model_from_json`` reads it,
        here and in TensorFlow's Keras 2); ``kwargs`` go to ``json.dumps``."""
        import json

        from flowmesh.keras.saving.hdf5_format import _json_default
        from flowmesh.keras.saving.model_config import model_config

        config = {**model_config(self), "keras_version": "2.21.0", "backend": "tensorflow"}
        return json.dumps(config, default=_json_default, **kwargs)

    def save_weights(self, filepath: str, overwrite: bool = True, save_format: str | None = None) -> None:
        """Writes the weights to HDF5 (``.h5``/``.keras``/``.hdf5``) or, for any other path,
        a TensorFlow-format checkpoint matched by structure (tf-keras's object graph)."""
        from flowmesh.keras.saving import weights_io

        weights_io.save_weights(self, filepath, save_format)

    def load_weights(self, filepath: str, by_name: bool = False, skip_mismatch: bool = False) -> None:
        """Reads weights written by :meth:`save_weights` (or by tf-keras: HDF5 or TensorFlow
        format), into a model of the same structure whatever its variables are named."""
        from flowmesh.keras.saving import weights_io

        weights_io.load_weights(self, filepath, by_name, skip_mismatch)

    def save(self, filepath: str, overwrite: bool = True, include_optimizer: bool = True,
             save_format: str | None = None, **kwargs: Any) -> None:
        """Saves architecture, weights and compile settings to HDF5 (see ``load_model``)."""
        from flowmesh.keras.saving import hdf5_format

        hdf5_format.save_model(self, filepath, include_optimizer)

    def reset_states(self) -> None:
        """Zeroes the states of every stateful layer (``stateful=True`` RNNs)."""
        for layer in self.layers:
            if getattr(layer, "stateful", False) and hasattr(layer, "reset_states"):
                layer.reset_states()

    def reset_metrics(self) -> None:
        """Metrics are averaged per call of fit/evaluate: nothing persists to reset."""


def _values(logs: dict[str, float], names: list[str]) -> Any:
    values = [logs[n] for n in names]
    return values[0] if len(values) == 1 else values
