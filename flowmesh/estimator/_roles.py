"""The distributed roles of ``train_and_evaluate`` and how every one of them ends.

TensorFlow's ps serves forever (``server.join()``) and its evaluator waits for checkpoints
until ``max_steps``; flowmesh makes every role return once training is done:

* each trainer (chief and workers), after its ``train`` returns, adds 1 to a counter
  variable ``flowmesh_trainers_done`` on every ps task (a variable shared by name on the
  ps server, outside the model's checkpoint);
* a ps task initializes its counter at start and returns once it counts every trainer;
* the chief writes ``model_dir/flowmesh_training_done`` (the final global step); the
  evaluator, which evaluates each new checkpoint in one eval graph kept for the whole job,
  returns after evaluating a checkpoint at ``max_steps`` or at the step the marker names.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Graph
from flowmesh.ops.variables import Variable
from flowmesh.runtime.session import Session

logger = logging.getLogger("flowmesh.estimator")

DONE_COUNTER = "flowmesh_trainers_done"
DONE_MARKER = "flowmesh_training_done"
POLL_SECS = 0.2


def start_server(config: Any) -> Any:
    """This task's ``tf.train.Server`` (chief, worker or ps)."""
    from flowmesh.distributed.server import Server

    return Server(config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
                  config=config.session_config)


def _counter(ps_index: int) -> Variable:
    from flowmesh.core.graph import device

    with device(f"/job:ps/task:{ps_index}"):
        # One name per ps task: trainers build every counter in one graph, where a shared
        # name would be made unique ("_1") and miss the variable the ps task initialized.
        return Variable(0, dtype=dtypes.int64, name=f"{DONE_COUNTER}_ps{ps_index}", trainable=False,
                        collections=[])


def run_ps(config: Any) -> None:
    """Serves this ps task until every trainer has reported that it finished."""
    server = start_server(config)
    trainers = config.num_worker_replicas
    with Graph().as_default():
        counter = _counter(config.task_id)
        with Session(server.target, config=config.session_config) as sess:
            sess.run(counter.initializer)
            logger.info("ps %d serving until %d trainers finish", config.task_id, trainers)
            while int(sess.run(counter.read_value())) < trainers:
                time.sleep(POLL_SECS)
    logger.info("ps %d: every trainer finished; exiting", config.task_id)
    time.sleep(POLL_SECS)   # let the last trainer's session see its update answered
    server.stop()


def report_trainer_done(config: Any, target: str) -> None:
    """Adds 1 to every ps task's trainer counter (called by each trainer after training)."""
    if not config.num_ps_replicas:
        return
    with Graph().as_default():
        updates = [_counter(i).assign_add(1) for i in range(config.num_ps_replicas)]
        with Session(target, config=config.session_config) as sess:
            sess.run(updates)


def write_done_marker(model_dir: str, global_step: int | None) -> None:
    """The chief's note to the evaluator that training ended at ``global_step``."""
    path = os.path.join(model_dir, DONE_MARKER)
    with open(path + ".tmp", "w") as f:
        f.write(str(-1 if global_step is None else int(global_step)))
    os.replace(path + ".tmp", path)


def read_done_marker(model_dir: str, not_before: float) -> int | None:
    """The final step the chief wrote at or after ``not_before`` (a time), else None."""
    path = os.path.join(model_dir, DONE_MARKER)
    try:
        if os.path.getmtime(path) < not_before:
            return None
        with open(path) as f:
            return int(f.read().strip() or -1)
    except (OSError, ValueError):
        return None
