"""One evaluation graph, run against any number of checkpoints.

``Estimator.evaluate`` builds one per call; the ``evaluator`` role of
``train_and_evaluate`` keeps one for the whole job and only restores each new checkpoint
into a fresh session (the graph, its metric ops and the restore ops are built once).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import Graph, GraphKeys, get_collection
from flowmesh.estimator import _inputs
from flowmesh.estimator.estimator_spec import validate_spec
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.metrics import mean as metrics_mean
from flowmesh.ops import control_flow_ops
from flowmesh.ops.random_ops import set_random_seed
from flowmesh.protos.summary import Summary
from flowmesh.summary.writer import FileWriterCache
from flowmesh.train import basic_session_run_hooks as hooks_lib
from flowmesh.train.monitored_session import MonitoredSession
from flowmesh.train.scaffold import ChiefSessionCreator, Scaffold
from flowmesh.train.session_run_hook import SessionRunHook
from flowmesh.train.training_util import get_or_create_global_step

logger = logging.getLogger("flowmesh.estimator")


class _StopAfterNEvalsHook(SessionRunHook):
    """Stops after ``num_evals`` update steps."""

    def __init__(self, num_evals: int):
        self._num_evals = num_evals
        self._done = 0

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._done = 0

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self._done += 1
        if self._done >= self._num_evals:
            run_context.request_stop()


class EvalGraph:
    """The EVAL-mode graph of an Estimator: metrics (``loss`` first), their update op and
    ``global_step``; :meth:`run` evaluates one checkpoint."""

    def __init__(self, estimator: Any, input_fn: Callable, hooks: Any = None):
        self._estimator = estimator
        self.graph = Graph()
        self._init_ops: list = []
        with self.graph.as_default():
            config = estimator.config
            if config.tf_random_seed is not None:
                set_random_seed(config.tf_random_seed)
            spec, self._values, self._update, global_step = self._build(input_fn)
            self._values["global_step"] = global_step
            self._once = not _inputs.is_exhaustible([self._update])
            local_init = control_flow_ops.group(
                *(self._init_ops + [op for op in _local_init_ops()]))
            self._scaffold = Scaffold(copy_from_scaffold=spec.scaffold, local_init_op=local_init) \
                if spec.scaffold is not None else Scaffold(local_init_op=local_init)
            self._hooks = list(spec.evaluation_hooks or ()) + list(hooks or ())
            self._session_config = config.session_config
            if config.eval_distribute is not None:
                from flowmesh.estimator._distributed import session_config

                self._session_config = session_config(config.eval_distribute, config.session_config)
            self.variables = self.graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
            self._scaffold.finalize()

    def _build(self, input_fn: Callable) -> tuple[Any, dict, Any, Any]:
        """``(spec, metric values, update op, global step)`` of the EVAL graph, replicated
        under ``RunConfig.eval_distribute`` (``_distributed_eval.py``)."""
        estimator = self._estimator
        config = estimator.config
        if config.eval_distribute is not None:
            from flowmesh.estimator import _distributed_eval

            built = _distributed_eval.build(estimator, input_fn, config.eval_distribute, self._init_ops)
            return built.spec, dict(built.values), built.update, built.global_step
        global_step = get_or_create_global_step()
        features, labels = _inputs.call_input_fn(input_fn, ModeKeys.EVAL, config, estimator.params,
                                                 self._init_ops)
        spec = validate_spec(estimator._call_model_fn(features, labels, ModeKeys.EVAL), ModeKeys.EVAL)
        metrics = {"loss": metrics_mean(spec.loss)}
        metrics.update(spec.eval_metric_ops or {})
        values = {name: pair[0] for name, pair in metrics.items()}
        return spec, values, control_flow_ops.group(*[pair[1] for pair in metrics.values()]), global_step

    def _scaffold_for(self, values: dict | None) -> Scaffold:
        if values is None:
            return self._scaffold

        def load(scaffold: Any, session: Any) -> None:
            for var in self.variables:
                var.load(values[var.op.name], session)
        return Scaffold(copy_from_scaffold=self._scaffold, init_fn=load)

    def run(self, checkpoint_path: str | None, steps: int | None = None,
            values: dict | None = None) -> dict[str, Any]:
        """Evaluates the weights of ``checkpoint_path`` (None: freshly initialized ones, or
        ``values``: ``{variable name: array}`` read elsewhere).

        Runs the update op ``steps`` times, until the input runs out, or once for constant
        inputs; returns every metric and ``global_step``.
        """
        hooks = list(self._hooks)
        if steps is not None:
            if steps <= 0:
                raise ValueError(f"evaluate: steps must be positive, got {steps}")
            hooks.append(_StopAfterNEvalsHook(steps))
        elif self._once:
            hooks.append(_StopAfterNEvalsHook(1))
        with self.graph.as_default():
            creator = ChiefSessionCreator(scaffold=self._scaffold_for(values),
                                          checkpoint_filename_with_path=checkpoint_path,
                                          master=self._estimator.config.evaluation_master,
                                          config=self._session_config)
            final = hooks_lib.FinalOpsHook(self._values)
            with MonitoredSession(session_creator=creator, hooks=hooks + [final]) as sess:
                while not sess.should_stop():
                    sess.run(self._update)
        return dict(final.final_ops_values)


def _local_init_ops() -> list:
    from flowmesh.ops.lookup_ops import tables_initializer
    from flowmesh.ops.variables import variables_initializer

    return [variables_initializer(get_collection(GraphKeys.LOCAL_VARIABLES)), tables_initializer()]


def write_eval_summaries(model_dir: str, name: str | None, results: dict[str, Any]) -> str:
    """Writes the scalar results into ``model_dir/eval`` (``eval_<name>``) at their global step."""
    out_dir = os.path.join(model_dir, "eval" if not name else f"eval_{name}")
    summary = Summary()
    for key, value in sorted(results.items()):
        if key == "global_step":
            continue
        try:
            summary.value.add(tag=key, simple_value=float(value))
        except (TypeError, ValueError):
            logger.info("evaluation result %s is not a scalar; not written as a summary", key)
    writer = FileWriterCache.get(out_dir)
    writer.add_summary(summary, int(results.get("global_step", 0)))
    writer.flush()
    return out_dir
