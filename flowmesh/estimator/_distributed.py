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

``RunConfig(train_distribute=tf.distribute.MultiWorkerMirroredStrategy())``: between-graph
synchronous training, one replica per worker process (the ``chief`` and ``worker`` tasks of
``TF_CONFIG``, or the ranks of ``flowmesh run``). Every worker calls ``input_fn`` (with an
``input_context`` naming its pipeline, when it takes one: shard by it), builds the same
graph and runs it in a local session; the gradients are averaged over the workers by the
strategy's all-reduce at every step, so the workers stay equal. Every worker initializes
(the initial values are broadcast from worker 0); worker 0 (the chief) then restores the
latest checkpoint of ``model_dir`` (or warm-starts) and every worker takes worker 0's
values, so the other workers need no access to ``model_dir``. Only worker 0 writes
checkpoints and summaries.
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
        UnimplementedError: a strategy other than ``MirroredStrategy`` and
            ``MultiWorkerMirroredStrategy``.
    """
    from flowmesh.distribute import distribute_lib
    from flowmesh.distribute.collective_all_reduce_strategy import MultiWorkerMirroredStrategy
    from flowmesh.distribute.mirrored_strategy import MirroredStrategy

    if not isinstance(strategy, distribute_lib.Strategy):
        raise InvalidArgumentError(
            f"RunConfig(train_distribute=...) must be a tf.distribute strategy such as "
            f"tf.distribute.MirroredStrategy(devices), got {type(strategy).__name__}")
    if not isinstance(strategy, (MirroredStrategy, MultiWorkerMirroredStrategy)):
        raise UnimplementedError(None, None, (
            f"RunConfig(train_distribute={type(strategy).__name__}) is not supported by "
            "flowmesh's Estimator yet (only MirroredStrategy and MultiWorkerMirroredStrategy); "
            "train between-graph through ps tasks (TF_CONFIG, train_and_evaluate) instead"))
    return strategy


def is_multi_worker(strategy: Any) -> bool:
    """True for a strategy whose replicas are other processes (MultiWorkerMirroredStrategy)."""
    return strategy is not None and bool(strategy.extended.experimental_between_graph)


def input_context(strategy: Any) -> Any:
    """The ``tf.distribute.InputContext`` of this process's input pipeline."""
    from flowmesh.distribute.input_context import InputContext

    if is_multi_worker(strategy):
        info = strategy.extended.info
        return InputContext(info.size, info.rank, strategy.num_replicas_in_sync)
    return InputContext(1, 0, strategy.num_replicas_in_sync)


def train_spec(estimator: Any, input_fn: Any, strategy: Any) -> tuple[EstimatorSpec, Any]:
    """Builds the replicated TRAIN graph; returns one combined spec (mean loss, grouped
    train ops, the first replica's hooks and scaffold) and the global step."""
    from flowmesh.distribute import PerReplica, ReduceOp
    from flowmesh.ops.control_flow_ops import group

    replicas = len(strategy.extended.local_replica_ids())
    inputs = _inputs.call_input_fn_per_replica(input_fn, estimator.config, estimator.params, replicas,
                                               input_context(strategy))
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


def worker_init_fn(strategy: Any, model_dir: str, saver: Any, warm_start: Any) -> Any:
    """A Scaffold ``init_fn`` for every worker of a multi-worker strategy: worker 0 restores
    the latest checkpoint of ``model_dir`` (or warm-starts), then every worker takes worker
    0's values (a collective broadcast, so every worker must run it)."""
    from flowmesh.train import latest_checkpoint

    sync = strategy.extended.sync_op()
    chief = strategy.extended.should_checkpoint

    def init_fn(scaffold: Any, session: Any) -> None:
        if chief:
            path = latest_checkpoint(model_dir)
            if path is not None:
                saver.restore(session, path)
            elif warm_start is not None:
                warm_start(scaffold, session)
        session.run(sync)

    return init_fn


def worker_session(strategy: Any, model_dir: str, config: Any, scaffold: Any, hooks: list,
                   chief_hooks: list, listeners: Any, session_config: Any) -> Any:
    """The MonitoredSession of one worker of a multi-worker strategy: a local session that
    always initializes (``scaffold``'s init_fn restores, see :func:`worker_init_fn`); the
    chief (worker 0) also saves checkpoints and summaries into ``model_dir``."""
    from flowmesh.train import basic_session_run_hooks as hooks_lib
    from flowmesh.train.monitored_session import MonitoredSession
    from flowmesh.train.scaffold import ChiefSessionCreator

    all_hooks = list(hooks)
    if strategy.extended.should_checkpoint:
        all_hooks = list(chief_hooks) + all_hooks
        if config.log_step_count_steps:
            all_hooks.append(hooks_lib.StepCounterHook(output_dir=model_dir,
                                                       every_n_steps=config.log_step_count_steps))
        if config.save_summary_steps:
            all_hooks.append(hooks_lib.SummarySaverHook(scaffold=scaffold, output_dir=model_dir,
                                                        save_steps=config.save_summary_steps))
        all_hooks.append(hooks_lib.CheckpointSaverHook(
            model_dir, save_secs=config.save_checkpoints_secs, save_steps=config.save_checkpoints_steps,
            scaffold=scaffold, listeners=list(listeners or [])))
    creator = ChiefSessionCreator(scaffold=scaffold, config=session_config)
    return MonitoredSession(session_creator=creator, hooks=all_hooks)
