"""Model architecture as JSON-ready dicts (``{"class_name": ..., "config": ...}``).

A layer's config is its ``get_config()``. A functional model's config lists its layers
and, in call order, each layer call (``"calls"``: the layer name and, for each input, the
``[layer name, call number within this model, output index]`` that produced it), plus its
input and output tensors in the same notation. Classes are found among
``tf.keras.layers``, the models, and ``custom_objects``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.keras.engine import node as node_lib


def _registry(custom_objects: dict | None) -> dict[str, Any]:
    from flowmesh.keras import layers as layers_module
    from flowmesh.keras.engine.sequential import Sequential
    from flowmesh.keras.engine.training import Model

    table = {name: obj for name, obj in vars(layers_module).items() if isinstance(obj, type)}
    table.update({"Sequential": Sequential, "Model": Model, "Functional": Model})
    table.update(custom_objects or {})
    return table


def layer_config(layer: Any) -> dict[str, Any]:
    from flowmesh.keras.engine.training import Model

    if isinstance(layer, Model):
        return model_config(layer)
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def layer_from_config(config: dict[str, Any], custom_objects: dict | None = None) -> Any:
    """A new layer (or model) from :func:`layer_config`'s dict.

    Raises:
        ValueError: an unknown class (pass it in ``custom_objects``).
    """
    name = config["class_name"]
    if name in ("Sequential", "Functional", "Model"):
        return model_from_config(config, custom_objects)
    cls = _registry(custom_objects).get(name)
    if cls is None:
        raise ValueError(f"Unknown layer: {name!r}. Please ensure this object is passed to the "
                         "`custom_objects` argument.")
    return cls.from_config(dict(config["config"]))


def model_config(model: Any) -> dict[str, Any]:
    from flowmesh.keras.engine.sequential import Sequential

    if isinstance(model, Sequential):
        return {"class_name": "Sequential", "config": model.get_config()}
    return {"class_name": "Functional", "config": functional_config(model)}


def functional_config(model: Any) -> dict[str, Any]:
    call_number: dict[int, int] = {}
    refs: dict[int, list[Any]] = {}

    def ref(tensor: Any) -> list[Any]:
        if id(tensor) not in refs:
            raise ValueError(f"Model {model.name}: tensor {tensor.name} is not produced inside the model")
        return refs[id(tensor)]

    layers = []
    for tensor in model.inputs:
        layer = node_lib.history(tensor)[0]
        refs[id(tensor)] = [layer.name, 0, 0]
        layers.append({**layer_config(layer), "name": layer.name})
    calls = []
    for node in model._nodes:
        k = call_number.get(id(node.layer), 0)
        call_number[id(node.layer)] = k + 1
        if k == 0:
            layers.append({**layer_config(node.layer), "name": node.layer.name})
        kwargs = {key: value for key, value in node.call_kwargs.items() if isinstance(value, (bool, int, float, str))}
        nested = isinstance(node.structure, (list, tuple))
        calls.append({"layer": node.layer.name, "inputs": [ref(t) for t in node.input_tensors],
                      "list_input": nested, "kwargs": kwargs})
        for i, out in enumerate(node.output_tensors):
            refs[id(out)] = [node.layer.name, k, i]
    return {"name": model.name, "layers": layers, "calls": calls,
            "input_layers": [ref(t) for t in model.inputs], "output_layers": [ref(t) for t in model.outputs]}


def model_from_config(config: dict[str, Any], custom_objects: dict | None = None) -> Any:
    """A new Sequential or functional model from :func:`model_config`'s dict."""
    from flowmesh.keras.engine.sequential import Sequential
    from flowmesh.keras.engine.training import Model

    if config["class_name"] == "Sequential":
        return Sequential.from_config(config["config"], custom_objects)
    body = config["config"]
    layers = {item["name"]: layer_from_config(item, custom_objects) for item in body["layers"]}
    produced: dict[tuple[str, int, int], Any] = {}
    for name, layer in layers.items():
        if type(layer).__name__ == "InputLayer":
            produced[(name, 0, 0)] = layer._inbound_nodes[0].output_tensors[0]
    counts: dict[str, int] = {}
    for call in body["calls"]:
        inputs = [produced[tuple(r)] for r in call["inputs"]]
        layer = layers[call["layer"]]
        outputs = layer(inputs if call["list_input"] else inputs[0], **call["kwargs"])
        k = counts.get(call["layer"], 0)
        counts[call["layer"]] = k + 1
        flat = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        for i, out in enumerate(flat):
            produced[(call["layer"], k, i)] = out
    inputs = [produced[tuple(r)] for r in body["input_layers"]]
    outputs = [produced[tuple(r)] for r in body["output_layers"]]
    return Model(inputs, outputs if len(outputs) > 1 else outputs[0], name=body["name"])
