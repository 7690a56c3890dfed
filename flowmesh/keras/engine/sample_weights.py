"""Sample weights of ``fit``/``evaluate``: ``compile(sample_weight_mode=...)``, the NumPy
weights checked against each output, and the weight placeholder of each output's loss.

As tf-keras in graph mode (``training_v1``): with ``sample_weight_mode=None`` an output's
weights are one per sample (``[batch]``); with ``"temporal"`` they are one per time step
(``[batch, time]``) of an output with a time axis (rank >= 3). The weights multiply the
per-step losses (with a Keras mask, the mask multiplies them too), and the default
``sum_over_batch_size`` reduction divides the sum by the number of loss elements (by the
number of unmasked elements under a mask). ``class_weight`` gives per-sample weights from
the class of each sample, so tf-keras refuses it for sequence targets; so does flowmesh,
with a message that says how to turn the class weights into temporal weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

MODES = (None, "temporal", "samplewise")


def resolve_modes(sample_weight_mode: Any, output_names: list[str]) -> list[str | None]:
    """One mode per output from ``compile``'s ``sample_weight_mode`` (None, a mode, a
    list with one mode per output, or a dict by output name; missing names are None).

    Raises:
        ValueError: an unknown mode (listing the valid ones), a list of the wrong length,
            or a dict key that is not an output name.
    """
    if isinstance(sample_weight_mode, Mapping):
        unknown = sorted(set(sample_weight_mode) - set(output_names))
        if unknown:
            raise ValueError(f"Unknown entries in sample_weight_mode dictionary: {unknown}. Only expected the "
                             f"model's output names: {output_names}")
        modes = [sample_weight_mode.get(name) for name in output_names]
    elif isinstance(sample_weight_mode, (list, tuple)):
        if len(sample_weight_mode) != len(output_names):
            raise ValueError(f"When passing a list as sample_weight_mode, it should have one entry per model "
                             f"output. The model has {len(output_names)} outputs ({output_names}), but you "
                             f"passed sample_weight_mode={sample_weight_mode!r}")
        modes = list(sample_weight_mode)
    else:
        modes = [sample_weight_mode] * len(output_names)
    for mode in modes:
        if mode not in MODES:
            raise ValueError(f"sample_weight_mode should be None or 'temporal' (one per output, or a dict by "
                             f"output name), got {mode!r}")
    return [None if mode == "samplewise" else mode for mode in modes]


def weight_placeholder(mode: str | None, name: str) -> Any:
    """The ``<output>_sample_weights`` placeholder: ``[batch]`` (default ``[1.0]``) or, for
    ``"temporal"``, ``[batch, time]`` (default ``[[1.0]]``)."""
    from flowmesh.core import dtypes
    from flowmesh.ops.constant_op import constant, placeholder_with_default

    if mode == "temporal":
        return placeholder_with_default(constant([[1.0]], dtype=dtypes.float32), [None, None],
                                        name=f"{name}_sample_weights")
    return placeholder_with_default(constant([1.0], dtype=dtypes.float32), [None], name=f"{name}_sample_weights")


def for_output(value: Any, index: int, name: str) -> Any:
    """Output ``index``'s entry of a ``sample_weight``/``class_weight`` argument given as
    one value for every output, a list (one per output) or a dict by output name."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return value[index]
    if isinstance(value, Mapping) and value and all(isinstance(k, str) for k in value):
        return value.get(name)
    return value


def standardize(y: np.ndarray, output_shape: list[Any] | None, sample_weight: Any, class_weight: Any,
                mode: str | None, output_name: str) -> np.ndarray | None:
    """One output's weights as a float32 array (``[batch]``, or ``[batch, time]`` for the
    ``"temporal"`` mode), class weights multiplied in, or None when there are none.

    Raises:
        ValueError: the weights' rank or shape does not fit the mode and the targets, the
            temporal mode on an output without a time axis, or ``class_weight`` for
            sequence targets; each message names the output and says how to fix it.
    """
    rank = len(output_shape) if output_shape is not None else np.ndim(y)
    if mode == "temporal" and rank < 3:
        raise ValueError(f"sample_weight_mode='temporal' weighs the time steps of an output with a time axis "
                         f"([batch, time, ...], rank >= 3), but output '{output_name}' has shape "
                         f"{_shape(output_shape)}. Compile with sample_weight_mode=None and pass one weight "
                         "per sample.")
    weight = None if sample_weight is None else _check_weights(np.asarray(sample_weight), y, mode, output_name)
    if class_weight is None:
        return weight
    if rank >= 3 or np.ndim(y) >= 3:
        raise ValueError(f"`class_weight` is not supported for sequence (3+ dimensional) targets: output "
                         f"'{output_name}' has shape {_shape(output_shape)} and targets of shape "
                         f"{tuple(np.shape(y))} (tf-keras refuses it too). Compile with "
                         "sample_weight_mode='temporal' and pass sample_weight=<[batch, time] array>, e.g. "
                         "np.vectorize(class_weight.get)(class_ids) with class_ids the [batch, time] class "
                         "of every step.")
    from flowmesh.keras.engine.data_adapter import class_weights_to_sample_weights

    per_class = class_weights_to_sample_weights(y, class_weight)
    return per_class if weight is None else weight * per_class


def _check_weights(weight: np.ndarray, y: np.ndarray, mode: str | None, output_name: str) -> np.ndarray:
    if mode == "temporal":
        if weight.ndim != 2:
            raise ValueError(f"Found a sample_weight array with shape {weight.shape} for output "
                             f"'{output_name}'. In order to use timestep-wise sample weighting "
                             "(sample_weight_mode='temporal'), pass a 2D [batch, time] sample_weight array.")
        if tuple(weight.shape) != tuple(np.shape(y)[:2]):
            raise ValueError(f"Found a sample_weight array with shape {weight.shape} for targets of shape "
                             f"{tuple(np.shape(y))} (output '{output_name}'): temporal sample weights must "
                             "have the targets' [batch, time] shape.")
        return weight.astype(np.float32, copy=False)
    if weight.ndim == 2 and weight.shape[1] == 1:
        weight = weight.reshape(len(weight))
    if weight.ndim != 1:
        raise ValueError(f"Found a sample_weight array with shape {weight.shape} for output '{output_name}'. "
                         "In order to use timestep-wise sample weights, compile with "
                         "sample_weight_mode='temporal'; to weigh samples, pass a 1D [batch] array.")
    if len(weight) != len(y):
        raise ValueError(f"Found a sample_weight array with {len(weight)} samples for {len(y)} target samples "
                         f"(output '{output_name}').")
    return weight.astype(np.float32, copy=False)


def _shape(shape: list[Any] | None) -> tuple:
    return tuple(shape) if shape is not None else ("?",)
