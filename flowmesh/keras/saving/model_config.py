"""Model architecture as JSON-ready dicts in TensorFlow's Keras 2 layout (what tf-keras
writes to an HDF5 file's ``model_config`` and ``model.to_json()``), read and written.

* A layer is ``{"class_name": ..., "config": layer.get_config()}``.
* ``Sequential``: ``{"name", "layers": [InputLayer, layer, ...]}`` (the ``InputLayer`` entry
  carries ``batch_input_shape`` and ``dtype`` when the model knows its input).
* ``Functional``: ``{"name", "trainable", "layers", "input_layers", "output_layers"}``; each
  layer entry adds ``"name"`` and ``"inbound_nodes"``: one list per call of the layer in
  the model, of ``[layer name, node index, tensor index, call kwargs]`` per input, where
  node index counts the producing layer's calls within the model. ``input_layers`` and
  ``output_layers`` are ``[layer name, node index, tensor index]``.

Classes are found among ``tf.keras.layers``, the models, and ``custom_objects``; keys
tf-keras writes with their default value for features flowmesh does not have (``groups:
1``, ``ragged: false``...) are dropped, any other unknown key is an error naming the layer.
Files written by earlier flowmesh versions (functional ``"calls"``) still load.
"""

from __future__ import annotations

from typing import Any

from flowmesh.keras.engine import node as node_lib

# tf-keras config keys that flowmesh's layers do not take, and the value meaning "unused".
_IGNORED_DEFAULTS: dict[str, Any] = {"groups": 1, "optional": False, "ragged": False, "sparse": False,
                                     "registered_name": None, "module": None}


def _registry(custom_objects: dict | None) -> dict[str, Any]:
    from flowmesh.keras import layers as layers_module
    from flowmesh.keras.engine.sequential import Sequential
    from flowmesh.keras.engine.training import Model

    table = {name: obj for name, obj in vars(layers_module).items() if isinstance(obj, type)}
    table.update({"Sequential": Sequential, "Model": Model, "Functional": Model})
    from flowmesh.keras.utils.generic_utils import get_custom_objects

    table.update({name.split(">")[-1]: obj for name, obj in get_custom_objects().items()})
    table.update(get_custom_objects())
    table.update(custom_objects or {})
    return table


def layer_config(layer: Any) -> dict[str, Any]:
    from flowmesh.keras.engine.training import Model

    if isinstance(layer, Model):
        return model_config(layer)
    config = _with_cell_settings(layer, layer.get_config())
    forward = getattr(layer, "forward_layer", None)
    if forward is not None and "layer" not in config:  # Bidirectional: the wrapped layer, as tf-keras
        inner = layer_config(forward)
        inner["config"] = {k: v for k, v in inner["config"].items() if k != "zero_output_for_mask"}
        inner["config"]["name"] = forward.name[len("forward_"):] if forward.name.startswith("forward_") \
            else forward.name
        config = {**config, "layer": inner, "merge_mode": layer.merge_mode}
    return {"class_name": type(layer).__name__, "config": config}


def _with_cell_settings(layer: Any, config: dict[str, Any]) -> dict[str, Any]:
    """A recurrent layer's config with its cell's effective settings spelled out: its
    defaults are TF 1.x Keras's (``hard_sigmoid``, GRU ``reset_after=False``), tf-keras 2's
    differ, so a file that left them out would mean another model there."""
    from flowmesh.keras import activations, initializers, regularizers

    cell = getattr(layer, "cell", None)
    if cell is None or not hasattr(cell, "units") or not hasattr(cell, "kernel_initializer"):
        return config
    settings: dict[str, Any] = {"activation": activations.serialize(cell.activation), "use_bias": cell.use_bias}
    if hasattr(cell, "recurrent_activation"):
        settings["recurrent_activation"] = activations.serialize(cell.recurrent_activation)
    for key in ("unit_forget_bias", "reset_after"):
        if hasattr(cell, key):
            settings[key] = getattr(cell, key)
    for key in ("kernel", "recurrent", "bias"):
        settings[f"{key}_initializer"] = initializers.serialize(getattr(cell, f"{key}_initializer"))
        settings[f"{key}_regularizer"] = regularizers.serialize(getattr(cell, f"{key}_regularizer", None))
    return {**config, **settings}


def _clean(name: str, config: dict[str, Any]) -> dict[str, Any]:
    """The config without tf-keras keys that only restate an unused feature's default."""
    config = dict(config)
    for key, default in _IGNORED_DEFAULTS.items():
        if key in config and (config[key] == default or key in ("module", "registered_name")):
            del config[key]
    return config


def layer_from_config(config: dict[str, Any], custom_objects: dict | None = None) -> Any:
    """A new layer (or model) from :func:`layer_config`'s dict (or tf-keras's).

    Raises:
        ValueError: an unknown class (pass it in ``custom_objects``), or a config the
            layer cannot take (naming the layer, its class and the reason).
    """
    name = config["class_name"]
    if name.startswith("Custom>"):
        name = name[len("Custom>"):]
    if name in ("Sequential", "Functional", "Model") and name not in (custom_objects or {}):
        return model_from_config({**config, "class_name": name}, custom_objects)
    cls = _registry(custom_objects).get(name)
    if cls is None:
        raise ValueError(f"Unknown layer: {name!r} (layer {config.get('config', {}).get('name')!r}). flowmesh has "
                         "no such built-in layer: pass its class in the `custom_objects` argument, e.g. "
                         f"load_model(path, custom_objects={{{name!r}: {name}}}).")
    body = _clean(name, config.get("config", {}))
    if getattr(cls.from_config, "__func__", None) is _base_from_config():
        for key in ("layer", "backward_layer"):  # a wrapper (Bidirectional) takes layer objects
            if isinstance(body.get(key), dict) and "class_name" in body[key]:
                body[key] = layer_from_config(body[key], custom_objects)
    try:
        return cls.from_config(body)
    except (TypeError, ValueError) as err:
        raise ValueError(f"Cannot rebuild layer {body.get('name')!r} ({name}) from its config: {err}") from err


def _base_from_config() -> Any:
    from flowmesh.keras.engine.base_layer import Layer

    return Layer.from_config.__func__  # type: ignore[attr-defined]


def model_config(model: Any) -> dict[str, Any]:
    from flowmesh.keras.engine.sequential import Sequential

    if isinstance(model, Sequential):
        return {"class_name": "Sequential", "config": sequential_config(model)}
    return {"class_name": "Functional", "config": functional_config(model)}


def sequential_config(model: Any) -> dict[str, Any]:
    """tf-keras's Sequential config: an ``InputLayer`` entry (when built), then the layers."""
    layers = []
    if model.inputs:
        placeholder = model.inputs[0]
        found = node_lib.history(placeholder)
        layers.append({"class_name": "InputLayer", "config": {
            "batch_input_shape": list(placeholder.shape.as_list()), "dtype": placeholder.dtype.name,
            "sparse": False, "ragged": False, "name": found[0].name if found else placeholder.op.name}})
    layers += [layer_config(layer) for layer in model._seq_layers]
    return {"name": model.name, "layers": layers}


def sequential_from_config(config: dict[str, Any], custom_objects: dict | None = None) -> Any:
    from flowmesh.keras.engine.sequential import Sequential

    model = Sequential(name=config.get("name"))
    layers = [layer_from_config(c, custom_objects) for c in config["layers"]]
    if layers and config.get("batch_input_shape") is not None and layers[0]._batch_input_shape is None:
        layers[0]._batch_input_shape = tuple(config["batch_input_shape"])  # flowmesh's earlier layout
    for layer in layers:
        model.add(layer)
    return model


def functional_config(model: Any) -> dict[str, Any]:
    call_number: dict[int, int] = {}
    refs: dict[int, list[Any]] = {}

    def ref(tensor: Any) -> list[Any]:
        if id(tensor) not in refs:
            raise ValueError(f"Model {model.name}: tensor {tensor.name} is not produced inside the model")
        return refs[id(tensor)]

    entries: dict[int, dict[str, Any]] = {}
    for tensor in model.inputs:
        layer = node_lib.history(tensor)[0]
        refs[id(tensor)] = [layer.name, 0, 0]
        entries[id(layer)] = {**layer_config(layer), "name": layer.name, "inbound_nodes": []}
    for node in model._nodes:
        k = call_number.get(id(node.layer), 0)
        call_number[id(node.layer)] = k + 1
        entry = entries.setdefault(id(node.layer), {**layer_config(node.layer), "name": node.layer.name,
                                                     "inbound_nodes": []})
        kwargs = _call_kwargs(node, ref)
        entry["inbound_nodes"].append([ref(t) + [kwargs] for t in node.first_tensors])
        for i, out in enumerate(node.output_tensors):
            refs[id(out)] = [node.layer.name, k, i]
    order = {id(layer): i for i, layer in enumerate(model.layers)}
    layers = [entries[key] for key in sorted(entries, key=lambda key: order.get(key, len(order)))]
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": [ref(t) for t in model.inputs], "output_layers": [ref(t) for t in model.outputs]}


def _call_kwargs(node: Any, ref: Any) -> dict[str, Any]:
    """A call's keyword arguments as tf-keras writes them: positional arguments after the
    first by their parameter names, tensors as ``[layer, node index, tensor index]``,
    other values when JSON can hold them."""
    import inspect

    from flowmesh.core.graph import Tensor

    kwargs = dict(node.call_kwargs)
    if node.call_args:
        names = [p for p in inspect.signature(node.layer.call).parameters][1:]
        kwargs.update(zip(names, node.call_args))
    written = {}
    for key, value in kwargs.items():
        if isinstance(value, Tensor):
            written[key] = ref(value)
        elif isinstance(value, (bool, int, float, str)) or value is None:
            written[key] = value
    return written


def _is_tensor_ref(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 3 and isinstance(value[0], str) and \
        isinstance(value[1], int) and isinstance(value[2], int)


def model_from_config(config: dict[str, Any], custom_objects: dict | None = None) -> Any:
    """A new Sequential or functional model from :func:`model_config`'s dict (or tf-keras's)."""
    if config["class_name"] == "Sequential":
        return sequential_from_config(config["config"], custom_objects)
    body = config["config"]
    layers = {item.get("name", item["config"].get("name")): layer_from_config(item, custom_objects)
              for item in body["layers"]}
    produced: dict[tuple[str, int, int], Any] = {}
    for name, layer in layers.items():
        if type(layer).__name__ == "InputLayer":
            produced[(name, 0, 0)] = layer._inbound_nodes[0].output_tensors[0]
    if "calls" in body:  # flowmesh's earlier layout
        calls = [(c["layer"], [list(r) + [c["kwargs"]] for r in c["inputs"]], c["list_input"]) for c in body["calls"]]
    else:
        calls = [(item.get("name", item["config"].get("name")), list(node), len(node) > 1)
                 for item in body["layers"] for node in _nodes_of(item)]
    _replay_calls(layers, calls, produced)
    inputs = [produced[(r[0], r[1], r[2])] for r in body["input_layers"]]
    outputs = [produced[(r[0], r[1], r[2])] for r in body["output_layers"]]
    from flowmesh.keras.engine.training import Model

    return Model(inputs, outputs if len(outputs) > 1 else outputs[0], name=body["name"])


def _nodes_of(item: dict[str, Any]) -> list[list[Any]]:
    nodes = item.get("inbound_nodes") or []
    for node in nodes:
        if isinstance(node, dict):
            raise ValueError(f"Layer {item.get('name')!r}: inbound nodes in Keras 3's layout ({sorted(node)}) are "
                             "not supported; save the model with tf-keras (Keras 2) or flowmesh.")
    return nodes


def _replay_calls(layers: dict[str, Any], calls: list[tuple[str, list[list[Any]], bool]],
                  produced: dict[tuple[str, int, int], Any]) -> None:
    """Calls each layer on its inputs once they exist (tf-keras lists layers, not calls, in
    order, so a layer's later call may need a layer listed after it)."""
    counts: dict[str, int] = {}
    index_of = {}
    for position, (name, _, _) in enumerate(calls):
        index_of[position] = counts.get(name, 0)
        counts[name] = index_of[position] + 1
    pending = list(range(len(calls)))
    def needed(position: int) -> list[tuple[str, int, int]]:
        refs = [(r[0], r[1], r[2]) for r in calls[position][1]]
        for r in calls[position][1]:
            kwargs = r[3] if len(r) > 3 and isinstance(r[3], dict) else {}
            refs += [tuple(v) for v in kwargs.values() if _is_tensor_ref(v)]
        return refs

    while pending:
        ready = [p for p in pending if all(key in produced for key in needed(p))]
        if not ready:
            name, inputs, _ = calls[pending[0]]
            missing = [list(key) for key in needed(pending[0]) if key not in produced]
            raise ValueError(f"The model config calls layer {name!r} on {missing}, which no layer produces")
        for p in ready:
            name, inputs, as_list = calls[p]
            tensors = [produced[(r[0], r[1], r[2])] for r in inputs]
            kwargs = next((dict(r[3]) for r in inputs if len(r) > 3 and r[3]), {})
            kwargs = {k: produced[tuple(v)] if _is_tensor_ref(v) else v for k, v in kwargs.items()}
            outputs = layers[name](tensors if as_list else tensors[0], **kwargs)
            for i, out in enumerate(outputs if isinstance(outputs, (list, tuple)) else [outputs]):
                produced[(name, index_of[p], i)] = out
            pending.remove(p)
