"""``tf.estimator.EstimatorSpec``: what a ``model_fn`` returns for one mode."""

from __future__ import annotations

from typing import Any, NamedTuple

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator.mode_keys import ModeKeys


class EstimatorSpec(NamedTuple):
    """The ops and tensors of a model in one mode.

    Attributes:
        mode: a :class:`ModeKeys` value.
        predictions: a tensor or dict of tensors (required in PREDICT).
        loss: a scalar loss (required in TRAIN and EVAL).
        train_op: the training step (required in TRAIN).
        eval_metric_ops: ``{name: (value, update_op)}`` such as ``tf.metrics.accuracy``'s.
        export_outputs: ``{signature key: output}`` for ``export_saved_model``.
        training_chief_hooks / training_hooks / evaluation_hooks / prediction_hooks: hooks.
        scaffold: a ``tf.train.Scaffold`` (init ops, saver).
    """

    mode: str
    predictions: Any = None
    loss: Any = None
    train_op: Any = None
    eval_metric_ops: Any = None
    export_outputs: Any = None
    training_chief_hooks: Any = ()
    training_hooks: Any = ()
    scaffold: Any = None
    evaluation_hooks: Any = ()
    prediction_hooks: Any = ()


def validate_spec(spec: Any, mode: str) -> EstimatorSpec:
    """Checks what ``model_fn`` returned for ``mode``.

    Raises:
        InvalidArgumentError: not an EstimatorSpec, a missing ``train_op``/``loss``/
            ``predictions`` for the mode, or a non-scalar loss (says which and the mode).
    """
    if not isinstance(spec, EstimatorSpec):
        raise InvalidArgumentError(
            f"model_fn must return a tf.estimator.EstimatorSpec in mode {mode!r}, got "
            f"{type(spec).__name__}")
    if spec.mode != mode:
        raise InvalidArgumentError(f"model_fn returned an EstimatorSpec for mode {spec.mode!r} "
                                   f"when called with mode {mode!r}")
    if mode == ModeKeys.TRAIN and spec.train_op is None:
        raise InvalidArgumentError(
            "model_fn returned no train_op in mode 'train'; return "
            "EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(loss, global_step))")
    if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and spec.loss is None:
        raise InvalidArgumentError(f"model_fn returned no loss in mode {mode!r}; EstimatorSpec needs "
                                   "loss= for training and evaluation")
    if mode == ModeKeys.PREDICT and spec.predictions is None:
        raise InvalidArgumentError("model_fn returned no predictions in mode 'infer'")
    if spec.loss is not None:
        loss = convert_to_tensor(spec.loss)
        if loss.shape.ndims not in (None, 0) and loss.shape.num_elements() != 1:
            raise InvalidArgumentError(f"model_fn's loss must be a scalar, got shape {loss.shape} "
                                       f"in mode {mode!r}")
        spec = spec._replace(loss=loss)
    if spec.train_op is not None and not isinstance(spec.train_op, (Operation, Tensor)):
        raise InvalidArgumentError(f"train_op must be an Operation or Tensor, got {spec.train_op!r}")
    for name, pair in (spec.eval_metric_ops or {}).items():
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise InvalidArgumentError(
                f"eval_metric_ops['{name}'] must be a (value, update_op) pair such as "
                f"tf.metrics.accuracy returns, got {pair!r}")
    return spec
