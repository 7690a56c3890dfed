"""Keras ``fit`` under ParameterServerStrategy: 2 ps and 2 worker processes started by
``flowmesh launch`` (TF_CONFIG per task). The workers train asynchronously on their rows
with the variables on the ps tasks; training converges and every task exits 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.cluster import REPO, child_env

WORKER = os.path.join(os.path.dirname(__file__), "ps_fit_worker.py")


@pytest.mark.slow
@pytest.mark.multiprocess
@pytest.mark.timeout(200)
def test_fit_with_parameter_servers_converges_and_every_task_exits_0():
    cmd = [sys.executable, "-m", "flowmesh.cli.main", "launch", "--ps", "2", "--workers", "2", WORKER]
    env = child_env({"FLOWMESH_RECOVERY_TIMEOUT_S": "90", "FLOWMESH_CONNECT_TIMEOUT_S": "20"})
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=REPO, env=env)
    log = result.stdout[-6000:] + result.stderr[-3000:]
    assert result.returncode == 0, log
    for task in ("worker:0", "worker:1", "ps:0", "ps:1"):  # the ps tasks end by themselves
        assert f"[launch] {task} exited with status 0" in result.stdout, log
    records = {}
    for line in result.stdout.splitlines():
        head, _, rest = line.partition("] ")
        if rest.startswith("RESULT "):
            record = json.loads(rest[7:])
            records[record["task"]] = record
    assert sorted(records) == ["worker:0", "worker:1"], log
    assert records["worker:0"]["chief"] and not records["worker:1"]["chief"]
    for record in records.values():
        # every weight, the Adam slots' owners and the step counter are on the ps tasks
        assert record["placement"] == ["/job:ps/task:0/device:CPU:0", "/job:ps/task:1/device:CPU:0"]
        assert record["accuracy"] >= 0.8, record  # ~0.97 observed; chance is 1/3
        assert record["eval_loss"] < 0.6 < np.log(3.0), record  # from ~ln 3 at the start
    # each worker ran 10 steps x 6 epochs on its 300 rows; the shared counter adds both
    steps = sorted(r["iterations"] for r in records.values())
    assert 60 <= steps[0] and 60 < steps[1] <= 120, steps


def test_without_a_cluster_it_is_one_local_trainer():
    with tf.Graph().as_default():
        strategy = tf.distribute.experimental.ParameterServerStrategy()
        assert strategy.num_replicas_in_sync == 1 and strategy.extended.is_chief
        assert strategy.extended.session_target == ""
        K = tf.keras
        with strategy.scope():
            model = K.Sequential([K.layers.Dense(3, activation="softmax", input_shape=(4,))])
            model.compile("sgd", "sparse_categorical_crossentropy")
        rng = np.random.default_rng(0)
        x = rng.standard_normal((64, 4)).astype(np.float32)
        history = model.fit(x, x[:, :3].argmax(1), epochs=2, batch_size=16, verbose=0)
        assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()


def test_rejects_other_tasks_and_partitioners():
    from flowmesh.distribute.cluster_resolver import SimpleClusterResolver

    cluster = {"worker": ["127.0.0.1:1"], "ps": ["127.0.0.1:2"]}
    evaluator = SimpleClusterResolver(cluster, task_type="evaluator", task_id=0)
    with pytest.raises(ValueError, match="'evaluator'"):
        tf.distribute.experimental.ParameterServerStrategy(evaluator)
    with pytest.raises(NotImplementedError, match="variable_partitioner"):
        tf.distribute.experimental.ParameterServerStrategy(variable_partitioner=lambda shape, dtype: [1, 1])


def test_roles_and_round_robin_placement():
    """A worker of a chief + worker + 2 ps cluster: not the chief; scope variables go round
    robin to the ps tasks in creation order, optimizer slots next to their variable."""
    import atexit

    from flowmesh.distribute.cluster_resolver import SimpleClusterResolver
    from flowmesh.distributed.ports import free_ports

    ports = free_ports(4)
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"],
               "ps": [f"127.0.0.1:{ports[2]}", f"127.0.0.1:{ports[3]}"]}
    resolver = SimpleClusterResolver(cluster, task_type="worker", task_id=0)
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    extended = strategy.extended
    atexit.unregister(extended.report_done)  # no ps task runs in this test
    try:
        assert not extended.is_chief and extended.trainers == [("chief", 0), ("worker", 0)]
        assert extended.session_target == f"grpc://127.0.0.1:{ports[1]}"
        with tf.Graph().as_default():
            with strategy.scope():
                a = tf.Variable(tf.zeros([2]), name="a")
                b = tf.get_variable("b", [3])
                c = tf.Variable(1.0, name="c")
                opt = tf.train.MomentumOptimizer(0.1, 0.9)
                opt.minimize(tf.reduce_sum(a) + tf.reduce_sum(b) + c)
            assert [v.device for v in (a, b, c)] == ["/job:ps/task:0/device:CPU:0", "/job:ps/task:1/device:CPU:0",
                                                     "/job:ps/task:0/device:CPU:0"]
            assert opt.get_slot(b, "momentum").device == b.device
    finally:
        extended.server.stop()
