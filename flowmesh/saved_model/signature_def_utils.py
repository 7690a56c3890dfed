"""``tf.saved_model.utils.build_tensor_info`` and ``signature_def_utils``: SignatureDefs
(named graph inputs and outputs) as TensorFlow's protobuf messages."""

from __future__ import annotations

from typing import Any

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.core.graph import Graph, Tensor
from flowmesh.core.graph_def import shape_to_proto
from flowmesh.errors import InvalidArgumentError
from flowmesh.protos.meta_graph import SignatureDef, TensorInfo
from flowmesh.saved_model.constants import signature_constants as sc

_fill_namespace(globals(), "saved_model.signature_def_utils")


def build_tensor_info(tensor: Tensor) -> Any:
    """The ``TensorInfo`` (name, dtype, shape) of a graph tensor."""
    if not isinstance(tensor, Tensor):
        raise InvalidArgumentError(f"build_tensor_info needs a graph tensor, got {tensor!r}")
    return TensorInfo(name=tensor.name, dtype=tensor.dtype.as_datatype_enum,
                      tensor_shape=shape_to_proto(tensor.shape))


def get_tensor_from_tensor_info(tensor_info: Any, graph: Graph | None = None,
                                import_scope: str | None = None) -> Tensor:
    """The tensor of ``graph`` (default graph) a ``TensorInfo`` names."""
    from flowmesh.core.graph import get_default_graph

    graph = graph or get_default_graph()
    name = tensor_info.name if not import_scope else f"{import_scope}/{tensor_info.name}"
    return graph.get_tensor_by_name(name)


def build_signature_def(inputs: dict | None = None, outputs: dict | None = None,
                        method_name: str | None = None) -> Any:
    """A ``SignatureDef`` from ``{key: TensorInfo}`` maps and a method name."""
    sig = SignatureDef(method_name=method_name or "")
    for key, info in (inputs or {}).items():
        sig.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        sig.outputs[key].CopyFrom(info)
    return sig


def _infos(tensors: dict, what: str) -> dict:
    if not tensors:
        raise InvalidArgumentError(f"a signature needs at least one {what} tensor")
    return {key: build_tensor_info(t) for key, t in tensors.items()}


def predict_signature_def(inputs: dict, outputs: dict) -> Any:
    """A predict signature: ``{name: tensor}`` inputs and outputs."""
    return build_signature_def(_infos(inputs, "input"), _infos(outputs, "output"), sc.PREDICT_METHOD_NAME)


def classification_signature_def(examples: Tensor, classes: Tensor | None, scores: Tensor | None) -> Any:
    """A classify signature over serialized examples, with classes and/or scores."""
    outputs = {}
    if classes is not None:
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = build_tensor_info(classes)
    if scores is not None:
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
    if not outputs:
        raise InvalidArgumentError("classification_signature_def needs classes or scores")
    return build_signature_def({sc.CLASSIFY_INPUTS: build_tensor_info(examples)}, outputs,
                               sc.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples: Tensor, predictions: Tensor) -> Any:
    """A regress signature: serialized examples in, predictions out."""
    return build_signature_def({sc.REGRESS_INPUTS: build_tensor_info(examples)},
                               {sc.REGRESS_OUTPUTS: build_tensor_info(predictions)}, sc.REGRESS_METHOD_NAME)


def is_valid_signature(signature_def: Any) -> bool:
    """True when the signature has a method name and at least one output."""
    return bool(signature_def.method_name) and len(signature_def.outputs) > 0
