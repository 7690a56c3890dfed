"""``tf.keras.estimator.model_to_estimator``: an Estimator whose ``model_fn`` rebuilds a
compiled Keras model (``from_config``) in the Estimator's graph, starting from the Keras
model's current weights.

The loss and optimizer are the ones ``compile`` chose; each compiled metric becomes the
streamed mean of its per-example values (``tf.metrics.mean``); predictions are
``{output name: output}``. Features are a tensor (one input) or a dict keyed by the model's
input names; labels a tensor (one output).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from flowmesh.core.graph import control_dependencies
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator.estimator import Estimator
from flowmesh.estimator.estimator_spec import EstimatorSpec
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.estimator.run_config import RunConfig


def _inputs(model: Any, features: Any, mode: str) -> Any:
    if not isinstance(features, dict):
        return features
    missing = [n for n in model.input_names if n not in features]
    if missing:
        raise InvalidArgumentError(f"the Keras model's inputs {missing} are missing from the features "
                                   f"{sorted(features)} in mode {mode!r}; key the features by input name")
    values = [features[n] for n in model.input_names]
    return values[0] if len(values) == 1 else values


def clone_model(model: Any) -> Any:
    """A new, unbuilt copy of ``model`` in the default graph: a Sequential model layer by
    layer (each ``type(layer).from_config(layer.get_config())``), others by ``from_config``."""
    from flowmesh.keras.engine.sequential import Sequential

    if isinstance(model, Sequential):
        return Sequential([type(layer).from_config(layer.get_config()) for layer in model.layers],
                          name=model.name)
    return type(model).from_config(model.get_config())


def _model_fn(keras_model: Any, weights: list) -> Any:
    from flowmesh.metrics import mean as metrics_mean
    from flowmesh.ops import control_flow_ops
    from flowmesh.ops.reduction_ops import reduce_mean
    from flowmesh.train.scaffold import Scaffold
    from flowmesh.train.training_util import get_global_step

    compiled = keras_model._compiled

    def model_fn(features: Any, labels: Any, mode: str) -> EstimatorSpec:
        model = clone_model(keras_model)
        outputs = model(_inputs(model, features, mode))
        predictions = {model.output_names[0]: outputs} if not isinstance(outputs, list) else \
            dict(zip(model.output_names, outputs))
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions, scaffold=_scaffold(model))
        if labels is None:
            raise InvalidArgumentError(f"model_to_estimator needs labels in mode {mode!r}")
        loss = reduce_mean(compiled.loss_fns[0](labels, outputs))
        metrics = {name: _eval_metric(fn, labels, outputs, name, metrics_mean) for name, fn in compiled.metric_specs[0]}
        train_op = None
        if mode == ModeKeys.TRAIN:
            optimizer = type(compiled.optimizer).from_config(compiled.optimizer.get_config())
            step = optimizer.get_updates(loss, model.trainable_weights)
            with control_dependencies([step]):
                train_op = control_flow_ops.group(get_global_step().assign_add(1))
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op,
                             eval_metric_ops=metrics, scaffold=_scaffold(model))

    def _scaffold(model: Any) -> Any:
        def init_fn(scaffold: Any, session: Any) -> None:   # no checkpoint yet: the Keras weights
            for var, value in zip(model.weights, weights):
                var.load(value, session)
        return Scaffold(init_fn=init_fn)

    return model_fn


def model_to_estimator(keras_model: Any = None, keras_model_path: str | None = None,
                       custom_objects: dict | None = None, model_dir: str | None = None,
                       config: RunConfig | None = None, checkpoint_format: str = "saver") -> Estimator:
    """An Estimator training and evaluating a copy of the compiled ``keras_model``.

    Raises:
        InvalidArgumentError: no model, a model loaded from a path (not supported), or a
            model that was not compiled (compile it with a loss and an optimizer first).
    """
    if keras_model is None:
        raise InvalidArgumentError("model_to_estimator needs keras_model (keras_model_path is not "
                                   "supported by flowmesh; load the model first)")
    if getattr(keras_model, "_compiled", None) is None:
        raise InvalidArgumentError("model_to_estimator needs a compiled Keras model: call "
                                   "model.compile(optimizer, loss, metrics) first")
    if len(keras_model.output_names) != 1:
        raise InvalidArgumentError("model_to_estimator supports models with one output in flowmesh")
    if model_dir is None and (config is None or config.model_dir is None):
        model_dir = tempfile.mkdtemp(prefix="keras_estimator_")
    weights = keras_model.get_weights()
    est = Estimator(_model_fn(keras_model, weights), model_dir=model_dir, config=config)
    os.makedirs(est.model_dir, exist_ok=True)
    return est


def _eval_metric(metric: Any, labels: Any, outputs: Any, name: str, metrics_mean: Any) -> Any:
    """``(value, update_op)`` of a compiled Keras metric for the Estimator's evaluation."""
    from flowmesh.core.graph import control_dependencies
    from flowmesh.keras import metrics as metrics_lib
    from flowmesh.ops import array_ops

    fn = metrics_lib.per_sample(metric)
    if fn is not None:
        return metrics_mean(fn(labels, outputs), name=name)
    update = metric.update_state(labels, outputs)
    with control_dependencies([update]):
        return metric.result(), array_ops.identity(metric.result())
