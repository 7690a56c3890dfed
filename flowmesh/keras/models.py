# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.keras.models``: ``Model``, ``Sequential``, ``load_model``, ``save_model``,
``model_from_json``/``model_from_config``, ``clone_model``."""

from __future__ import annotations

from typing import Any

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.keras.engine.training import Model

_fill_namespace(globals(), "keras.models")


def save_model(model: Model, filepath: str, overwrite: bool = True, include_optimizer: bool = True,
               save_format: str | None = None, **kwargs: Any) -> None:
    """``model.save(filepath)``."""
    model.save(filepath, overwrite=overwrite, include_optimizer=include_optimizer, save_format=save_format)


def load_model(filepath: str, custom_objects: dict | None = None, compile: bool = True) -> Model:  # noqa: A002
    """Rebuilds a model saved by ``model.save`` (architecture, weights, compile settings)."""
    from flowmesh.keras.saving import hdf5_format

    return hdf5_format.load_model(filepath, custom_objects, compile)


def model_from_config(config: dict[str, Any], custom_objects: dict | None = None) -> Model:
    from flowmesh.keras.saving.model_config import model_from_config as build

    return build(config, custom_objects)


def model_from_json(json_string: str, custom_objects: dict | None = None) -> Model:
    import json

    return model_from_config(json.loads(json_string), custom_objects)


def model_from_yaml(yaml_string: str, custom_objects: dict | None = None) -> Model:
    """Removed from Keras (as in tf-keras 2.x: YAML loading could run arbitrary code).

    Raises:
        RuntimeError: always, naming the replacement.
    """
    raise RuntimeError("Method `model_from_yaml()` has been removed due to security risk of arbitrary code "
                       "execution. Please use `Model.to_json()` and `model_from_json()` instead.")


def clone_model(model: Model, input_tensors: Any = None) -> Model:
    """A new model with the same architecture and fresh weights."""
    from flowmesh.keras.saving.model_config import model_config

    return model_from_config(model_config(model))


__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_config", "model_from_json",
           "model_from_yaml", "save_model"]
