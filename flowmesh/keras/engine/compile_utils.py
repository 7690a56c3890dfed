"""What ``Model.compile`` resolves (before anything enters the graph) and the graph it
builds once per model: target and sample-weight placeholders, the total loss, metric
means, the train op (optimizer step + the model's update ops)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import get_default_graph
from flowmesh.keras import losses as losses_lib
from flowmesh.keras import metrics as metrics_lib
from flowmesh.keras import optimizers
from flowmesh.keras.engine import keras_mask, sample_weights


@dataclass
class CompileConfig:
    """The resolved ``compile`` arguments, one loss / weight / metric list per output."""

    optimizer: Any
    loss_fns: list[Any]
    loss_weights: list[float]
    metric_specs: list[list[Any]]
    output_names: list[str]
    metric_names: list[str] = field(default_factory=list)  # the output losses' names first
    sample_weight_modes: list[str | None] = field(default_factory=list)  # None or "temporal", per output
    weighted_specs: list[list[Any]] = field(default_factory=list)  # weighted_metrics, per output
    weighted_names: list[Any] = field(default_factory=list)  # the first output's, as compile named them
    plain_names: list[Any] = field(default_factory=list)  # the first output's metrics, as compile named them


def _per_output(value: Any, names: list[str], what: str) -> list[Any]:
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise ValueError(f"Unknown entries in {what} dictionary: {unknown}. Only expected the following "
                             f"keys: {names}")
        return [value.get(n) for n in names]
    if isinstance(value, (list, tuple)) and what != "metrics":
        if len(value) != len(names):
            raise ValueError(f"When passing a list as {what}, it should have one entry per model output. The "
                             f"model has {len(names)} outputs ({names}), but you passed {what}={value!r}")
        return list(value)
    return [value] * len(names)


def resolve(optimizer: Any, loss: Any, metrics: Any, loss_weights: Any, output_names: list[str],
            output_shapes: list[Any], sample_weight_mode: Any = None,
            weighted_metrics: Any = None) -> CompileConfig:
    """Validates and resolves every name (raising ValueError listing the valid names).
    Metric names follow tf-keras in TensorFlow 1.x graph mode: per output, ``metrics`` then
    ``weighted_metrics`` (prefixed ``weighted_``), an entry repeated in one list counted
    once, a name taken by another output or list gets ``_1``, ``_2``, ..."""
    opt = optimizers.get(optimizer)
    # An output without a loss (``compile(optimizer)`` with ``add_loss``, or a dict of
    # losses leaving it out) takes no targets and no metrics, as in tf-keras.
    loss_fns = [None if item is None else losses_lib.get(item)
                for item in _per_output(loss, output_names, "loss")]
    weights = _per_output(loss_weights if loss_weights is not None else 1.0, output_names, "loss_weights")
    plain, weighted = _metrics_per_output(metrics, output_names), _metrics_per_output(weighted_metrics, output_names)
    specs: list[list[Any]] = []
    weighted_specs: list[list[Any]] = []
    # A model with several outputs reports each output's loss first (``<output>_loss``).
    names: list[str] = [f"{n}_loss" for n in output_names] if len(output_names) > 1 else []
    config_names: list[list[Any]] = []
    for i, fn in enumerate(loss_fns):
        for prefix, entries, into in (("", plain[i], specs), ("weighted_", weighted[i], weighted_specs)):
            entries = list(entries) if isinstance(entries, (list, tuple)) else [entries] if entries else []
            entries = entries if fn is not None else []
            config_names.append([metrics_lib.config_name(e) for e in entries])
            by_name: dict[str, Any] = {}  # a repeated name keeps its place, the last entry wins
            for entry in entries:
                name, metric = metrics_lib.resolve(entry, fn, output_shapes[i])
                by_name[prefix + name] = metric
            resolved = []
            for name, metric in by_name.items():
                name = _unique(f"{output_names[i]}_{name}" if len(output_names) > 1 else name, names)
                resolved.append((name, metric))
                names.append(name)
            into.append(resolved)
    return CompileConfig(opt, loss_fns, [float(w if w is not None else 1.0) for w in weights], specs,
                         output_names, names, sample_weights.resolve_modes(sample_weight_mode, output_names),
                         weighted_specs, config_names[1], config_names[0])


def _metrics_per_output(metrics: Any, output_names: list[str]) -> list[Any]:
    if isinstance(metrics, dict):
        return _per_output(metrics, output_names, "metrics")
    return [metrics] * len(output_names)


def _unique(name: str, taken: list[str]) -> str:
    """``name``, or ``name_1``, ``name_2``, ... when taken (tf-keras's metric names)."""
    candidate, k = name, 1
    while candidate in taken or candidate == "loss":
        candidate, k = f"{name}_{k}", k + 1
    return candidate


class TrainingGraph:
    """The placeholders and fetches of one compiled model in one graph (built once)."""

    def __init__(self, model: Any, config: CompileConfig, target_shapes: list[tuple]):
        from flowmesh.ops import cast_ops, math_ops
        from flowmesh.ops.constant_op import constant, placeholder
        from flowmesh.ops.reduction_ops import reduce_mean

        self.graph = get_default_graph()
        self.inputs = list(model.inputs)
        outputs = list(model.outputs)
        self.targets, self.sample_weights = [], []
        per_output_losses, output_losses = [], []
        metric_tensors = []
        self.stateful_slots: set[int] = set()  # metric positions reported at their accumulated value
        self.reset_ops: list[Any] = []
        self.metric_counts: list[Any] = []
        self.metric_count_slots: list[int | None] = []
        with self.graph.name_scope(None):
            self.loss_outputs = [i for i, fn in enumerate(config.loss_fns) if fn is not None]
            for i, (out, fn) in enumerate(zip(outputs, config.loss_fns)):
                if fn is None:
                    continue
                name = config.output_names[i]
                target = placeholder(dtypes.float32, [None] + list(target_shapes[i][1:]), name=f"{name}_target")
                modes = config.sample_weight_modes
                weight = sample_weights.weight_placeholder(modes[i] if modes else None, name)
                self.targets.append(target)
                self.sample_weights.append(weight)
                mask = keras_mask.get_mask(out)
                with self.graph.name_scope(f"loss/{name}_loss" if len(outputs) > 1 else "loss"):
                    value = output_loss(fn, target, out, weight, mask)
                per_output_losses.append(value * config.loss_weights[i] if config.loss_weights[i] != 1.0 else value)
                if len(outputs) > 1:  # reported unweighted, a mean over the batches (tf-keras's)
                    output_losses.append(value)
                with self.graph.name_scope("metrics"):
                    for _, metric in config.metric_specs[i]:
                        if metrics_lib.per_sample(metric) is None:
                            metric_tensors.append(self._stateful(metric, target, out, None, mask, len(metric_tensors)))
                            self.metric_count_slots.append(None)
                            continue
                        values = cast_ops.cast(metrics_lib.per_sample(metric)(target, out), dtypes.float32)
                        if mask is None:
                            metric_tensors.append(reduce_mean(values))
                            self.metric_count_slots.append(None)
                            continue
                        metric_tensors.append(masked_mean(values, mask))
                        self.metric_count_slots.append(len(self.metric_counts))
                        self.metric_counts.append(_reduce_sum(cast_ops.cast(mask, dtypes.float32)))
                    for _, metric in (config.weighted_specs[i] if config.weighted_specs else []):
                        if metrics_lib.per_sample(metric) is None:
                            metric_tensors.append(self._stateful(metric, target, out, weight, mask, len(metric_tensors)))
                            self.metric_count_slots.append(None)
                            continue
                        values = cast_ops.cast(metrics_lib.per_sample(metric)(target, out), dtypes.float32)
                        total, count = weighted_sum(values, weight, mask)
                        metric_tensors.append(math_ops.div_no_nan(total, count))
                        self.metric_count_slots.append(len(self.metric_counts))
                        self.metric_counts.append(count)
            terms = per_output_losses + [loss for loss in model.losses]
            if not terms:
                raise ValueError("The model cannot be compiled because it has no loss to optimize: pass "
                                 "compile(loss=...) or add losses with model.add_loss(...)")
            total = terms[0] if len(terms) == 1 else math_ops.add_n(terms)
            self.total_loss = total
            self.metric_tensors = output_losses + metric_tensors
            self.stateful_slots = {len(output_losses) + k for k in self.stateful_slots}
            if output_losses:  # each batch weighs 1 in the epoch means of the output losses
                one = constant(1.0, name="batch_weight")
                self.metric_count_slots = [len(self.metric_counts)] * len(output_losses) + self.metric_count_slots
                self.metric_counts = self.metric_counts + [one]
            self.outputs = outputs
        self._train_op: Any = None
        self.model = model
        self.config = config

    def _stateful(self, metric: Any, target: Any, out: Any, weight: Any, mask: Any, position: int) -> Any:
        """An accumulating metric's value after this batch's update (its variables are reset
        at each epoch, validation and evaluation: :meth:`reset_stateful_metrics`)."""
        from flowmesh.ops import cast_ops

        sample_weight = weight
        if mask is not None:
            mask = cast_ops.cast(mask, dtypes.float32)
            sample_weight = mask if weight is None else sample_weights_times(weight, mask)
        value = metric(target, out, sample_weight=sample_weight)
        self.reset_ops += metric.reset_ops()
        self.stateful_slots.add(position)
        return value

    def reset_stateful_metrics(self) -> None:
        if self.reset_ops:
            from flowmesh.keras import backend

            backend.get_session().run(self.reset_ops)

    def train_fetches(self) -> list[Any]:
        """``[train op, loss, metric means...]`` for one training step."""
        return [self.train_op(), self.total_loss] + self.metric_tensors + self.metric_counts

    def train_op(self) -> Any:
        """The optimizer step grouped with the model's update ops (built on first use)."""
        if self._train_op is None:
            from flowmesh.ops.control_flow_ops import group

            with self.graph.name_scope(None):
                params = self.model.trainable_weights
                if not params:
                    raise ValueError(f"Model {self.model.name} has no trainable weights to train.")
                step = self.config.optimizer.get_updates(self.total_loss, params)
                self._train_op = group(step, *self.model.updates, name="train_step")
        return self._train_op

    def feed(self, xs: list[Any], ys: list[Any] | None = None, weights: list[Any] | None = None,
             training: bool = False) -> dict[Any, Any]:
        """A feed dict for one batch (NumPy arrays, cast to each placeholder's dtype)."""
        from flowmesh.keras import backend

        feed = {p: _cast(x, p) for p, x in zip(self.inputs, xs)}
        if ys is not None:
            if len(ys) == len(self.outputs) != len(self.targets):  # targets of outputs without a loss
                ys = [ys[i] for i in self.loss_outputs]
            feed.update({p: _cast(y, p) for p, y in zip(self.targets, ys)})
        if weights is not None:
            feed.update({p: w for p, w in zip(self.sample_weights, weights) if w is not None})
        phase = backend._LEARNING_PHASES.get(self.graph)
        if training and phase is not None:
            feed[phase] = True
        return feed


def _cast(value: Any, placeholder: Any) -> Any:
    import numpy as np

    dtype = placeholder.dtype.as_numpy_dtype
    return value if getattr(value, "dtype", None) == dtype else np.asarray(value, dtype=dtype)


def sample_weights_times(weight: Any, mask: Any) -> Any:
    """Sample (or temporal) weights times a mask, broadcast to the mask's shape."""
    from flowmesh.ops import cast_ops

    return losses_lib.match_rank(cast_ops.cast(weight, mask.dtype), mask) * mask


def output_loss(fn: Any, target: Any, out: Any, weight: Any, mask: Any) -> Any:
    """One output's loss as ``compile`` reduces it: weighted by ``weight`` (and ``mask``)."""
    if mask is not None:
        return masked_loss(fn, target, out, weight, mask)
    if isinstance(fn, losses_lib.Loss):
        return fn(target, out, sample_weight=weight)
    return losses_lib.reduce_weighted(fn(target, out), weight)


def masked_loss(fn: Any, target: Any, out: Any, weight: Any, mask: Any) -> Any:
    """tf-keras's loss of a masked output: the mask multiplies the sample weights and,
    for the default ``sum_over_batch_size`` reduction, the sum is divided by the number of
    unmasked elements instead of all elements."""
    from flowmesh.ops import array_ops, cast_ops, math_ops

    per_sample = fn.call(target, out) if isinstance(fn, losses_lib.Loss) else fn(target, out)
    reduction = getattr(fn, "reduction", "auto")
    mask = cast_ops.cast(mask, per_sample.dtype)
    weight = losses_lib.match_rank(cast_ops.cast(weight, per_sample.dtype), mask) * mask
    if reduction in ("auto", "sum_over_batch_size"):
        total = cast_ops.cast(array_ops.size(mask), per_sample.dtype)
        weight = weight * math_ops.div_no_nan(total, _reduce_sum(mask))
    return losses_lib.reduce_weighted(per_sample, weight, reduction)


def masked_mean(values: Any, mask: Any) -> Any:
    """A metric's mean over the unmasked elements (the mask as its sample weight)."""
    from flowmesh.ops import cast_ops, math_ops

    mask = cast_ops.cast(mask, values.dtype)
    return math_ops.div_no_nan(_reduce_sum(values * mask), _reduce_sum(mask))


def weighted_sum(values: Any, weight: Any, mask: Any) -> tuple[Any, Any]:
    """A weighted metric's ``sum(values * w)`` and ``sum(w)``, ``w`` the sample (or temporal)
    weights times the mask, broadcast to the values (tf-keras's weighted ``Mean``)."""
    from flowmesh.ops import array_ops, cast_ops

    w = losses_lib.match_rank(cast_ops.cast(weight, values.dtype), values)
    if mask is not None:
        w = w * losses_lib.match_rank(cast_ops.cast(mask, values.dtype), values)
    w = w * array_ops.ones_like(values)
    return _reduce_sum(values * w), _reduce_sum(w)


def _reduce_sum(x: Any) -> Any:
    from flowmesh.ops.reduction_ops import reduce_sum

    return reduce_sum(x)
