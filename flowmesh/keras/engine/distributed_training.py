"""``fit`` under ``tf.distribute.MirroredStrategy``: one training step over the global batch
split across the strategy's replicas, as TensorFlow's Keras does.

The fed global batch of ``n`` samples is cut into one contiguous shard per local replica
(shard ``i`` is rows ``n*i//R .. n*(i+1)//R``). ``strategy.run`` calls the model on each
shard on the replica's device (a model built in ``strategy.scope()`` has mirrored
weights). Each replica computes its shard's loss as one device would (sample weights,
temporal weights and Keras masks included) times the shard's share of the global batch
(``rows / n``): without a mask that is ``sum(loss * sample_weight) / n``; with a mask each
replica divides by its own unmasked count, as tf-keras's per-replica
``sum_over_batch_size`` does. It is scaled by ``R`` because the strategy *averages* the
replicas' gradients, plus the regularization losses; the optimizer's ``apply_gradients``
all-reduces the gradients, so every replica applies the same gradient and the weights stay
equal. The loss shown is the replicas' sum; metrics are sums over replicas divided by the
number of values (unmasked elements under a mask). Evaluation and prediction use the first
replica's weights (all replicas hold the same).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.keras.engine.compile_utils import CompileConfig, TrainingGraph, output_loss, weighted_sum
from flowmesh.keras.engine.keras_mask import get_mask
from flowmesh.ops import _structure as nest


def local_replicas(strategy: Any) -> int:
    return len(strategy.extended.local_replica_ids()) if strategy is not None else 1


def workers(strategy: Any) -> int:
    """How many processes (workers) share the strategy's replicas."""
    if strategy is None:
        return 1
    return max(strategy.num_replicas_in_sync // local_replicas(strategy), 1)


def is_distributed(strategy: Any) -> bool:
    return strategy is not None and strategy.num_replicas_in_sync > 1


def worker_shard(strategy: Any, arrays: list[Any], batch_size: int) -> tuple[list[Any], int]:
    """This worker's rows of every array and its batch size, for a multi-worker strategy:
    the global batch ``batch_size`` is split evenly over the workers, and every worker
    takes the same number of rows (``n // workers``, every ``workers``-th row starting at
    its rank), so all run the same number of steps."""
    count = workers(strategy)
    if count <= 1:
        return arrays, batch_size
    info = getattr(strategy.extended, "info", None)
    rank = info.rank if info is not None else 0
    if batch_size % count:
        raise ValueError(f"The global batch size {batch_size} must be divisible by the number of workers "
                         f"{count} under {type(strategy).__name__}")
    n = len(next(a for a in arrays if a is not None)) // count
    return [a[rank::count][:n] if a is not None else None for a in arrays], batch_size // count


class DistributedTrainingGraph(TrainingGraph):
    """A :class:`TrainingGraph` whose training step runs on every replica of ``strategy``."""

    def __init__(self, model: Any, config: CompileConfig, target_shapes: list[tuple], strategy: Any):
        super().__init__(model, config, target_shapes)
        self.strategy = strategy
        self._train_fetches: list[Any] | None = None

    def train_fetches(self) -> list[Any]:
        if self._train_fetches is None:
            with self.graph.name_scope(None):
                self._train_fetches = self._build()
        return self._train_fetches

    def _shards(self, tensors: list[Any], count: Any, replicas: int) -> list[list[Any]]:
        from flowmesh.ops import math_ops, range_ops
        from flowmesh.ops.gather_ops import gather

        bounds = [math_ops.floordiv(count * i, replicas) for i in range(replicas + 1)]
        return [[gather(t, range_ops.range(bounds[i], bounds[i + 1])) for t in tensors] for i in range(replicas)]

    def _build(self) -> list[Any]:
        from flowmesh.distribute import PerReplica, ReduceOp
        from flowmesh.ops import array_ops, cast_ops, math_ops
        from flowmesh.ops.control_flow_ops import group

        replicas = local_replicas(self.strategy)
        count = array_ops.shape(self.inputs[0])[0]
        n = cast_ops.cast(count, dtypes.float32)
        weights = [w * _ones_rows(count, w) for w in self.sample_weights]
        shards = self._shards(list(self.inputs) + list(self.targets) + weights, count, replicas)
        k, m = len(self.inputs), len(self.targets)
        xs = PerReplica([s[:k] for s in shards])
        ys = PerReplica([s[k:k + m] for s in shards])
        ws = PerReplica([s[k + m:] for s in shards])
        with self.strategy.scope():
            optimizer = self.config.optimizer
            iterations, rate = optimizer.iterations, optimizer._rate()
            train_optimizer = optimizer.make_train_optimizer(rate)
            results = self.strategy.run(self._replica_step(train_optimizer, iterations, n, replicas),
                                        args=(xs, ys, ws))
            scale = 1.0 / workers(self.strategy)  # a cross-worker SUM adds every worker's mean
            loss = self.strategy.reduce(ReduceOp.SUM, results[0]) * scale
            sums = [self.strategy.reduce(ReduceOp.SUM, value) for value in results[1]]
            counts = [self.strategy.reduce(ReduceOp.SUM, value) for value in results[2]]
            output_losses = [self.strategy.reduce(ReduceOp.SUM, value) * scale for value in results[4]]
        metrics = output_losses + [math_ops.div_no_nan(total, c) for total, c in zip(sums, counts)]
        # Masked metrics' epoch means weigh each batch by its unmasked count (EpochMeans);
        # the output losses (several outputs) weigh each batch 1, as in the one-device graph.
        slots = self.metric_count_slots[len(output_losses):]
        masked_counts = [c for c, slot in zip(counts, slots) if slot is not None]
        if output_losses:
            masked_counts.append(self.metric_counts[-1])
        train_ops = self.strategy.experimental_local_results(results[3])
        regularization = self.model.losses
        if regularization:
            loss = math_ops.add_n([loss] + list(regularization))
        return [group(*train_ops, name="distributed_train_step"), loss] + metrics + masked_counts

    def _replica_step(self, train_optimizer: Any, iterations: Any, n: Any, replicas: int) -> Any:
        from flowmesh.ops import cast_ops, math_ops
        from flowmesh.ops.control_flow_ops import group

        model, config, count = self.model, self.config, workers(self.strategy)

        def step(xs: list[Any], ys: list[Any], ws: list[Any]) -> tuple[Any, ...]:
            before = list(model.updates)
            outputs = nest.flatten(model(xs[0] if len(xs) == 1 else xs, training=True))
            total, metric_sums, metric_counts, parts = None, [], [], []
            for i, (out, y, w, fn) in enumerate(zip(outputs, ys, ws, config.loss_fns)):
                mask = get_mask(out)
                part = output_loss(fn, y, out, w, mask) * _replica_share(fn, y, n, count)
                if len(outputs) > 1:
                    parts.append(part)
                part = part * config.loss_weights[i] if config.loss_weights[i] != 1.0 else part
                total = part if total is None else total + part
                for _, metric in config.metric_specs[i]:
                    value_sum, value_count = _metric_sum(cast_ops.cast(_per_sample(metric)(y, out), dtypes.float32),
                                                         mask)
                    metric_sums.append(value_sum)
                    metric_counts.append(value_count)
                for _, metric in (config.weighted_specs[i] if config.weighted_specs else []):
                    value_sum, value_count = weighted_sum(cast_ops.cast(_per_sample(metric)(y, out), dtypes.float32),
                                                          w, mask)
                    metric_sums.append(value_sum)
                    metric_counts.append(value_count)
            objective = total * float(replicas)
            if model.losses:
                objective = math_ops.add_n([objective] + list(model.losses))
            grads = train_optimizer.compute_gradients(objective, var_list=model.trainable_weights)
            grads = [(g, v) for g, v in grads if g is not None]
            apply = train_optimizer.apply_gradients(grads, global_step=iterations)
            updates = [u for u in model.updates if u not in before]
            return total, metric_sums, metric_counts, group(apply, *updates), parts

        return step


def _per_sample(metric: Any) -> Any:
    """A metric's per-sample function; accumulating metrics (AUC...) are not available here."""
    from flowmesh.keras import metrics as metrics_lib

    fn = metrics_lib.per_sample(metric)
    if fn is None:
        raise NotImplementedError(f"Metric {metric.name} ({type(metric).__name__}) accumulates over the epoch; "
                                  "flowmesh computes such metrics in fit on one device only (not under a "
                                  "distribution strategy): evaluate it after training, or use a per-sample metric")
    return fn


def _ones_rows(count: Any, weight: Any) -> Any:
    """Ones of shape ``[count, 1, ...]`` (the weight placeholder's rank): multiplied in, the
    default weight gets one row per sample, so it can be split across the replicas."""
    from flowmesh.ops import array_ops

    rank = weight.shape.rank or 1
    return array_ops.fill(array_ops.stack([count] + [1] * (rank - 1)), 1.0)


def _replica_share(fn: Any, target: Any, n: Any, worker_count: int) -> Any:
    """What a replica's loss (its shard's loss, reduced as on one device) is multiplied by
    so that the replicas' sum over all workers, divided by the workers, is tf-keras's loss.

    ``sum_over_batch_size`` (the default): the shard's share of the global batch
    (``rows / n``): the replicas' mean for equal shards (tf-keras's per-replica mean scaled
    by ``1 / replicas``), the global batch's mean without a mask. With a mask, each replica
    divides by its own unmasked count, as tf-keras's ``apply_valid_mask`` does per replica.
    ``sum``: the worker count (each worker's sum adds up to the global sum).
    """
    from flowmesh.ops import array_ops, cast_ops

    if getattr(fn, "reduction", "auto") == "sum":
        return float(worker_count)
    return cast_ops.cast(array_ops.shape(target)[0], dtypes.float32) / n


def _metric_sum(values: Any, mask: Any) -> tuple[Any, Any]:
    """A metric's sum over a replica's shard and how many values it adds up: the unmasked
    elements under a mask, else the samples (each the mean over its trailing axes)."""
    from flowmesh.ops import array_ops, cast_ops
    from flowmesh.ops.reduction_ops import reduce_mean, reduce_sum

    if mask is not None:
        mask = cast_ops.cast(mask, values.dtype)
        return reduce_sum(values * mask), reduce_sum(mask)
    while values.shape.rank is not None and values.shape.rank > 1:
        values = reduce_mean(values, axis=-1)
    return reduce_sum(values), cast_ops.cast(array_ops.shape(values)[0], dtypes.float32)
