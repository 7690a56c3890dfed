"""``model.save(path)`` / ``tf.keras.models.load_model(path)``: one HDF5 file in
tf-keras's layout, so files move between flowmesh and TensorFlow's Keras 2 both ways.

Root attributes: ``model_config`` (JSON, ``model_config.model_config``: tf-keras's
Sequential/Functional architecture), ``training_config`` (JSON: ``optimizer_config``,
``loss``, ``metrics``, ``loss_weights``...; when compiled), ``backend``/``keras_version``;
group ``model_weights``: the weights (``weights_io``); group ``optimizer_weights``: the
optimizer's state (``optimizer_weights``), restored when the loaded model trains.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from flowmesh.keras import losses, optimizers
from flowmesh.keras.saving import model_config, optimizer_weights, weights_io


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    return str(value)


def _training_config(model: Any) -> dict[str, Any] | None:
    compiled = model._compiled
    if compiled is None:
        return None
    loss = model.loss
    if isinstance(loss, dict):
        loss = {k: losses.serialize(losses.get(v)) for k, v in loss.items()}
    elif isinstance(loss, (list, tuple)):
        loss = [losses.serialize(losses.get(v)) for v in loss]
    else:
        loss = losses.serialize(losses.get(loss))
    metrics = list(compiled.plain_names)
    weights = compiled.loss_weights
    unique = [m for i, m in enumerate(metrics) if m not in metrics[:i]]
    return {"loss": loss, "metrics": unique,
            "loss_weights": None if all(w == 1.0 for w in weights) else weights,
            "sample_weight_mode": _sample_weight_mode(compiled),
            "weighted_metrics": list(compiled.weighted_names) or None,
            "optimizer_config": optimizers.serialize(compiled.optimizer)}


def _sample_weight_mode(compiled: Any) -> Any:
    """``compile``'s ``sample_weight_mode`` as tf-keras writes it: None, one mode, or a list."""
    modes = list(getattr(compiled, "sample_weight_modes", None) or [None])
    return modes[0] if len(set(modes)) == 1 else modes


def save_model(model: Any, filepath: str, include_optimizer: bool = True) -> None:
    """Writes architecture, weights and compile settings to ``filepath`` (HDF5)."""
    h5py = weights_io._h5py()
    directory = os.path.dirname(str(filepath))
    if directory:
        os.makedirs(directory, exist_ok=True)
    config = model_config.model_config(model)
    with h5py.File(filepath, "w") as f:
        f.attrs["model_config"] = json.dumps(config, default=_json_default).encode("utf8")
        f.attrs["backend"] = b"tensorflow"
        f.attrs["keras_version"] = b"2.21.0"
        training = _training_config(model) if include_optimizer else None
        if training is not None:
            f.attrs["training_config"] = json.dumps(training, default=_json_default).encode("utf8")
        weights_io.save_weights_to_group(f.create_group("model_weights"), weights_io._model_layers(model))
        if training is not None and not optimizer_weights.save(f.create_group("optimizer_weights"),
                                                              model._compiled.optimizer):
            del f["optimizer_weights"]


def load_model(filepath: str, custom_objects: dict | None = None, compile: bool = True) -> Any:  # noqa: A002
    """Rebuilds the model in the default graph, loads its weights and (if saved and
    ``compile``) compiles it again.

    Raises:
        ValueError: the file has no model config (e.g. it was written by ``save_weights``).
    """
    h5py = weights_io._h5py()
    with h5py.File(filepath, "r") as f:
        raw = f.attrs.get("model_config")
        if raw is None:
            raise ValueError(f"No model config found in the file at {filepath}: it holds weights only; build "
                             "the model in code and call model.load_weights().")
        config = json.loads(raw.decode("utf8") if isinstance(raw, bytes) else raw)
        model = model_config.model_from_config(config, custom_objects)
        weights_io.load_weights_from_group(f["model_weights"], weights_io._model_layers(model))
        training = f.attrs.get("training_config")
        state = optimizer_weights.read(f["optimizer_weights"]) if "optimizer_weights" in f else None
    if training is not None and compile:
        training = json.loads(training.decode("utf8") if isinstance(training, bytes) else training)
        loss = training["loss"]
        model.compile(optimizer=_deserialize_optimizer(training["optimizer_config"]),
                      loss=_deserialize_loss(loss, custom_objects), metrics=_metric_names(training.get("metrics")),
                      loss_weights=training.get("loss_weights"),
                      sample_weight_mode=training.get("sample_weight_mode"),
                      weighted_metrics=_metric_names(training.get("weighted_metrics")))
        model.optimizer._pending_weights = state  # assigned once fit builds the slots
        model.optimizer._restore_pending_weights = optimizer_weights.restore
    return model


def _deserialize_optimizer(config: dict[str, Any]) -> Any:
    """A Keras optimizer from flowmesh's or tf-keras's ``optimizer_config`` (a learning-rate
    schedule given as its config is rebuilt too)."""
    body = {k: v for k, v in config.get("config", {}).items() if k not in ("is_legacy_optimizer", "jit_compile")}
    name = config["class_name"].split(">")[-1]
    if isinstance(body.get("learning_rate"), dict):
        from flowmesh.keras.optimizers_schedules import deserialize

        schedule = dict(body["learning_rate"])
        schedule["class_name"] = schedule["class_name"].split(">")[-1]
        body["learning_rate"] = deserialize(schedule)
    return optimizers.deserialize({"class_name": name, "config": body})


def _metric_names(metrics: Any) -> Any:
    """tf-keras writes metric names, per-output lists of them, or serialized metric
    objects; flowmesh compiles with their names."""
    if not metrics:
        return None
    flat = []
    for item in metrics:
        for entry in item if isinstance(item, list) else [item]:
            if isinstance(entry, dict) and entry.get("class_name") not in metrics_classes():
                entry = entry.get("config", {}).get("name") or entry.get("class_name")
            flat.append(entry)
    return flat


def metrics_classes() -> set[str]:
    from flowmesh.keras import metrics

    return set(metrics._CLASSES)


def _deserialize_loss(loss: Any, custom_objects: dict | None) -> Any:
    if isinstance(loss, dict) and "class_name" not in loss:
        return {k: _deserialize_loss(v, custom_objects) for k, v in loss.items()}
    if isinstance(loss, list):
        return [_deserialize_loss(v, custom_objects) for v in loss]
    if isinstance(loss, str) and custom_objects and loss in custom_objects:
        return custom_objects[loss]
    return losses.deserialize(loss)
