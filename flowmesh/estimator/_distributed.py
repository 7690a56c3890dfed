"""``RunConfig(train_distribute=tf.distribute.MirroredStrategy(devices))``: in-graph
synchronous training of an Estimator's ``model_fn`` on several local devices.

As TensorFlow 1.x's Estimator: ``input_fn`` is called once; when it returns a dataset,
every replica takes its own next batch from one iterator, so the dataset's batch is the
*per-replica* batch and one step consumes ``replicas`` batches (the global batch).
Tensors returned directly (not a dataset) go to every replica unchanged. The global step
and the model's variables are created in ``strategy.scope()`` (mirrored: one component
per device); ``model_fn`` is called once per replica through ``strategy.run``; each
replica's ``train_op`` applies the replicas' gradients averaged by the strategy's
collective all-reduce (``Optimizer.apply_gradients`` does it under ``strategy.run``), so
one step is one update with the mean gradient and the global step advances by one. The
reported loss is the mean of the replicas' losses. Checkpoints hold the first
component under the usual names (the same files as without a strategy); after a restore
the other components are copied from it before the first step.
"""

from __future__ import annotations

from typing import Any

from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.estimator import _inputs
from flowmesh.estimator.estimator_spec import EstimatorSpec, validate_spec
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.train.session_run_hook import SessionRunHook
from flowmesh.train.training_util import get_or_create_global_step


def check_strategy(strategy: Any) -> Any:
    """Returns ``strategy`` if the Estimator can train under it.

    Raises:
        InvalidArgumentError: not a ``tf.distribute`` strategy.
        UnimplementedError: a strategy other than ``MirroredStrategy``.
    """
    from flowmesh.distribute import distribute_lib
    from flowmesh.distribute.mirrored_strategy import MirroredStrategy

    if not isinstance(strategy, distribute_lib.Strategy):
        raise InvalidArgumentError(
            f"RunConfig(train_distribute=...) must be a tf.distribute strategy such as "
            f"tf.distribute.MirroredStrategy(devices), got {type(strategy).__name__}")
    if not isinstance(strategy, MirroredStrategy):
        raise UnimplementedError(None, None, (
            f"RunConfig(train_distribute={type(strategy).__name__}) is not supported by "
            "flowmesh's Estimator yet (only MirroredStrategy); train between-graph through ps "
            "tasks (TF_CONFIG, train_and_evaluate) instead"))
    return strategy


def train_spec(estimator: Any, input_fn: Any, strategy: Any) -> tuple[EstimatorSpec, Any]:
    """Builds the replicated TRAIN graph; returns one combined spec (mean loss, grouped
    train ops, the first replica's hooks and scaffold) and the global step."""
    from flowmesh.distribute import PerReplica, ReduceOp
    from flowmesh.ops.control_flow_ops import group

    replicas = len(strategy.extended.local_replica_ids())
    inputs = _inputs.call_input_fn_per_replica(input_fn, estimator.config, estimator.params, replicas)
    features = PerReplica([f for f, _ in inputs])
    labels = PerReplica([label for _, label in inputs])

    def replica_fn(replica_features: Any, replica_labels: Any) -> EstimatorSpec:
        return validate_spec(estimator._call_model_fn(replica_features, replica_labels, ModeKeys.TRAIN),
                             ModeKeys.TRAIN)

    with strategy.scope():
        global_step = get_or_create_global_step()
    # run() enters the scope itself (entering it twice would stack its variable creator twice)
    specs = strategy.experimental_local_results(strategy.run(replica_fn, args=(features, labels)))
    loss = strategy.reduce(ReduceOp.MEAN, PerReplica([s.loss for s in specs]))
    train_op = group(*[s.train_op for s in specs], name="distributed_train_op")
    return specs[0]._replace(loss=loss, train_op=train_op), global_step


def session_config(strategy: Any, base: Any) -> Any:
    """``base`` (the RunConfig's session_config) with enough logical CPU devices for the
    strategy's CPU replicas."""
    from flowmesh.core.device_spec import DeviceSpec
    from flowmesh.runtime.options import ConfigProto

    need = 1
    for device in strategy.extended.worker_devices:
        spec = DeviceSpec.from_string(device)
        if (spec.device_type or "").upper() == "CPU" and spec.device_index is not None:
            need = max(need, int(spec.device_index) + 1)
    if need <= 1:
        return base
    if base is None:
        return ConfigProto(device_count={"CPU": need})
    counts = dict(base.device_count or {})
    if counts.get("CPU", 1) < need:
        raise InvalidArgumentError(
            f"RunConfig.session_config has device_count CPU={counts.get('CPU', 1)} but "
            f"train_distribute uses {list(strategy.extended.worker_devices)}; set "
            f"device_count={{'CPU': {need}}}")
    return base


class SyncReplicasHook(SessionRunHook):
    """Copies each mirrored variable's first component (what a checkpoint restores) into
    the other replicas' components once the session exists."""

    def __init__(self, strategy: Any):
        self._sync = strategy.extended.sync_op()

    def after_create_session(self, session: Any, coord: Any) -> None:
        session.run(self._sync)
