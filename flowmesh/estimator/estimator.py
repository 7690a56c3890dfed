"""``tf.estimator.Estimator``: train, evaluate and predict a ``model_fn`` with checkpoints
in ``model_dir`` (``model.ckpt-N``), locally or as one task of a ``TF_CONFIG`` cluster.

Example:
    >>> def model_fn(features, labels, mode):
    ...     logits = tf.layers.dense(features["x"], 3)
    ...     loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    ...     train_op = tf.train.AdamOptimizer().minimize(
    ...         loss, global_step=tf.train.get_global_step())
    ...     return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    >>> est = tf.estimator.Estimator(model_fn, model_dir="/tmp/run")
    >>> est.train(input_fn, max_steps=1000).evaluate(eval_input_fn)
"""

from __future__ import annotations

import copy
import logging
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from flowmesh.core.graph import Graph
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator import _distributed, _inputs
from flowmesh.estimator._checkpoints import check_compatible, checkpoint_step, warm_start_fn
from flowmesh.estimator._evaluation import EvalGraph, write_eval_summaries
from flowmesh.estimator.estimator_spec import validate_spec
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.estimator.run_config import RunConfig
from flowmesh.ops.random_ops import set_random_seed
from flowmesh.train import basic_session_run_hooks as hooks_lib
from flowmesh.train.device_setter import replica_device_setter
from flowmesh.train.monitored_session import MonitoredSession, MonitoredTrainingSession
from flowmesh.train.saver import Saver
from flowmesh.train.scaffold import ChiefSessionCreator, Scaffold
from flowmesh.train.training_util import get_or_create_global_step

logger = logging.getLogger("flowmesh.estimator")


class Estimator:
    """Trains and evaluates the model a ``model_fn`` builds.

    Args:
        model_fn: ``model_fn(features, labels, mode, params, config) -> EstimatorSpec``
            (any subset of the arguments after ``features``).
        model_dir: checkpoints and summaries (default: ``config.model_dir`` or a temp dir).
        config: a :class:`RunConfig`.
        params: a dict passed to ``model_fn`` (and ``input_fn`` if it takes ``params``).
        warm_start_from: a checkpoint path or directory whose trainable variables
            initialize the model when ``model_dir`` has no checkpoint yet.
    """

    def __init__(self, model_fn: Callable, model_dir: str | None = None,
                 config: RunConfig | None = None, params: dict | None = None,
                 warm_start_from: str | None = None):
        _inputs.check_model_fn(model_fn)
        config = config or RunConfig()
        if not isinstance(config, RunConfig):
            raise InvalidArgumentError(f"config must be a tf.estimator.RunConfig, got {type(config).__name__}")
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise InvalidArgumentError(f"model_dir {model_dir!r} differs from config.model_dir "
                                       f"{config.model_dir!r}; give one of them")
        model_dir = model_dir or config.model_dir or tempfile.mkdtemp(prefix="flowmesh_estimator_")
        if config.model_dir != model_dir:
            config = config.replace(model_dir=model_dir)
        self._model_fn = model_fn
        self._config = config
        self._params = dict(params or {})
        self._warm_start_from = warm_start_from

    @property
    def model_dir(self) -> str:
        return self._config.model_dir

    @property
    def config(self) -> RunConfig:
        return self._config

    @property
    def params(self) -> dict:
        return copy.deepcopy(self._params)

    @property
    def model_fn(self) -> Callable:
        return self._model_fn

    def _call_model_fn(self, features: Any, labels: Any, mode: str) -> Any:
        return _inputs.call_model_fn(self._model_fn, features, labels, mode, self._config,
                                     self.params)

    # --- checkpoints ------------------------------------------------------------------------
    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint prefix in ``model_dir`` (``.../model.ckpt-N``), or None."""
        from flowmesh.train import latest_checkpoint

        return latest_checkpoint(self.model_dir)

    def _require_checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if path is None:
            raise InvalidArgumentError(f"no checkpoint in model_dir {self.model_dir!r}; train first")
        return path

    def get_variable_names(self) -> list[str]:
        """The names of the variables in the latest checkpoint."""
        from flowmesh.train import list_variables

        return [name for name, _ in list_variables(self._require_checkpoint())]

    def get_variable_value(self, name: str) -> np.ndarray:
        """The value of variable ``name`` in the latest checkpoint."""
        from flowmesh.train import load_variable

        return load_variable(self._require_checkpoint(), name)

    # --- training ---------------------------------------------------------------------------
    def train(self, input_fn: Callable, hooks: Any = None, steps: int | None = None,
              max_steps: int | None = None, saving_listeners: Any = None) -> Estimator:
        """Trains for ``steps`` more steps or until global step ``max_steps`` (or until the
        input runs out). Resumes from the latest checkpoint in ``model_dir``.

        Raises:
            InvalidArgumentError: both ``steps`` and ``max_steps``; a ``model_fn`` without
                ``train_op``; a ``model_dir`` checkpoint with incompatible variables.
        """
        if steps is not None and max_steps is not None:
            raise InvalidArgumentError("train: give steps or max_steps, not both")
        if self._config.train_distribute is not None:
            _distributed.check_strategy(self._config.train_distribute)
        for name, value in (("steps", steps), ("max_steps", max_steps)):
            if value is not None and value <= 0:
                raise InvalidArgumentError(f"train: {name} must be positive, got {value}")
        if max_steps is not None:
            done = checkpoint_step(self.latest_checkpoint())
            if done is not None and done >= max_steps:
                logger.info("Skipping training since max_steps has already saved.")
                return self
        with Graph().as_default() as graph:
            loss = self._train_graph(graph, input_fn, hooks, steps, max_steps, saving_listeners)
        logger.info("Loss for final step: %s.", loss)
        return self

    def _device_fn(self) -> Any:
        config = self._config
        if config.cluster_spec is None or config.num_ps_replicas == 0 or config.task_type == "evaluator":
            return None
        return replica_device_setter(ps_tasks=config.num_ps_replicas, cluster=config.cluster_spec,
                                     worker_device=f"/job:{config.task_type}/task:{config.task_id}")

    def _train_graph(self, graph: Graph, input_fn: Callable, hooks: Any, steps: int | None,
                     max_steps: int | None, saving_listeners: Any) -> Any:
        config = self._config
        with graph.device(self._device_fn()):
            if config.tf_random_seed is not None:
                set_random_seed(config.tf_random_seed)
            spec, global_step = self._train_spec(input_fn)
        check_compatible(self.latest_checkpoint(), graph, self.model_dir)
        strategy = config.train_distribute
        multi_worker = _distributed.is_multi_worker(strategy)
        scaffold = self._train_scaffold(spec, strategy if multi_worker else None)
        all_hooks = [hooks_lib.NanTensorHook(spec.loss)]
        session_config = config.session_config
        if strategy is not None:
            session_config = _distributed.session_config(strategy, session_config)
            if not multi_worker:
                all_hooks.append(_distributed.SyncReplicasHook(strategy))
        if config.log_step_count_steps:
            all_hooks.append(hooks_lib.LoggingTensorHook({"loss": spec.loss, "step": global_step},
                                                         every_n_iter=config.log_step_count_steps))
        if steps is not None or max_steps is not None:
            all_hooks.append(hooks_lib.StopAtStepHook(num_steps=steps, last_step=max_steps))
        all_hooks += list(hooks or []) + list(spec.training_hooks or [])
        chief_hooks = list(spec.training_chief_hooks or [])
        if saving_listeners and not multi_worker:
            chief_hooks.append(hooks_lib.CheckpointSaverHook(
                self.model_dir, save_secs=config.save_checkpoints_secs,
                save_steps=config.save_checkpoints_steps, scaffold=scaffold,
                listeners=list(saving_listeners)))
        once = not _inputs.is_exhaustible([spec.train_op]) and steps is None and max_steps is None
        if once:
            all_hooks.append(hooks_lib.StopAtStepHook(num_steps=1))
        if multi_worker:
            session = _distributed.worker_session(strategy, self.model_dir, config, scaffold, all_hooks,
                                                  chief_hooks, saving_listeners, session_config)
        else:
            session = self._training_session(scaffold, all_hooks, chief_hooks, saving_listeners,
                                             session_config)
        loss = None
        with session as sess:
            while not sess.should_stop():
                _, loss = sess.run([spec.train_op, spec.loss])
        return loss

    def _training_session(self, scaffold: Scaffold, hooks: list, chief_hooks: list, saving_listeners: Any,
                          session_config: Any) -> Any:
        config = self._config
        return MonitoredTrainingSession(
                master=config.master, is_chief=config.is_chief, checkpoint_dir=self.model_dir,
                scaffold=scaffold, hooks=hooks, chief_only_hooks=chief_hooks,
                save_checkpoint_secs=None if saving_listeners else config.save_checkpoints_secs,
                save_checkpoint_steps=None if saving_listeners else config.save_checkpoints_steps,
                save_summaries_steps=config.save_summary_steps or None, config=session_config,
                log_step_count_steps=config.log_step_count_steps or None)

    def _train_spec(self, input_fn: Callable) -> tuple[Any, Any]:
        """The TRAIN spec and global step (replicated under ``train_distribute``)."""
        if self._config.train_distribute is not None:
            return _distributed.train_spec(self, input_fn, self._config.train_distribute)
        global_step = get_or_create_global_step()
        features, labels = _inputs.call_input_fn(input_fn, ModeKeys.TRAIN, self._config, self.params, [])
        spec = validate_spec(self._call_model_fn(features, labels, ModeKeys.TRAIN), ModeKeys.TRAIN)
        return spec, global_step

    def _train_scaffold(self, spec: Any, multi_worker: Any = None) -> Scaffold:
        """The training Scaffold: the model's, with a sharded Saver and warm starting (and,
        for a multi-worker strategy, worker 0's restore shared with every worker)."""
        config = self._config
        scaffold = spec.scaffold or Scaffold()
        init_fn = None
        if self._warm_start_from and self.latest_checkpoint() is None:
            init_fn = warm_start_fn(self._warm_start_from)
        saver = scaffold.saver if scaffold.saver is not None else Saver(
            sharded=True, max_to_keep=config.keep_checkpoint_max,
            keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours)
        if multi_worker is not None:
            init_fn = _distributed.worker_init_fn(multi_worker, self.model_dir, saver, init_fn)
        return Scaffold(copy_from_scaffold=scaffold, saver=saver, init_fn=init_fn)

    # --- evaluation and prediction ----------------------------------------------------------
    def evaluate(self, input_fn: Callable, steps: int | None = None, hooks: Any = None,
                 checkpoint_path: str | None = None, name: str | None = None) -> dict[str, Any]:
        """Evaluates the latest (or given) checkpoint on ``input_fn``'s data.

        Returns:
            ``{'loss': ..., <eval_metric_ops keys>..., 'global_step': N}``; the values are
            also written as summaries under ``model_dir/eval`` (``eval_<name>``).
        """
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            logger.info("Could not find trained model in model_dir: %s, running initialization "
                        "to evaluate.", self.model_dir)
        results = EvalGraph(self, input_fn, hooks).run(checkpoint_path, steps)
        write_eval_summaries(self.model_dir, name, results)
        return results

    def predict(self, input_fn: Callable, predict_keys: Any = None, hooks: Any = None,
                checkpoint_path: str | None = None,
                yield_single_examples: bool = True) -> Iterator[Any]:
        """Yields predictions (one per example, or per batch) of the latest checkpoint.

        Raises:
            InvalidArgumentError: a ``predict_keys`` entry the model does not predict.
        """
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        with Graph().as_default() as graph:
            if self._config.tf_random_seed is not None:
                set_random_seed(self._config.tf_random_seed)
            get_or_create_global_step()
            init_ops: list = []
            features, _ = _inputs.call_input_fn(input_fn, ModeKeys.PREDICT, self._config,
                                                self.params, init_ops)
            spec = validate_spec(self._call_model_fn(features, None, ModeKeys.PREDICT), ModeKeys.PREDICT)
            predictions = _select(spec.predictions, predict_keys)
            once = not _inputs.is_exhaustible(predictions)
            scaffold = spec.scaffold or Scaffold()
            creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_filename_with_path=checkpoint_path,
                                          config=self._config.session_config)
            all_hooks = list(hooks or []) + list(spec.prediction_hooks or [])
            with MonitoredSession(session_creator=creator, hooks=all_hooks) as sess:
                for op in init_ops:
                    sess.run(op)
                while not sess.should_stop():
                    batch = sess.run(predictions)
                    yield from (_unbatch(batch) if yield_single_examples else [batch])
                    if once:
                        break
            del graph


    def export_saved_model(self, export_dir_base: str, serving_input_receiver_fn: Callable,
                           assets_extra: Any = None, as_text: bool = False,
                           checkpoint_path: str | None = None) -> bytes:
        """Writes the PREDICT graph of the latest (or given) checkpoint as a SavedModel in
        ``export_dir_base/<timestamp>`` (tag ``serve``); returns that directory (bytes).
        ``assets_extra`` (``{relative destination: source file}``) is copied into
        ``assets.extra/``.

        Raises:
            InvalidArgumentError: no checkpoint to export.
        """
        from flowmesh.estimator._export import export_saved_model

        path = checkpoint_path or self._require_checkpoint()
        return export_saved_model(self, export_dir_base, serving_input_receiver_fn, path, as_text,
                                  assets_extra)

    export_savedmodel = export_saved_model


def _select(predictions: Any, keys: Any) -> Any:
    if keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise InvalidArgumentError("predict_keys given but model_fn's predictions are not a dict")
    keys = [keys] if isinstance(keys, str) else list(keys)
    missing = [k for k in keys if k not in predictions]
    if missing:
        raise InvalidArgumentError(f"predict_keys {missing} are not among the predictions "
                                   f"{sorted(predictions)}")
    return {k: predictions[k] for k in keys}


def _unbatch(batch: Any) -> Iterator[Any]:
    if not isinstance(batch, dict):
        yield from batch
        return
    sizes = {k: len(v) for k, v in batch.items() if np.ndim(v) > 0}
    if len(set(sizes.values())) > 1:
        raise InvalidArgumentError(f"predictions have different batch sizes {sizes}; use "
                                   "yield_single_examples=False")
    for i in range(next(iter(sizes.values()), 0)):
        yield {k: v[i] for k, v in batch.items()}
