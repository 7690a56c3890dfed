"""``tf.summary`` ops: serialized ``Summary`` protocol buffers as scalar string tensors.

=====================  ============================================================
op                     output
=====================  ============================================================
``ScalarSummary``      one ``simple_value`` per element of ``tags`` / ``values``
``HistogramSummary``   a ``histo`` of every element of ``values`` (TensorFlow's
                       default buckets; NaN or infinity is an error)
``MergeSummary``       the values of several summaries in one (tags must be unique)
=====================  ============================================================

The wrappers name things as TensorFlow 1.x does: ``tf.summary.scalar("loss", x)`` inside
``name_scope("train")`` makes the op ``train/loss`` and the tag ``train/loss`` (a
``family`` prefixes both), and adds the op to ``GraphKeys.SUMMARIES`` for
``tf.summary.merge_all``. A ``tf.summary.FileWriter`` writes the fetched bytes to an
event file. None of the ops is differentiable.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, Tensor, add_to_collection, get_collection, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_tensor

log = logging.getLogger("flowmesh")
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")
_REAL = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
         dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.bool)


def _string_scalar(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.string, TensorShape([]))]


def _scalar_summary_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    tags, values = inputs
    if not tags.shape.is_compatible_with(values.shape):
        raise ValueError(f"ScalarSummary: tags and values must have the same shape, got tags "
                         f"{tags.shape} and values {values.shape}; use tf.summary.histogram for "
                         "a tensor with several values")
    return _string_scalar(inputs, attrs)


def _histogram_summary_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    if inputs[0].shape.rank not in (None, 0):
        raise ValueError(f"HistogramSummary: tag must be a scalar string, got shape {inputs[0].shape}")
    return _string_scalar(inputs, attrs)


register_op("ScalarSummary", _scalar_summary_shape, not_differentiable=True)
register_op("HistogramSummary", _histogram_summary_shape, not_differentiable=True)
register_op("MergeSummary", _string_scalar, not_differentiable=True)


def clean_tag(name: str | None) -> str | None:
    """TensorFlow's tag cleaning: characters other than ``-/\\w.`` become ``_`` and leading
    slashes are dropped (logged, as in TensorFlow)."""
    if name is None:
        return None
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if cleaned != name:
        log.info("Summary name %s is illegal; using %s instead.", name, cleaned)
    return cleaned


@contextmanager
def summary_scope(name: str, family: str | None = None, default_name: str | None = None,
                  values: Sequence[Any] | None = None) -> Iterator[tuple[str, str]]:
    """Yields ``(tag, scope)`` for a summary op, as TensorFlow's ``summary_scope`` does."""
    name, family = clean_tag(name), clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _values(tensor: Any, op: str) -> Tensor:
    t = convert_to_tensor(tensor, name="values")
    if t.dtype.base_dtype not in _REAL:
        raise TypeError(f"{op} needs a real-valued tensor, got {t.dtype.name}")
    return t


def _collect(op: Tensor, collections: Sequence[str] | None, default: Sequence[str]) -> None:
    for key in (default if collections is None else collections):
        add_to_collection(key, op)


def scalar(name: str, tensor: Any, collections: Sequence[str] | None = None,
           family: str | None = None) -> Tensor:
    """A summary of one scalar value (``tf.summary.scalar``).

    Args:
        name: the summary's name (also the op name; ``name_scope`` prefixes the tag).
        tensor: a real scalar.
        collections: graph collections to add the op to (default ``[GraphKeys.SUMMARIES]``).
        family: an optional prefix of the tag and the op name (a TensorBoard tab).

    Returns:
        A scalar string tensor: a serialized ``tf.Summary``.

    Raises:
        ValueError: ``tensor`` is not a scalar.
        TypeError: ``tensor`` is not real-valued.
    """
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        values = _values(tensor, "tf.summary.scalar")
        if values.shape.rank not in (None, 0):
            raise ValueError(f"tf.summary.scalar('{name}') needs a scalar, got shape {values.shape}; "
                             "reduce it (tf.reduce_mean) or use tf.summary.histogram")
        tags = convert_to_tensor(tag, dtype=dtypes.string, name="tags")
        out = make_tensor("ScalarSummary", [tags, values], {"T": values.dtype}, name=scope)
    _collect(out, collections, [GraphKeys.SUMMARIES])
    return out


def histogram(name: str, values: Any, collections: Sequence[str] | None = None,
              family: str | None = None) -> Tensor:
    """A histogram of every element of ``values`` (``tf.summary.histogram``).

    Args:
        name: the summary's name.
        values: a real tensor of any shape.
        collections: graph collections to add the op to (default ``[GraphKeys.SUMMARIES]``).
        family: an optional prefix of the tag and the op name.

    Returns:
        A scalar string tensor: a serialized ``tf.Summary``. Running it fails with
        ``InvalidArgumentError`` when a value is NaN or infinite.
    """
    with summary_scope(name, family, values=[values]) as (tag, scope):
        tensor = _values(values, "tf.summary.histogram")
        tag_t = convert_to_tensor(tag, dtype=dtypes.string, name="tag")
        out = make_tensor("HistogramSummary", [tag_t, tensor], {"T": tensor.dtype}, name=scope)
    _collect(out, collections, [GraphKeys.SUMMARIES])
    return out


def merge(inputs: Sequence[Any], collections: Sequence[str] | None = None,
          name: str | None = None) -> Tensor:
    """One summary holding the values of ``inputs`` (``tf.summary.merge``).

    Raises:
        ValueError: ``inputs`` is empty.
        InvalidArgumentError: at run time, when two inputs use the same tag.
    """
    inputs = list(inputs)
    if not inputs:
        raise ValueError("tf.summary.merge needs at least one summary tensor")
    with name_scope(name, "Merge", inputs):
        tensors = [convert_to_tensor(x, dtype=dtypes.string) for x in inputs]
        out = make_tensor("MergeSummary", tensors, {"N": len(tensors)}, name=name or "MergeSummary")
    _collect(out, collections, [])
    return out


def merge_all(key: str = GraphKeys.SUMMARIES, scope: str | None = None, name: str | None = None) -> Tensor | None:
    """Merges every summary in collection ``key`` (``tf.summary.merge_all``); None when
    there is none."""
    ops = get_collection(key, scope)
    return merge(ops, name=name) if ops else None
