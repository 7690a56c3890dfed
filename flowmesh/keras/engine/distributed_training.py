"""``fit`` under ``tf.distribute.MirroredStrategy``: one training step over the global batch
split across the strategy's replicas, as TensorFlow's Keras does.

The fed global batch of ``n`` samples is cut into one contiguous shard per local replica
(shard ``i`` is rows ``n*i//R .. n*(i+1)//R``). ``strategy.run`` calls the model on each
shard on the replica's device (a model built in ``strategy.scope()`` has mirrored
weights). Each replica's loss is its shard's ``sum(loss * sample_weight) / n`` (the
global batch size), scaled by ``R`` because the strategy *averages* the replicas'
gradients, plus the regularization losses; the optimizer's ``apply_gradients`` all-reduces
the gradients, so every replica applies the gradient of the global batch's loss and the
weights stay equal. The loss and metrics shown are sums over replicas divided by ``n``.
Evaluation and prediction use the first replica's weights (all replicas hold the same).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.keras import losses as losses_lib
from flowmesh.keras.engine.compile_utils import CompileConfig, TrainingGraph
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
        from flowmesh.ops import math_ops
        from flowmesh.ops.gather_ops import gather

        bounds = [math_ops.floordiv(count * i, replicas) for i in range(replicas + 1)]
        return [[gather(t, math_ops.range(bounds[i], bounds[i + 1])) for t in tensors] for i in range(replicas)]

    def _build(self) -> list[Any]:
        from flowmesh.distribute import PerReplica, ReduceOp
        from flowmesh.ops import array_ops, math_ops
        from flowmesh.ops.control_flow_ops import group

        replicas = local_replicas(self.strategy)
        count = array_ops.shape(self.inputs[0])[0]
        n = math_ops.cast(count, dtypes.float32)
        weights = [w * array_ops.fill(array_ops.stack([count]), 1.0) for w in self.sample_weights]
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
            metrics = [self.strategy.reduce(ReduceOp.SUM, value) / n * scale for value in results[1]]
        train_ops = self.strategy.experimental_local_results(results[2])
        regularization = self.model.losses
        if regularization:
            loss = math_ops.add_n([loss] + list(regularization))
        return [group(*train_ops, name="distributed_train_step"), loss] + metrics

    def _replica_step(self, train_optimizer: Any, iterations: Any, n: Any, replicas: int) -> Any:
        from flowmesh.ops import math_ops
        from flowmesh.ops.control_flow_ops import group
        from flowmesh.ops.reduction_ops import reduce_mean, reduce_sum

        model, config = self.model, self.config

        def step(xs: list[Any], ys: list[Any], ws: list[Any]) -> tuple[Any, list[Any], Any]:
            before = list(model.updates)
            outputs = nest.flatten(model(xs[0] if len(xs) == 1 else xs, training=True))
            total, metric_sums = None, []
            for i, (out, y, w, fn) in enumerate(zip(outputs, ys, ws, config.loss_fns)):
                _refuse_masked(model, out)
                per_sample = fn.call(y, out) if isinstance(fn, losses_lib.Loss) else fn(y, out)
                while per_sample.shape.rank is not None and per_sample.shape.rank > 1:
                    per_sample = reduce_mean(per_sample, axis=-1)
                part = reduce_sum(per_sample * w) / n * config.loss_weights[i]
                total = part if total is None else total + part
                for _, metric in config.metric_specs[i]:
                    values = math_ops.cast(metric(y, out), dtypes.float32)
                    while values.shape.rank is not None and values.shape.rank > 1:
                        values = reduce_mean(values, axis=-1)
                    metric_sums.append(reduce_sum(values))
            objective = total * float(replicas)
            if model.losses:
                objective = math_ops.add_n([objective] + list(model.losses))
            grads = train_optimizer.compute_gradients(objective, var_list=model.trainable_weights)
            grads = [(g, v) for g, v in grads if g is not None]
            apply = train_optimizer.apply_gradients(grads, global_step=iterations)
            updates = [u for u in model.updates if u not in before]
            return total, metric_sums, group(apply, *updates)

        return step


def _refuse_masked(model: Any, output: Any) -> None:
    """Masked losses are not split across replicas yet: say so instead of ignoring the mask."""
    from flowmesh.keras.engine.keras_mask import get_mask

    if get_mask(output) is not None:
        raise NotImplementedError(
            f"Model {model.name}: fit under a distribution strategy does not support masked "
            "outputs (Masking / Embedding(mask_zero=True) reaching the output) yet; train without "
            "the strategy, or end the model with a layer that drops the mask (e.g. an RNN "
            "without return_sequences).")
