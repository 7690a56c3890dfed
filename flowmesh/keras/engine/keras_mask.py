"""Keras masks: which time steps of a symbolic tensor are padding.

A layer that produces a mask (``Embedding(mask_zero=True)``, ``Masking``) attaches a bool
tensor ``[batch, time]`` to its output, as tf-keras sets ``tensor._keras_mask``. Layers
that support masking carry it on (``compute_mask``), layers whose ``call`` takes ``mask=``
receive it (the recurrent layers skip masked steps), and ``compile``/``fit`` turn the
mask of a model output into sample weights of its loss and metrics. Tensors have fixed
slots, so masks live in a weak dictionary keyed by tensor.
"""

from __future__ import annotations

import weakref
from typing import Any

from flowmesh.ops import _structure as nest

_MASKS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def get_mask(tensor: Any) -> Any:
    """The Keras mask attached to ``tensor`` (a bool tensor), or None."""
    try:
        return _MASKS.get(tensor)
    except TypeError:
        return None


def set_mask(tensor: Any, mask: Any) -> None:
    """Attaches ``mask`` to ``tensor`` (nothing for None or for non-tensors)."""
    if mask is None:
        return
    try:
        _MASKS[tensor] = mask
    except TypeError:
        pass


def input_masks(inputs: Any) -> Any:
    """The masks of ``inputs`` in their structure (a single mask for a single tensor), or
    None when no input carries one."""
    flat = nest.flatten(inputs)
    masks = [get_mask(t) for t in flat]
    if all(m is None for m in masks):
        return None
    if len(flat) == 1 and not isinstance(inputs, (list, tuple, dict)):
        return masks[0]
    return nest.pack_sequence_as(inputs, masks)


def attach_output_masks(outputs: Any, masks: Any) -> None:
    """Attaches ``masks`` (one per output, or one for a single output) to ``outputs``."""
    if masks is None:
        return
    flat_out = nest.flatten(outputs)
    flat_masks = nest.flatten(masks) if isinstance(masks, (list, tuple)) else [masks]
    if len(flat_masks) == 1 and len(flat_out) > 1:
        flat_masks = flat_masks * len(flat_out)
    for tensor, mask in zip(flat_out, flat_masks):
        set_mask(tensor, mask)
