"""``save_weights``/``load_weights``: HDF5 in Keras 2's layout, or TensorFlow's format.

HDF5 layout (what TensorFlow's Keras 2 writes, so files interchange with it): the root
(or a model file's ``model_weights`` group) has attributes ``layer_names`` (bytes) and
``backend``/``keras_version``; one group per layer with attribute ``weight_names``
(``dense/kernel:0``...) and one dataset per weight at that path. Layers are matched in
order among those with weights, or by layer name (``by_name=True``). Other paths are
tf-keras's object-graph checkpoints (:mod:`flowmesh.keras.saving.object_checkpoint`),
matched by the model's structure; a checkpoint without an object graph (written by
``tf.train.Saver``) is restored by variable name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.keras import backend

HDF5_SUFFIXES = (".h5", ".hdf5", ".keras")


def _h5py() -> Any:
    try:
        import h5py
    except ImportError as err:  # pragma: no cover - h5py is in the keras/dev extras
        raise ImportError("HDF5 files need h5py: pip install 'flowmesh[keras]' (or h5py)") from err
    return h5py


def is_hdf5(filepath: str, save_format: str | None = None) -> bool:
    if save_format is not None:
        return save_format in ("h5", "hdf5", "keras")
    return str(filepath).endswith(HDF5_SUFFIXES)


def _layer_weights(layer: Any) -> list[Any]:
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def save_weights_to_group(group: Any, layers: list[Any]) -> None:
    group.attrs["layer_names"] = [layer.name.encode("utf8") for layer in layers]
    group.attrs["backend"] = b"tensorflow"
    group.attrs["keras_version"] = b"2.21.0"
    for layer in layers:
        sub = group.create_group(layer.name)
        weights = _layer_weights(layer)
        values = backend.batch_get_value(weights)
        sub.attrs["weight_names"] = [w.name.encode("utf8") for w in weights]
        for weight, value in zip(weights, values):
            dataset = sub.create_dataset(weight.name, value.shape, dtype=value.dtype)
            if value.shape:
                dataset[:] = value
            else:
                dataset[()] = value


def _names(attr: Any) -> list[str]:
    return [n.decode("utf8") if isinstance(n, bytes) else str(n) for n in attr]


def load_weights_from_group(group: Any, layers: list[Any], by_name: bool = False,
                            skip_mismatch: bool = False) -> None:
    """Assigns the group's weights to ``layers``.

    Raises:
        ValueError: a different number of layers with weights, or a shape mismatch (naming
            the layer, the weight and both shapes).
    """
    saved = [n for n in _names(group.attrs["layer_names"]) if len(group[n].attrs.get("weight_names", []))]
    pairs = []
    if by_name:
        ours = {layer.name: layer for layer in layers}
        pairs = [(ours[n], n) for n in saved if n in ours]
    else:
        with_weights = [layer for layer in layers if _layer_weights(layer)]
        if len(with_weights) != len(saved):
            raise ValueError(f"Layer count mismatch when loading weights from file. Model expected "
                             f"{len(with_weights)} layers with weights, found {len(saved)} saved layers "
                             f"({saved}).")
        pairs = list(zip(with_weights, saved))
    assignments = []
    for layer, name in pairs:
        sub = group[name]
        values = [np.asarray(sub[w]) for w in _names(sub.attrs["weight_names"])]
        weights = _layer_weights(layer)
        if len(values) != len(weights):
            if skip_mismatch:
                continue
            raise ValueError(f"Layer {layer.name} expects {len(weights)} weights, but the saved layer {name} "
                             f"has {len(values)}.")
        for weight, value in zip(weights, values):
            if tuple(weight.shape.as_list()) != value.shape:
                if skip_mismatch:
                    break
                raise ValueError(f"Shape mismatch in layer {layer.name} for weight {weight.name}: the model has "
                                 f"{tuple(weight.shape.as_list())}, the file has {value.shape}.")
        else:
            assignments += list(zip(weights, values))
    backend.batch_set_value(assignments)


def _model_layers(model: Any) -> list[Any]:
    return model.layers


def save_weights(model: Any, filepath: str, save_format: str | None = None) -> None:
    """Writes every layer's weights (see the module docstring for the formats)."""
    import os

    if is_hdf5(filepath, save_format):
        directory = os.path.dirname(str(filepath))
        if directory:
            os.makedirs(directory, exist_ok=True)
        with _h5py().File(filepath, "w") as f:
            save_weights_to_group(f, _model_layers(model))
        return
    from flowmesh.keras.saving import object_checkpoint

    object_checkpoint.save(model, str(filepath))


def load_weights(model: Any, filepath: str, by_name: bool = False, skip_mismatch: bool = False) -> None:
    """Reads weights written by :func:`save_weights` (or TensorFlow's Keras, HDF5)."""
    if is_hdf5(filepath):
        with _h5py().File(filepath, "r") as f:
            group = f["model_weights"] if "model_weights" in f and "layer_names" not in f.attrs else f
            load_weights_from_group(group, _model_layers(model), by_name, skip_mismatch)
        return
    from flowmesh.checkpoint.reader import CheckpointReader
    from flowmesh.keras.saving import object_checkpoint

    reader = CheckpointReader(str(filepath))
    if object_checkpoint.has_object_graph(reader):
        object_checkpoint.restore(model, reader, skip_mismatch)
        return
    _checkpoint_saver(model).restore(backend.get_session(), str(filepath))


def _checkpoint_saver(model: Any) -> Any:
    from flowmesh.train.saver import Saver

    cached = getattr(model, "_weights_saver", None)
    if cached is None or cached[0] is not backend.get_session().graph:
        cached = (backend.get_session().graph, Saver(var_list={w.op.name: w for w in model.weights}))
        model._weights_saver = cached
    return cached[1]
