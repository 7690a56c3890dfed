"""``tf.estimator.export``: serving inputs (``ServingInputReceiver``,
``build_raw_serving_input_receiver_fn``, ``build_parsing_serving_input_receiver_fn``) and
export outputs (``PredictOutput``, ``ClassificationOutput``, ``RegressionOutput``) that become
a SavedModel's signature defs in ``Estimator.export_saved_model``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.saved_model import signature_def_utils as sdu
from flowmesh.saved_model.constants import signature_constants as sc


class ServingInputReceiver:
    """The serving graph's inputs: ``features`` for the model_fn, ``receiver_tensors`` the
    signature's inputs (a tensor or a dict of them)."""

    def __init__(self, features: Any, receiver_tensors: Any, receiver_tensors_alternatives: Any = None):
        if isinstance(features, Tensor):
            features = {"feature": features}
        if isinstance(receiver_tensors, Tensor):
            receiver_tensors = {"input": receiver_tensors}
        if not isinstance(features, dict) or not isinstance(receiver_tensors, dict) or not receiver_tensors:
            raise InvalidArgumentError("ServingInputReceiver needs features and receiver_tensors as a "
                                       "tensor or a non-empty dict of tensors")
        self.features = features
        self.receiver_tensors = receiver_tensors
        self.receiver_tensors_alternatives = receiver_tensors_alternatives


def build_raw_serving_input_receiver_fn(features: dict, default_batch_size: int | None = None
                                        ) -> Callable[[], ServingInputReceiver]:
    """Placeholders shaped like ``features`` (batch dimension ``default_batch_size``)."""
    from flowmesh.ops.constant_op import placeholder

    def fn() -> ServingInputReceiver:
        received = {}
        for key, t in features.items():
            shape = [default_batch_size] + t.shape.as_list()[1:] if t.shape.ndims else None
            received[key] = placeholder(t.dtype, shape, name=key)
        return ServingInputReceiver(received, received)
    return fn


def build_parsing_serving_input_receiver_fn(feature_spec: dict, default_batch_size: int | None = None
                                            ) -> Callable[[], ServingInputReceiver]:
    """Serialized ``tf.train.Example``s in (``input_example_tensor``), parsed by ``feature_spec``."""
    from flowmesh.ops.constant_op import placeholder
    from flowmesh.ops.parsing_ops import parse_example

    def fn() -> ServingInputReceiver:
        serialized = placeholder(dtypes.string, [default_batch_size], name="input_example_tensor")
        return ServingInputReceiver(parse_example(serialized, feature_spec), {"examples": serialized})
    return fn


class PredictOutput:
    """A predict signature of the given outputs (a tensor or dict)."""

    def __init__(self, outputs: Any):
        self.outputs = outputs if isinstance(outputs, dict) else {sc.PREDICT_OUTPUTS: outputs}

    def as_signature_def(self, receiver_tensors: dict) -> Any:
        return sdu.predict_signature_def(receiver_tensors, self.outputs)


class ClassificationOutput:
    """A classify signature (``scores`` and/or string ``classes``) over one string input."""

    def __init__(self, scores: Tensor | None = None, classes: Tensor | None = None):
        if scores is None and classes is None:
            raise InvalidArgumentError("ClassificationOutput needs scores or classes")
        self.scores, self.classes = scores, classes

    def as_signature_def(self, receiver_tensors: dict) -> Any:
        if len(receiver_tensors) != 1:
            raise InvalidArgumentError("a classification signature needs exactly one input tensor")
        return sdu.classification_signature_def(next(iter(receiver_tensors.values())), self.classes, self.scores)


class RegressionOutput:
    """A regress signature (``value``) over one string input."""

    def __init__(self, value: Tensor):
        self.value = value

    def as_signature_def(self, receiver_tensors: dict) -> Any:
        if len(receiver_tensors) != 1:
            raise InvalidArgumentError("a regression signature needs exactly one input tensor")
        return sdu.regression_signature_def(next(iter(receiver_tensors.values())), self.value)


def signature_defs(export_outputs: Any, predictions: Any, receiver: ServingInputReceiver) -> dict:
    """The signature map of a serving graph: the spec's ``export_outputs``, else a
    ``serving_default`` predict signature of every prediction."""
    if not export_outputs:
        export_outputs = {sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(predictions)}
    return {key: out.as_signature_def(receiver.receiver_tensors) for key, out in export_outputs.items()}
