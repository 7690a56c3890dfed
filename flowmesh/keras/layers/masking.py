"""``tf.keras.layers.Masking`` and the mask rules of layers that combine or reshape masked
inputs (merge layers, ``TimeDistributed``), as tf-keras defines them."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops.reduction_ops import reduce_all, reduce_any


class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value``.

    ``[batch, time, features]`` -> the same values with masked steps zeroed, and the mask
    ``any(inputs != mask_value, axis=-1)`` (``[batch, time]``) attached for the layers
    downstream (recurrent layers skip masked steps).

    Args:
        mask_value: the padding value (default 0.0).
    """

    def __init__(self, mask_value: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def _keep(self, inputs: Any, keepdims: bool) -> Any:
        value = cast_ops.cast(self.mask_value, inputs.dtype)
        return reduce_any(math_ops.not_equal(inputs, value), axis=-1, keepdims=keepdims)

    def call(self, inputs: Any) -> Any:
        return inputs * cast_ops.cast(self._keep(inputs, True), inputs.dtype)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return self._keep(inputs, False)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "mask_value": self.mask_value}


def merge_masks(inputs: list[Any], masks: Any) -> Any:
    """The mask of an element-wise merge: the AND of the inputs' masks (None if none)."""
    if masks is None:
        return None
    present = [m for m in masks if m is not None]
    if not present:
        return None
    stacked = array_ops.stack([cast_ops.cast(m, dtypes.bool) for m in present], 0)
    return reduce_all(stacked, axis=0)


def concat_masks(inputs: list[Any], masks: Any, axis: int) -> Any:
    """``Concatenate``'s mask: missing masks are all-true, lower-rank masks get a trailing
    axis; concatenated along ``axis`` and reduced with ``all`` over the last axis."""
    if masks is None or all(m is None for m in masks):
        return None
    parts = []
    for x, m in zip(inputs, masks):
        if m is None:
            parts.append(cast_ops.cast(array_ops.ones_like(x), dtypes.bool))
        elif m.shape.rank is not None and x.shape.rank is not None and m.shape.rank < x.shape.rank:
            parts.append(array_ops.expand_dims(m, -1))
        else:
            parts.append(m)
    return reduce_all(array_ops.concat(parts, axis), axis=-1)


def time_distributed_mask(layer: Layer, inputs: Any, inner_inputs: Any, mask: Any) -> Any:
    """``TimeDistributed``'s mask: the inner layer's mask per step, reshaped back to
    ``[batch, time, ...]``; when the inner layer gives none, the input mask (reduced with
    ``any`` to ``[batch, time]``)."""
    inner_mask = None
    if mask is not None:
        inner_mask = array_ops.reshape(mask, array_ops.concat(
            [[-1], array_ops.shape(mask)[2:]], 0))
    output_mask = layer.compute_mask(inner_inputs, inner_mask) if layer.supports_masking else None
    if output_mask is None:
        if mask is None:
            return None
        output_mask = mask
        for _ in range(2, mask.shape.rank or 2):
            output_mask = reduce_any(output_mask, axis=-1)
        return output_mask
    batch_time = array_ops.shape(inputs)[:2]
    return array_ops.reshape(output_mask, array_ops.concat(
        [batch_time, array_ops.shape(output_mask)[1:]], 0))
