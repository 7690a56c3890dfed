"""``tf.keras.layers.Layer``: the base of every Keras layer (and of ``tf.layers``).

A layer owns weights created in ``build(input_shape)`` by :meth:`Layer.add_weight` and
computes ``call(inputs)``. In graph mode ``layer(x)`` opens a name scope named after the
layer (``dense``, ``dense_1``... counted per graph), builds the layer on its first call
(so weights are ``<scope>/dense/kernel``), runs ``call`` and records a functional
:class:`~flowmesh.keras.engine.node.Node`. ``flowmesh.layers.Layer`` changes only the
naming (variable scopes, ``get_variable``), as TensorFlow's ``tf.layers`` does.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import GraphKeys, Tensor, get_default_graph
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.keras import backend, constraints, initializers, regularizers
from flowmesh.keras.engine import keras_mask
from flowmesh.keras.engine import node as node_lib
from flowmesh.keras.engine.input_spec import InputSpec, check_input
from flowmesh.ops import _structure as nest

_ALLOWED_KWARGS = {"input_shape", "batch_input_shape", "batch_size", "weights", "activity_regularizer",
                   "autocast", "input_dim", "implementation"}


def to_snake_case(name: str) -> str:
    """``Conv2DTranspose`` -> ``conv2d_transpose`` (Keras's layer base names)."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


class Layer:
    """Base class of layers: weights from ``build``, computation in ``call``.

    Args:
        trainable: whether the layer's weights are trained.
        name: the layer's name (default: the snake-cased class name made unique per graph).
        dtype: the dtype of weights and computation (default float32).
        input_shape / batch_input_shape / batch_size: for the first layer of a ``Sequential``.
    """

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 dynamic: bool = False, **kwargs: Any):
        unknown = set(kwargs) - _ALLOWED_KWARGS
        if unknown:
            raise TypeError(f"Keyword argument not understood: {sorted(unknown)} (layer "
                            f"{type(self).__name__}; valid: {sorted(_ALLOWED_KWARGS)})")
        self._trainable = trainable
        self._dtype = dtypes.as_dtype(dtype).name if dtype is not None else None
        self.built = False
        # Layers that override compute_mask support masking (as tf-keras decides).
        self.supports_masking = type(self).compute_mask is not Layer.compute_mask
        self.input_spec: Any = None
        self._trainable_weights: list[Any] = []
        self._non_trainable_weights: list[Any] = []
        self._weight_local_names: dict[int, str] = {}
        self._updates: list[Any] = []
        self._losses: list[Any] = []
        self._callable_losses: list[Any] = []
        self._inbound_nodes: list[node_lib.Node] = []
        self._initial_weights = kwargs.get("weights")
        self._activity_regularizer = regularizers.get(kwargs.get("activity_regularizer"))
        self._init_set_name(name)
        if "input_shape" in kwargs or "batch_input_shape" in kwargs or "input_dim" in kwargs:
            if "batch_input_shape" in kwargs:
                shape = tuple(kwargs["batch_input_shape"])
            else:
                dims = kwargs.get("input_shape") or (kwargs["input_dim"],)
                shape = (kwargs.get("batch_size"),) + tuple(dims)
            self._batch_input_shape: tuple | None = shape
        else:
            self._batch_input_shape = None
        params = inspect.signature(self.call).parameters
        self._expects_training = "training" in params
        self._expects_mask = "mask" in params

    # --- naming ------------------------------------------------------------------------
    def _init_set_name(self, name: str | None) -> None:
        self._name = name or backend.unique_object_name(to_snake_case(type(self).__name__))

    @property
    def name(self) -> str:
        return self._name

    def _name_scope(self) -> str:
        return self._name

    # --- properties --------------------------------------------------------------------
    @property
    def dtype(self) -> str:
        return self._dtype or backend.floatx()

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = bool(value)
        for layer in self._sublayers():
            layer.trainable = value

    def _sublayers(self) -> list[Layer]:
        """Layers this layer holds as attributes (lists too), in assignment order."""
        found: list[Layer] = []
        for value in vars(self).values():
            items = value if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if isinstance(item, Layer) and item is not self and item not in found:
                    found.append(item)
        return found

    @property
    def trainable_weights(self) -> list[Any]:
        if not self.trainable:
            return []
        weights = list(self._trainable_weights)
        for layer in self._sublayers():
            weights += [w for w in layer.trainable_weights if w not in weights]
        return weights

    @property
    def non_trainable_weights(self) -> list[Any]:
        weights = list(self._non_trainable_weights)
        if not self.trainable:
            weights = list(self._trainable_weights) + weights
        for layer in self._sublayers():
            weights += [w for w in layer.non_trainable_weights if w not in weights]
        return weights

    @property
    def weights(self) -> list[Any]:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def updates(self) -> list[Any]:
        updates = list(self._updates)
        for layer in self._sublayers():
            updates += [u for u in layer.updates if u not in updates]
        return updates

    @property
    def losses(self) -> list[Any]:
        losses = list(self._losses)
        for layer in self._sublayers():
            losses += [t for t in layer.losses if t not in losses]
        return losses

    # --- weights -----------------------------------------------------------------------
    def add_weight(self, name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                   regularizer: Any = None, trainable: bool | None = None, constraint: Any = None,
                   partitioner: Any = None, use_resource: Any = None, synchronization: Any = None,
                   aggregation: Any = None, **kwargs: Any) -> Any:
        """Creates a weight of the layer (``<layer scope>/<name>``) and tracks it.

        Args:
            name: the weight's name inside the layer.
            shape: its shape; dtype: default the layer's dtype.
            initializer: an initializer, its name or None (glorot_uniform for floats).
            regularizer: a callable or name; its loss goes to ``layer.losses``.
            trainable: whether it is trained (default True).

        Returns:
            The variable.
        """
        dtype = dtypes.as_dtype(dtype or self.dtype)
        trainable = True if trainable is None else trainable
        initializer = initializers.get(initializer)
        constraint = constraints.get(constraint)
        if initializer is None:
            initializer = self._default_initializer(dtype)
        variable = self._make_weight(name, as_shape(shape or ()), dtype, initializer,
                                     trainable and self.trainable, constraint, partitioner)
        if trainable and self.trainable:
            self._trainable_weights.append(variable)
        else:
            self._non_trainable_weights.append(variable)
        self._weight_local_names[id(variable)] = name  # its name in object-graph checkpoints
        regularizer = regularizers.get(regularizer)
        if regularizer is not None:
            self._add_weight_regularization(name, variable, regularizer)
        return variable

    add_variable = add_weight

    def _default_initializer(self, dtype: dtypes.DType) -> Any:
        return initializers.GlorotUniform() if dtype.is_floating else initializers.Zeros()

    def _make_weight(self, name: str, shape: TensorShape, dtype: dtypes.DType, initializer: Any,
                     trainable: bool, constraint: Any, partitioner: Any) -> Any:
        from flowmesh.ops.variables import Variable

        dims = shape.as_list()
        return Variable(initial_value=lambda: initializer(dims, dtype=dtype), name=name,
                        trainable=trainable, dtype=dtype, constraint=constraint)

    def _add_weight_regularization(self, name: str, variable: Any, regularizer: Any) -> None:
        graph = get_default_graph()
        with graph.name_scope(f"{name}/Regularizer"):
            loss = regularizer(variable)
        if loss is not None:
            self._losses.append(loss)

    def add_update(self, updates: Any, inputs: Any = None) -> None:
        """Registers update ops (e.g. moving averages) that training runs with each step."""
        for update in nest.flatten(updates):
            if callable(update):
                update = update()
            self._updates.append(update)

    def add_loss(self, losses: Any, inputs: Any = None) -> None:
        """Adds loss tensors (or callables returning one) that the model adds to its loss."""
        for loss in nest.flatten(losses):
            if callable(loss):
                loss = loss()
            if loss is not None:
                self._losses.append(loss)

    def get_weights(self) -> list[Any]:
        """The weights' values (NumPy) from the Keras session."""
        return backend.batch_get_value(self.weights)

    def set_weights(self, weights: list[Any]) -> None:
        """Assigns NumPy values to the weights, in the order of :attr:`weights`.

        Raises:
            ValueError: wrong number of arrays or a shape mismatch (naming the weight).
        """
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(
                f"Layer {self.name} expects {len(params)} weights, but the given weights list has "
                f"{len(weights)} arrays."
            )
        backend.batch_set_value(list(zip(params, weights)))

    def count_params(self) -> int:
        total = 0
        for w in self.weights:
            n = 1
            for d in w.shape.as_list():
                n *= int(d)
            total += n
        return total

    # --- building and calling ----------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        """Creates the weights; the base version only marks the layer built."""
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """The layer's computation (override); the base returns ``inputs``."""
        return inputs

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """Builds the layer on first use, runs ``call`` in the layer's name scope and records
        the call for the functional API.

        Raises:
            ValueError: the input is incompatible with the layer (names the layer, the layer
                that produced the input and both shapes).
        """
        from flowmesh.core.convert import convert_to_tensor

        inputs = nest.map_structure(
            lambda x: x if isinstance(x, Tensor) or not _tensor_like(x) else convert_to_tensor(x),
            inputs)
        self._check_inputs(inputs)
        if self._expects_training and kwargs.get("training") is None:
            kwargs.pop("training", None)
        masks, call_kwargs = self._input_masks(inputs, kwargs)
        graph = get_default_graph()
        with graph.name_scope(self._name_scope()):
            if not self.built:
                self._maybe_build(inputs)
            outputs = self.call(inputs, *args, **call_kwargs)
            outputs = _distinct_outputs(inputs, outputs)
            if self._activity_regularizer is not None:
                self._add_activity_losses(outputs)
            self._set_output_masks(inputs, outputs, masks)
        self._record_node(inputs, outputs, kwargs, args)
        return outputs

    apply = __call__

    def _add_activity_losses(self, outputs: Any) -> None:
        """The activity regularizer's value on each output divided by its batch size (so the
        penalty does not grow with the batch, as tf-keras does)."""
        from flowmesh.ops import array_ops, cast_ops

        graph = get_default_graph()
        for out in nest.flatten(outputs):
            with graph.name_scope("ActivityRegularizer"):
                loss = self._activity_regularizer(out)
                batch = cast_ops.cast(array_ops.shape(out)[0], loss.dtype)
                self._losses.append(loss / batch)

    def _input_masks(self, inputs: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The input masks (given as ``mask=`` or carried by the inputs) and the keyword
        arguments for ``call`` (with ``mask=`` added when ``call`` takes it)."""
        if "mask" in kwargs:
            return kwargs["mask"], kwargs
        if not self.supports_masking and not self._expects_mask:
            return None, kwargs
        masks = keras_mask.input_masks(inputs)
        if masks is not None and self._expects_mask:
            return masks, {**kwargs, "mask": masks}
        return masks, kwargs

    def _set_output_masks(self, inputs: Any, outputs: Any, masks: Any) -> None:
        """Attaches ``compute_mask``'s masks to the outputs (layers that support masking;
        outputs that already carry masks, e.g. a model's, keep theirs)."""
        if not self.supports_masking:
            return
        flat = [t for t in nest.flatten(outputs) if isinstance(t, Tensor)]
        if flat and all(keras_mask.get_mask(t) is not None for t in flat):
            return
        keras_mask.attach_output_masks(outputs, self.compute_mask(inputs, masks))

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The output mask: the input mask for layers that support masking, else None.

        Raises:
            TypeError: a mask was given to a layer that does not support masking.
        """
        if not self.supports_masking:
            if any(m is not None for m in nest.flatten(mask)):
                raise TypeError(f"Layer {self.name} does not support masking, but was passed an "
                                f"input_mask: {mask}")
            return None
        return mask

    def _maybe_build(self, inputs: Any) -> None:
        shapes = nest.map_structure(lambda x: x.shape if isinstance(x, Tensor) else None, inputs)
        if not isinstance(inputs, (list, tuple, dict)):
            shapes = inputs.shape
        try:
            self.build(shapes)
        except ValueError as err:
            raise ValueError(f"{err} (while building layer \"{self.name}\" ({type(self).__name__}) "
                             f"on input shape {_fmt(shapes)}{_source(inputs)})") from err
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _check_inputs(self, inputs: Any) -> None:
        if self.input_spec is None:
            return
        specs = nest.flatten(self.input_spec)
        flat = nest.flatten(inputs)
        for i, (spec, x) in enumerate(zip(specs, flat)):
            if spec is None or not isinstance(x, Tensor):
                continue
            dims = x.shape.as_list() if x.shape.rank is not None else None
            check_input(spec, dims, self.name, i, _source(x))

    def _record_node(self, inputs: Any, outputs: Any, kwargs: dict[str, Any], args: tuple = ()) -> None:
        flat_in: list[Tensor] = []
        for x in nest.flatten(inputs) + nest.flatten(list(args)) + nest.flatten(list(kwargs.values())):
            if isinstance(x, Tensor) and all(x is not seen for seen in flat_in):
                flat_in.append(x)
        flat_out = [x for x in nest.flatten(outputs) if isinstance(x, Tensor)]
        if flat_in and flat_out:
            node_lib.Node(self, flat_in, flat_out, dict(kwargs), inputs, args)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The output shape for ``input_shape``, found by calling the layer on placeholders
        in a scratch graph (the weights built there are thrown away)."""
        from flowmesh.core.graph import Graph
        from flowmesh.ops.constant_op import placeholder

        with Graph().as_default():
            probe = type(self).from_config(self.get_config())
            if isinstance(input_shape, list) and input_shape and \
                    isinstance(input_shape[0], (list, tuple, TensorShape)):
                x: Any = [placeholder(self.dtype, as_shape(s)) for s in input_shape]
            else:
                x = placeholder(self.dtype, as_shape(input_shape))
            return nest.map_structure(lambda t: t.shape, probe(x))

    # --- functional bookkeeping --------------------------------------------------------
    def _node_attr(self, attr: str) -> Any:
        if not self._inbound_nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no input to return.")
        values = getattr(self._inbound_nodes[0], attr)
        return values[0] if len(values) == 1 else values

    @property
    def input(self) -> Any:
        return self._node_attr("input_tensors")

    @property
    def output(self) -> Any:
        return self._node_attr("output_tensors")

    @property
    def input_shape(self) -> Any:
        return nest.map_structure(lambda t: tuple(t.shape.as_list()), self.input)

    @property
    def output_shape(self) -> Any:
        return nest.map_structure(lambda t: tuple(t.shape.as_list()), self.output)

    # --- config ------------------------------------------------------------------------
    def get_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def _distinct_outputs(inputs: Any, outputs: Any) -> Any:
    """Outputs that are one of the inputs (an identity layer) become ``tf.identity`` copies,
    as in Keras: each tensor has one producing layer call in the functional graph."""
    from flowmesh.ops import array_ops

    seen = {id(t) for t in nest.flatten(inputs) if isinstance(t, Tensor)}
    if not any(id(t) in seen for t in nest.flatten(outputs)):
        return outputs
    return nest.map_structure(lambda t: array_ops.identity(t) if id(t) in seen else t, outputs)


def _tensor_like(x: Any) -> bool:
    import numpy as np

    return isinstance(x, (np.ndarray, float, int)) or hasattr(x, "_as_graph_element") or \
        type(x).__name__ in ("Variable", "ResourceVariable")


def _fmt(shapes: Any) -> str:
    if isinstance(shapes, TensorShape):
        return str(tuple(shapes.as_list())) if shapes.rank is not None else "<unknown>"
    return str(nest.map_structure(lambda s: tuple(s.as_list()) if s is not None and s.rank is not None else s,
                                  shapes))


def _source(inputs: Any) -> str:
    """`` (output of layer "dense")`` for tensors a Keras layer produced, else ""."""
    names = []
    for x in nest.flatten(inputs):
        found = node_lib.history(x) if isinstance(x, Tensor) else None
        if found is not None and type(found[0]).__name__ != "InputLayer":
            names.append(f'"{found[0].name}" ({type(found[0]).__name__})')
    return f", the output of layer {', '.join(names)}" if names else ""


def collect_updates(layer: Layer) -> None:
    """Adds the layer's update ops to ``GraphKeys.UPDATE_OPS`` (what ``tf.layers`` does)."""
    graph = get_default_graph()
    existing = graph.get_collection(GraphKeys.UPDATE_OPS)
    for update in layer.updates:
        if update not in existing:
            graph.add_to_collection(GraphKeys.UPDATE_OPS, update)


__all__ = ["InputSpec", "Layer", "collect_updates", "to_snake_case"]
