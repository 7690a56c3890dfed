"""Evaluation without a shared file system (``FLOWMESH_EVAL_CHECKPOINTS=chief``).

The chief's server serves its checkpoints: after each save the chief stores the path in a
string variable ``flowmesh_latest_checkpoint`` on ``/job:chief/task:0`` (outside the
model's checkpoint). The evaluator, which is not in the cluster, opens a session on the
chief's server, reads that path and runs ``RestoreV2`` placed on the chief, so the chief
reads its own disk and the values travel to the evaluator, which loads them into its eval
graph. The evaluator reports each evaluated step in ``flowmesh_evaluated_step``; after
training the chief publishes ``flowmesh_final_step`` and keeps its server up until the
evaluator says, in ``flowmesh_evaluator_finished_step``, that it has evaluated that step
and is leaving (or ``WAIT_S`` passed). Waiting for the evaluated step alone is not enough:
the evaluator may have evaluated the last checkpoint before the chief published it as
final, and would then wait for a chief that is gone.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.graph import Graph, device
from flowmesh.errors import OpError
from flowmesh.ops import array_ops
from flowmesh.ops.constant_op import placeholder
from flowmesh.ops.io_ops import restore_v2
from flowmesh.ops.variables import Variable
from flowmesh.runtime.session import Session
from flowmesh.train.basic_session_run_hooks import CheckpointSaverListener

logger = logging.getLogger("flowmesh.estimator")

CHIEF = "/job:chief/task:0"
WAIT_S = 120.0


class _ChiefState:
    """The four published variables, in a graph of their own, with a session on the chief."""

    def __init__(self, target: str, session_config: Any = None):
        self.graph = Graph()
        with self.graph.as_default(), device(CHIEF):
            self.latest = Variable(b"", dtype=dtypes.string, name="flowmesh_latest_checkpoint",
                                   trainable=False, collections=[])
            self.final = Variable(-1, dtype=dtypes.int64, name="flowmesh_final_step", trainable=False,
                                  collections=[])
            self.evaluated = Variable(-1, dtype=dtypes.int64, name="flowmesh_evaluated_step",
                                      trainable=False, collections=[])
            self.finished = Variable(-1, dtype=dtypes.int64,
                                     name="flowmesh_evaluator_finished_step", trainable=False,
                                     collections=[])
            self._path = placeholder(dtypes.string, [], name="path")
            self._step = placeholder(dtypes.int64, None, name="step")
            self.set_latest = self.latest.assign(self._path)
            step = array_ops.reshape(self._step, [])
            self.set_final = self.final.assign(step)
            self.set_evaluated = self.evaluated.assign(step)
            self.set_finished = self.finished.assign(step)
            self.init = [v.initializer
                         for v in (self.latest, self.final, self.evaluated, self.finished)]
        self.session = Session(target, graph=self.graph, config=session_config)

    def read(self) -> tuple[str, int, int, int]:
        """(latest path, final step, evaluated step, evaluator's finished step)."""
        latest, final, evaluated, finished = self.session.run(
            [v.read_value() for v in (self.latest, self.final, self.evaluated, self.finished)])
        latest = latest.decode() if isinstance(latest, bytes) else str(latest)
        return latest, int(final), int(evaluated), int(finished)

    def put(self, op: Any, value: Any) -> None:
        feed = self._path if op is self.set_latest else self._step
        self.session.run(op, {feed: value})


class PublishCheckpoints(CheckpointSaverListener):
    """Chief side: publish each saved checkpoint's path on the chief's server."""

    def __init__(self, estimator: Any, target: str):
        self._estimator = estimator
        self.state = _ChiefState(target, estimator.config.session_config)
        self.state.session.run(self.state.init)

    def after_save(self, session: Any, global_step_value: int) -> None:
        latest = self._estimator.latest_checkpoint()
        if latest:
            self.state.put(self.state.set_latest, latest)
        return None

    def finish(self, final_step: int) -> None:
        """Publishes the final step and waits (up to WAIT_S) for the evaluator to have
        evaluated it and to say it is leaving."""
        self.state.put(self.state.set_final, final_step)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and self.state.read()[3] < final_step:
            time.sleep(0.2)


class RemoteCheckpoints:
    """Evaluator side: the chief's latest checkpoint and its values for ``variables``."""

    def __init__(self, target: str, variables: list, session_config: Any = None):
        self.state = _ChiefState(target, session_config)
        names = [v.op.name for v in variables]
        with self.state.graph.as_default(), device(CHIEF):
            self._prefix = placeholder(dtypes.string, [], name="prefix")
            self._restore = restore_v2(self._prefix, names, [""] * len(names),
                                       [v.dtype.base_dtype for v in variables],
                                       [v.shape for v in variables], targets=names)
            self._restore = [array_ops.identity(t) for t in self._restore]
        self._names = names

    def poll(self) -> tuple[str, int] | None:
        """``(latest path, final step or -1)``, or None while the chief cannot be reached."""
        try:
            latest, final, _, _ = self.state.read()
        except OpError as exc:
            logger.info("evaluator: the chief's server is not answering (%s)", type(exc).__name__)
            return None
        return latest, final

    def values(self, path: str) -> dict[str, Any]:
        """``{variable name: value}`` of checkpoint ``path``, read by the chief."""
        arrays = self.state.session.run(self._restore, {self._prefix: path})
        return dict(zip(self._names, arrays))

    def report(self, step: int) -> None:
        """Tells the chief that ``step`` was evaluated (a lost chief is only logged)."""
        try:
            self.state.put(self.state.set_evaluated, step)
        except OpError as exc:
            logger.warning("evaluator: could not report step %d to the chief: %s", step, exc)

    def finish(self, step: int) -> None:
        """Tells the chief that the final ``step`` was evaluated and the evaluator is
        leaving: the chief's server may stop (a lost chief is only logged)."""
        try:
            self.state.put(self.state.set_finished, step)
        except OpError as exc:
            logger.warning("evaluator: could not tell the chief it is done: %s", exc)


def write_local_checkpoint(directory: str, variables: list, values: dict[str, Any], step: int) -> str:
    """Writes ``values`` (read through the chief) as checkpoint ``directory/model.ckpt-<step>``
    on the evaluator's disk, for the exporters (which restore from a checkpoint path)."""
    import os

    from flowmesh.checkpoint import SaveSpec, write_checkpoint

    specs = [SaveSpec(v.op.name, np.asarray(values[v.op.name]), v.dtype.base_dtype.name) for v in variables]
    prefix = os.path.join(directory, f"model.ckpt-{step}")
    write_checkpoint(prefix, specs)
    return prefix
