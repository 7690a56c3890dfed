"""``tf.summary.tensor_summary`` and ``tf.summary.text``: a whole tensor as a ``TensorProto`` in
a ``Summary`` value with plugin metadata (``TensorSummaryV2``, kernel in
``kernels/summary_media_ops.py``); ``get_summary_description`` reads a legacy ``TensorSummary``
node's description; ``all_v2_summary_ops`` lists the graph's TF2-style summary ops."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, Tensor, get_collection
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops._builders import make_tensor
from flowmesh.ops.summary_ops import _collect, summary_scope
from flowmesh.protos.summary import SummaryDescription, SummaryMetadata

_SUMMARY_V2_COLLECTION = "_SUMMARY_V2"  # TensorFlow's GraphKeys._SUMMARY_COLLECTION


def _tensor_summary_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    for what, t in (("tag", inputs[0]), ("serialized_summary_metadata", inputs[2])):
        if t.shape.rank not in (None, 0):
            raise ValueError(f"TensorSummaryV2: {what} must be a scalar string, got {t.shape}")
    return [(dtypes.string, TensorShape([]))]


register_op("TensorSummaryV2", _tensor_summary_shape, not_differentiable=True)


def tensor_summary(name: str, tensor: Any, summary_description: str | None = None,
                   collections: Sequence[str] | None = None, summary_metadata: Any = None,
                   family: str | None = None, display_name: str | None = None) -> Tensor:
    """A summary holding all of ``tensor`` (``tf.summary.tensor_summary``).

    Args:
        name: the summary's name (and tag, under the name scope and ``family``).
        tensor: a tensor of any dtype and shape.
        summary_description: a long description (stored in the metadata).
        collections: graph collections to add the op to (default ``[GraphKeys.SUMMARIES]``).
        summary_metadata: a ``SummaryMetadata`` (its plugin data tells TensorBoard how to show it).
        family: an optional prefix of the tag and the op name.
        display_name: the name TensorBoard shows.

    Returns:
        A scalar string tensor: a serialized ``tf.Summary``.
    """
    metadata = SummaryMetadata() if summary_metadata is None else summary_metadata
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        values = convert_to_tensor(tensor, name="tensor")
        tag_t = convert_to_tensor(tag, dtype=dtypes.string, name="tag")
        meta = convert_to_tensor(metadata.SerializeToString(), dtype=dtypes.string,
                                 name="serialized_summary_metadata")
        out = make_tensor("TensorSummaryV2", [tag_t, values, meta], {"T": values.dtype}, name=scope)
    _collect(out, collections, [GraphKeys.SUMMARIES])
    return out


def text(name: str, tensor: Any, collections: Sequence[str] | None = None) -> Tensor:
    """A string tensor for TensorBoard's Text dashboard (``tf.summary.text``): a
    :func:`tensor_summary` with the ``text`` plugin's metadata.

    Raises:
        ValueError: ``tensor`` is not a string tensor.
    """
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype.name}")
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def get_summary_description(node_def: Any) -> Any:
    """The ``SummaryDescription`` in the ``description`` attr (JSON) of a legacy
    ``TensorSummary`` ``NodeDef`` (``tf.summary.get_summary_description``).

    Raises:
        ValueError: ``node_def`` is not a ``TensorSummary`` node, or its description is not JSON.
    """
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    raw = node_def.attr["description"].s
    text_value = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
    try:
        fields = json.loads(text_value) if text_value else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"get_summary_description: the description of {node_def.name!r} is not "
                         f"JSON: {exc}") from None
    unknown = set(fields) - {"typeHint", "type_hint"}
    if unknown:
        raise ValueError(f"get_summary_description: unknown SummaryDescription fields {sorted(unknown)}")
    return SummaryDescription(type_hint=fields.get("typeHint", fields.get("type_hint", "")))


def all_v2_summary_ops() -> list[Any]:
    """The graph's TF2-style summary ops (``tf.summary.all_v2_summary_ops``); TF 1.x
    ``tf.summary`` ops are not among them (flowmesh builds none of the TF2 kind)."""
    return get_collection(_SUMMARY_V2_COLLECTION)
