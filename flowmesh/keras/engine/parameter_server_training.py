"""``fit`` under ``ParameterServerStrategy`` (TF1's between-graph, asynchronous training).

Each trainer (chief and workers) runs its own ``fit``: it trains on its share of the
NumPy rows (trainer ``r`` of ``W`` takes rows ``r, r+W, r+2W, ...``, so one epoch of the
job passes over the data once; a ``tf.data`` dataset is used as given) with
``batch_size`` rows per step, and applies each step's gradients on the ps tasks at once.
The training graph (optimizer iterations, learning rate, slots) is built in the
strategy's scope, so the optimizer's variables live on the ps tasks too and
``optimizer.iterations`` counts the steps of every trainer. The loss and metrics a
trainer reports are those of its own batches.
"""

from __future__ import annotations

from typing import Any

from flowmesh.keras.engine.compile_utils import TrainingGraph


def is_parameter_server(strategy: Any) -> bool:
    from flowmesh.distribute.parameter_server_strategy import ParameterServerStrategy

    return isinstance(strategy, ParameterServerStrategy)


def trainer_shard(strategy: Any, arrays: list[Any]) -> list[Any]:
    """This trainer's rows of every array (every ``W``-th row from its index)."""
    extended = strategy.extended
    count = len(extended.trainers)
    if count <= 1:
        return arrays
    rank = extended.trainers.index((extended.task_type, extended.task_id))
    return [a[rank::count] if a is not None else None for a in arrays]


class ParameterServerTrainingGraph(TrainingGraph):
    """A :class:`TrainingGraph` whose train op (and the optimizer's variables) is built in
    the strategy's scope, so those variables are placed on the ps tasks."""

    def __init__(self, model: Any, config: Any, target_shapes: list[tuple], strategy: Any):
        with strategy.scope():
            super().__init__(model, config, target_shapes)
        self.strategy = strategy

    def train_op(self) -> Any:
        with self.strategy.scope():
            return super().train_op()
