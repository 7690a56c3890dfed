"""SyncReplicasOptimizer on an in-process cluster (servers in this process, one thread per
worker). The multi-process version is in tests/distributed/test_ps_training.py."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.kernels.conditional_accumulator import AccumulatorState
from flowmesh.testing.cluster import cluster_dict


@pytest.fixture
def cluster():
    spec = cluster_dict({"ps": 2, "worker": 3})
    servers = {(job, i): tf.train.Server(spec, job_name=job, task_index=i)
               for job, n in (("ps", 2), ("worker", 3)) for i in range(n)}
    yield spec, servers
    for server in servers.values():
        server.stop()


def accumulator_stats(servers) -> dict[str, dict[str, int]]:
    """The accumulators on the ps tasks, read from their resource stores."""
    out = {}
    for (job, _), server in servers.items():
        if job != "ps":
            continue
        for device in server.worker.devices:
            for (_, name), resource in device.resources.items():
                if isinstance(resource, AccumulatorState):
                    out[name] = resource.stats()
    return out


def _worker(spec, server, index, total, aggregate, last_step, slow, results):
    graph = tf.Graph()
    with graph.as_default():
        setter = tf.train.replica_device_setter(cluster=spec, worker_device=f"/job:worker/task:{index}")
        with tf.device(setter):
            global_step = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
            emb = tf.get_variable("emb", [8, 2], initializer=tf.zeros_initializer())
            loss = tf.reduce_sum(tf.square(w - 1.0)) + tf.reduce_sum(tf.nn.embedding_lookup(emb, [index, 7]))
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), aggregate, total)
            train = opt.minimize(loss, global_step=global_step)
        hooks = [opt.make_session_run_hook(index == 0), tf.train.StopAtStepHook(last_step=last_step)]
        tokens = []
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0, hooks=hooks,
                                               stop_grace_period_secs=10) as sess:
            while not sess.should_stop():
                tokens.append(int(sess.run(train)))
                time.sleep(slow)
        results[index] = {"tokens": tokens, "placement": {v.op.name: v.device for v in (global_step, w, emb)}}


@pytest.mark.timeout(120)
def test_backup_worker_progresses_and_stale_gradients_are_dropped(cluster):
    spec, servers = cluster
    results: dict = {}
    slow = {0: 0.0, 1: 0.0, 2: 0.05}  # worker 2 is the straggler
    threads = [threading.Thread(target=_worker, daemon=True, args=(
        spec, servers[("worker", i)], i, 3, 2, 12, slow[i], results)) for i in range(3)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert sorted(results) == [0, 1, 2], "a worker did not finish"
    assert time.monotonic() - start < 60  # shutdown does not wait for gradients that never come
    for r in results.values():
        tokens = r["tokens"]
        assert tokens == sorted(tokens) and all(0 <= t <= 12 for t in tokens)
    # Every step was one aggregation of exactly 2 gradients: the global step advanced 12 times.
    stats = accumulator_stats(servers)
    assert sorted(stats) == ["emb:0/grad_accum", "w:0/grad_accum"]
    for s in stats.values():
        assert s["taken"] == s["global_step"] >= 12
        assert s["applied"] >= 2 * s["taken"]
    total_tokens = sorted(t for r in results.values() for t in r["tokens"])
    assert set(range(12)) <= set(total_tokens)  # no step was skipped
    placement = results[0]["placement"]
    assert {placement["global_step"], placement["w"], placement["emb"]} == {"/job:ps/task:0", "/job:ps/task:1"}
    assert sum(s["stale_dropped"] for s in stats.values()) > 0  # the straggler's late gradients


@pytest.mark.timeout(60)
def test_sync_training_matches_averaged_gradient_descent(cluster):
    """Two replicas with different data: each step applies the mean of their gradients."""
    spec, servers = cluster
    xs = {0: np.array([[1.0, 0.0]], np.float32), 1: np.array([[0.0, 2.0]], np.float32)}
    out: dict = {}

    def run(index):
        graph = tf.Graph()
        with graph.as_default():
            with tf.device(tf.train.replica_device_setter(cluster=spec,
                                                          worker_device=f"/job:worker/task:{index}")):
                global_step = tf.train.get_or_create_global_step()
                w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer())
                loss = tf.reduce_sum(tf.matmul(tf.constant(xs[index]), w))
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 2, 2)
                train = opt.minimize(loss, global_step=global_step)
            hooks = [opt.make_session_run_hook(index == 0), tf.train.StopAtStepHook(last_step=3)]
            with tf.train.MonitoredTrainingSession(master=servers[("worker", index)].target,
                                                   is_chief=index == 0, hooks=hooks,
                                                   stop_grace_period_secs=10) as sess:
                while not sess.should_stop():
                    sess.run(train)
            with tf.Session(servers[("worker", index)].target) as plain:
                out[index] = plain.run(w)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(50)
    # Each step applies 0.5 * the mean of the gradients its accumulator held when taken: at
    # least 2, more when one arrived before the take (as in TensorFlow, take_grad averages
    # all of them); a gradient is [1, 0] (worker 0) or [0, 2] (worker 1), and a fast worker
    # may contribute several. So w is one of the outcomes enumerated below.
    w = out[0].reshape(-1)
    distance = min(max(abs(w[0] - a), abs(w[1] - b)) for a, b in _possible_weights(steps=3, most=4))
    assert distance < 1e-5, w
    np.testing.assert_array_equal(out[0], out[1])


def _possible_weights(steps: int, most: int) -> set[tuple[float, float]]:
    """Every ``w`` that ``steps`` updates of ``w -= 0.5 * mean(k gradients)`` can give,
    ``2 <= k <= most``, each gradient [1, 0] or [0, 2], w starting at [1, 1]."""
    moves = {(0.5 * n0 / k, 0.5 * 2 * (k - n0) / k) for k in range(2, most + 1) for n0 in range(k + 1)}
    outcomes = {(0.0, 0.0)}
    for _ in range(steps):
        outcomes = {(a + da, b + db) for a, b in outcomes for da, db in moves}
    return {(1.0 - a, 1.0 - b) for a, b in outcomes}


def test_api_errors():
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 3)
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_init_tokens_op()
    v = tf.Variable(1.0)
    with pytest.raises(ValueError, match="Global step is required"):
        opt.minimize(v * v)
    with pytest.raises(ValueError, match=">= 1"):
        tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 0)
    step = tf.train.get_or_create_global_step()
    opt.minimize(v * v, global_step=step)
    few = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 3, 1)
    few.minimize(v * 2.0, global_step=step)
    with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: 1 \(given\) vs 2"):
        few.get_init_tokens_op(num_tokens=1)
    assert opt.get_chief_queue_runner().enqueue_ops
    hook = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 1).make_session_run_hook(True)
    with pytest.raises(ValueError, match="apply_gradient should be called"):
        hook.begin()
