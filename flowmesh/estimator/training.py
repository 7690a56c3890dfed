"""``tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)``, locally and under
``TF_CONFIG`` with TensorFlow's roles: the chief trains and checkpoints, workers train
(asynchronously through the ps), ps tasks serve, the evaluator evaluates each new
checkpoint and runs the exporters. Every role returns when training is done (see
``_roles.py`` for how the ps and the evaluator learn it).

Example (the same script for every task of ``flowmesh launch --chief --ps 1 --workers 2
--evaluator``):
    >>> est = tf.estimator.DNNClassifier([32], columns, n_classes=10, config=tf.estimator.RunConfig(
    ...     model_dir="/shared/run", save_checkpoints_steps=50))
    >>> tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(train_fn, max_steps=500),
    ...                                 tf.estimator.EvalSpec(eval_fn, steps=None))
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator import _roles
from flowmesh.estimator._evaluation import EvalGraph, write_eval_summaries
from flowmesh.train.basic_session_run_hooks import CheckpointSaverListener

logger = logging.getLogger("flowmesh.estimator")


class TrainSpec(NamedTuple):
    """What to train on: ``input_fn``, until global step ``max_steps`` (None: until the
    input runs out), with extra ``hooks``."""

    input_fn: Callable
    max_steps: int | None = None
    hooks: Any = ()


class EvalSpec(NamedTuple):
    """How to evaluate: ``steps`` batches of ``input_fn`` (None: until it runs out or one
    batch for constant inputs), under ``name``, with ``exporters`` run after each
    evaluation. Locally an evaluation runs at most every ``throttle_secs`` (at a checkpoint
    save) and once at the end; the evaluator task evaluates every new checkpoint, polling
    the model_dir, after ``start_delay_secs``."""

    input_fn: Callable
    steps: int | None = 100
    name: str | None = None
    hooks: Any = ()
    exporters: Any = ()
    start_delay_secs: float = 120
    throttle_secs: float = 600


def _check(estimator: Any, train_spec: Any, eval_spec: Any) -> None:
    from flowmesh.estimator.estimator import Estimator

    if not isinstance(estimator, Estimator):
        raise InvalidArgumentError(f"train_and_evaluate needs a tf.estimator.Estimator, got {type(estimator).__name__}")
    if not isinstance(train_spec, TrainSpec):
        raise InvalidArgumentError(f"train_spec must be a tf.estimator.TrainSpec, got {type(train_spec).__name__}")
    if not isinstance(eval_spec, EvalSpec):
        raise InvalidArgumentError(f"eval_spec must be a tf.estimator.EvalSpec, got {type(eval_spec).__name__}")
    if train_spec.max_steps is not None and train_spec.max_steps <= 0:
        raise InvalidArgumentError(f"TrainSpec.max_steps must be positive, got {train_spec.max_steps}")


def train_and_evaluate(estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec) -> tuple[Any, list]:
    """Trains and evaluates in the role ``estimator.config`` (TF_CONFIG) gives this process.

    Returns:
        ``(last evaluation result, export results)`` for the local run and the evaluator;
        ``(None, [])`` for the chief, workers and ps.
    Raises:
        InvalidArgumentError: bad specs, or an unknown task type.
    """
    _check(estimator, train_spec, eval_spec)
    config = estimator.config
    if config.cluster_spec is None:
        return _Executor(estimator, train_spec, eval_spec).run_local()
    role = config.task_type
    runners = {"chief": _run_trainer, "worker": _run_trainer, "ps": _run_ps, "evaluator": _run_evaluator}
    if role not in runners:
        raise InvalidArgumentError(f"train_and_evaluate: unknown task type {role!r} in TF_CONFIG; use "
                                   "chief, worker, ps or evaluator")
    return runners[role](estimator, train_spec, eval_spec)


def _serves_checkpoints(config: Any) -> bool:
    from flowmesh import config as settings

    return settings.EVAL_CHECKPOINTS.get() == "chief" and "chief" in config.cluster_spec.jobs


def _run_trainer(estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec) -> tuple[Any, list]:
    from flowmesh.estimator._distributed import is_multi_worker

    if is_multi_worker(estimator.config.train_distribute):
        return _run_collective_trainer(estimator, train_spec)
    return _run_ps_trainer(estimator, train_spec)


def _run_collective_trainer(estimator: Any, train_spec: TrainSpec) -> tuple[Any, list]:
    """A worker of ``train_distribute=MultiWorkerMirroredStrategy``: no server (the strategy's
    all-reduce connects the workers), the chief checkpoints and tells the evaluator the end.

    Raises:
        InvalidArgumentError: ps tasks in the cluster, or the evaluator is to read
            checkpoints through the chief (FLOWMESH_EVAL_CHECKPOINTS=chief).
    """
    from flowmesh.estimator._checkpoints import checkpoint_step

    config = estimator.config
    if config.num_ps_replicas:
        raise InvalidArgumentError(
            "train_distribute=MultiWorkerMirroredStrategy trains without parameter servers, but "
            f"TF_CONFIG has {config.num_ps_replicas} ps task(s); remove them (flowmesh launch --ps 0)")
    if _serves_checkpoints(config):
        raise InvalidArgumentError(
            "FLOWMESH_EVAL_CHECKPOINTS=chief needs the chief's server, which "
            "MultiWorkerMirroredStrategy does not start (its all-reduce store holds the chief's "
            "port); give the evaluator the chief's model_dir instead")
    marker = os.path.join(estimator.model_dir, _roles.DONE_MARKER)
    if config.is_chief and os.path.exists(marker):
        os.remove(marker)
    estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps, hooks=list(train_spec.hooks))
    if config.is_chief:
        _roles.write_done_marker(estimator.model_dir, checkpoint_step(estimator.latest_checkpoint()))
    logger.info("%s %d finished training", config.task_type, config.task_id)
    return None, []


def _run_ps_trainer(estimator: Any, train_spec: TrainSpec) -> tuple[Any, list]:
    from flowmesh.estimator._checkpoints import checkpoint_step

    config = estimator.config
    server = _roles.start_server(config)
    publisher = None
    if config.is_chief:
        marker = os.path.join(estimator.model_dir, _roles.DONE_MARKER)
        if os.path.exists(marker):
            os.remove(marker)
        if _serves_checkpoints(config):
            from flowmesh.estimator._remote import PublishCheckpoints

            publisher = PublishCheckpoints(estimator, server.target)
    estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps, hooks=list(train_spec.hooks),
                    saving_listeners=[publisher] if publisher else None)
    if config.is_chief:
        final_step = checkpoint_step(estimator.latest_checkpoint())
        _roles.write_done_marker(estimator.model_dir, final_step)
        if publisher is not None:
            if publisher.state.read()[0] != estimator.latest_checkpoint():
                publisher.after_save(None, final_step or 0)
            publisher.finish(-1 if final_step is None else final_step)
    _roles.report_trainer_done(config, server.target)
    logger.info("%s %d finished training", config.task_type, config.task_id)
    server.stop()
    return None, []


def _run_ps(estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec) -> tuple[Any, list]:
    _roles.run_ps(estimator.config)
    return None, []


def _run_evaluator(estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec) -> tuple[Any, list]:
    executor = _Executor(estimator, train_spec, eval_spec)
    if _serves_checkpoints(estimator.config):
        return executor.run_remote_evaluator()
    return executor.run_evaluator()


class _Executor:
    """Runs evaluations in one kept eval graph and the exporters after each."""

    def __init__(self, estimator: Any, train_spec: TrainSpec, eval_spec: EvalSpec):
        self._estimator = estimator
        self._train_spec = train_spec
        self._eval_spec = eval_spec
        self._graph: EvalGraph | None = None
        self.last_result: Any = None
        self.last_path: str | None = None
        self.exports: list = []

    def evaluate(self, path: str, final: bool) -> dict:
        if self._graph is None:
            self._graph = EvalGraph(self._estimator, self._eval_spec.input_fn, self._eval_spec.hooks)
        result = self._graph.run(path, self._eval_spec.steps)
        write_eval_summaries(self._estimator.model_dir, self._eval_spec.name, result)
        logger.info("Saving dict for global step %s: %s", result.get("global_step"),
                    ", ".join(f"{k} = {v}" for k, v in sorted(result.items())))
        self.last_result, self.last_path = result, path
        self._run_exporters(path, result, final)
        return result

    def run_local(self) -> tuple[Any, list]:
        from flowmesh.estimator._distributed import is_multi_worker

        strategy = self._estimator.config.train_distribute
        if is_multi_worker(strategy) and not strategy.extended.should_checkpoint:
            # a rank > 0 of `flowmesh run`: it trains; worker 0 checkpoints and evaluates
            self._estimator.train(self._train_spec.input_fn, max_steps=self._train_spec.max_steps,
                                  hooks=list(self._train_spec.hooks))
            return None, []
        listener = _EvalListener(self, self._eval_spec.throttle_secs)
        self._estimator.train(self._train_spec.input_fn, max_steps=self._train_spec.max_steps,
                              hooks=list(self._train_spec.hooks), saving_listeners=[listener])
        latest = self._estimator.latest_checkpoint()
        if latest is not None and latest != self.last_path:
            self.evaluate(latest, final=True)
        return self.last_result, self.exports

    def run_evaluator(self) -> tuple[Any, list]:
        started = time.time()
        delay = min(self._eval_spec.start_delay_secs, 1.0)
        time.sleep(max(0.0, delay))
        max_steps = self._train_spec.max_steps
        while True:
            path = self._estimator.latest_checkpoint()
            final_step = _roles.read_done_marker(self._estimator.model_dir, started)
            if path is not None and path != self.last_path:
                step = _step_of(path)
                done = (max_steps is not None and step >= max_steps) or \
                    (final_step is not None and step >= final_step)
                result = self.evaluate(path, final=done)
                if done or (max_steps is not None and int(result.get("global_step", 0)) >= max_steps):
                    break
            elif final_step is not None and (path is None or _step_of(path) >= final_step):
                break
            time.sleep(_roles.POLL_SECS)
        logger.info("evaluator: training is done; exiting after global step %s",
                    None if self.last_result is None else self.last_result.get("global_step"))
        return self.last_result, self.exports


    def run_remote_evaluator(self) -> tuple[Any, list]:
        """Evaluates each checkpoint the chief publishes, read through the chief's server,
        until the one the chief names final; the exporters get those values as a checkpoint
        written on the evaluator's disk."""
        from flowmesh.estimator._remote import WAIT_S, RemoteCheckpoints

        config = self._estimator.config
        self._graph = EvalGraph(self._estimator, self._eval_spec.input_fn, self._eval_spec.hooks)
        target = "grpc://" + config.cluster_spec.task_address("chief", 0)
        remote = RemoteCheckpoints(target, self._graph.variables, config.session_config)
        silent_since = time.monotonic()
        while time.monotonic() - silent_since < WAIT_S:
            polled = remote.poll()
            if polled is None:
                time.sleep(_roles.POLL_SECS)
                continue
            silent_since = time.monotonic()
            path, final = polled
            if path and path != self.last_path:
                step = _step_of(path)
                done = final >= 0 and step >= final   # the chief waits for this very step
                self._evaluate_values(path, remote.values(path), done)
                remote.report(step)
                if done:
                    remote.finish(step)
                    break
            elif final >= 0 and self.last_path and _step_of(self.last_path) >= final:
                # evaluated before the chief named it final: that evaluation was the final
                # one, so the exporters run again for it, told so (a FinalExporter exports)
                if self._eval_spec.exporters and self.last_result is not None:
                    self._export_values(remote.values(self.last_path), self.last_result, True)
                remote.finish(_step_of(self.last_path))
                break
            time.sleep(_roles.POLL_SECS)
        return self.last_result, self.exports

    def _evaluate_values(self, path: str, values: dict, final: bool) -> None:
        assert self._graph is not None
        result = self._graph.run(None, self._eval_spec.steps, values=values)
        write_eval_summaries(self._estimator.model_dir, self._eval_spec.name, result)
        logger.info("Saving dict for global step %s (checkpoint %s read through the chief): %s",
                    result.get("global_step"), path,
                    ", ".join(f"{k} = {v}" for k, v in sorted(result.items())))
        self.last_result, self.last_path = result, path
        if self._eval_spec.exporters:
            self._export_values(values, result, final)

    def _export_values(self, values: dict, result: dict, final: bool) -> None:
        """Runs the exporters on the values read through the chief, written as a checkpoint
        in a temporary directory of the evaluator (removed afterwards); the exports land in
        the evaluator's ``model_dir/export/<name>``."""
        import shutil
        import tempfile

        from flowmesh.estimator._remote import write_local_checkpoint

        assert self._graph is not None
        local = tempfile.mkdtemp(prefix="flowmesh_eval_ckpt_")
        try:
            path = write_local_checkpoint(local, self._graph.variables, values, int(result["global_step"]))
            self._run_exporters(path, result, final)
        finally:
            shutil.rmtree(local, ignore_errors=True)

    def _run_exporters(self, path: str, result: dict, final: bool) -> None:
        for exporter in self._eval_spec.exporters or ():
            base = os.path.join(self._estimator.model_dir, "export", exporter.name)
            self.exports.append(exporter.export(self._estimator, base, path, result, final))


def _step_of(path: str) -> int:
    try:
        return int(path.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1


class _EvalListener(CheckpointSaverListener):
    """Local mode: evaluate after a checkpoint save when ``throttle_secs`` have passed."""

    def __init__(self, executor: _Executor, throttle_secs: float):
        self._executor = executor
        self._throttle = throttle_secs
        self._last = 0.0

    def after_save(self, session: Any, global_step_value: int) -> None:
        if global_step_value == 0 or time.monotonic() - self._last < self._throttle:
            return None
        latest = self._executor._estimator.latest_checkpoint()
        if latest is not None and latest != self._executor.last_path:
            self._last = time.monotonic()
            max_steps = self._executor._train_spec.max_steps
            self._executor.evaluate(latest, final=max_steps is not None and global_step_value >= max_steps)
        return None
