"""Parameter-server training with real worker processes on loopback.

The ps tasks are servers inside the test process (so the test can read their data-plane
byte counters and resource stores); every worker is its own process with its own server
and graph (between-graph replication), placing variables with replica_device_setter.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.kernels.conditional_accumulator import AccumulatorState
from flowmesh.kernels.contract.resources import VariableState
from flowmesh.testing.cluster import cluster_dict, spawn_python

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]

# A digits MLP worker. Async: Adam updates applied on the ps, plus a pair of counters on
# each ps incremented by every step (a step is applied on a ps entirely or not at all).
# Sync: SyncReplicasOptimizer; the train op's value is the step token the worker got.
DIGITS_WORKER = r"""
import json, sys, time
import numpy as np
import flowmesh as tf
from flowmesh.datasets import load_digits
cfg = json.loads(sys.argv[1])
index = cfg["index"]
server = tf.train.Server(cfg["cluster"], job_name="worker", task_index=index)
(x_train, y_train), (x_test, y_test) = load_digits()
tf.set_random_seed(7)
setter = tf.train.replica_device_setter(cluster=cfg["cluster"], worker_device=f"/job:worker/task:{index}")
with tf.device(setter):
    global_step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    w1 = tf.get_variable("w1", [64, 64])
    b1 = tf.get_variable("b1", [64], initializer=tf.zeros_initializer())
    w2 = tf.get_variable("w2", [64, 10])
    b2 = tf.get_variable("b2", [10], initializer=tf.zeros_initializer())
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    opt = tf.train.AdamOptimizer(0.01)
    if cfg["sync"]:
        opt = tf.train.SyncReplicasOptimizer(opt, cfg["aggregate"], cfg["workers"])
    train = opt.minimize(loss, global_step=global_step)
    if not cfg["sync"]:
        one = tf.cast(tf.size(y) > 0, tf.float32)  # computed here, received by the ps
        counters = []
        for task in range(2):
            with tf.device(f"/job:ps/task:{task}"):
                counters += [tf.Variable(0.0, name=f"count_a_{task}", trainable=False),
                             tf.Variable(0.0, name=f"count_b_{task}", trainable=False)]
        train = tf.group(train, *[c.assign_add(one) for c in counters])
hooks = [tf.train.StopAtStepHook(last_step=cfg["last_step"])]
if cfg["sync"]:
    hooks.append(opt.make_session_run_hook(index == 0))
rng = np.random.RandomState(index)
tokens, steps = [], 0
with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0, hooks=hooks,
                                       stop_grace_period_secs=10) as sess:
    while not sess.should_stop():
        idx = rng.randint(0, len(x_train), 32)
        value, step = sess.run([train, global_step], {x: x_train[idx], y: y_train[idx]})
        if cfg["sync"]:
            tokens.append(int(value))
        steps += 1
        if steps % 10 == 0:
            print("progress", steps, flush=True)
        time.sleep(cfg["sleep"])
result = {"index": index, "steps": steps, "tokens": tokens}
if index == 0:
    with tf.Session(server.target) as sess:
        result["accuracy"] = float(sess.run(accuracy, {x: x_test, y: y_test}))
        result["global_step"] = int(sess.run(global_step))
print(json.dumps(result), flush=True)
"""


@pytest.fixture
def ps_cluster():
    """2 ps servers in this process; the worker tasks are left for processes."""
    made = []

    def make(workers: int):
        cluster = cluster_dict({"ps": 2, "worker": workers})
        made.extend(tf.train.Server(cluster, job_name="ps", task_index=i) for i in range(2))
        return cluster, made[-2:]

    yield make
    for server in made:
        server.stop()


def _resources(server, kind: type) -> dict:
    return {name: r for device in server.worker.devices for (_, name), r in device.resources.items()
            if isinstance(r, kind)}


def _spawn_workers(cluster, workers, **cfg):
    return [spawn_python(DIGITS_WORKER, [json.dumps(dict(cfg, cluster=cluster, index=i, workers=workers))],
                         name=f"worker{i}") for i in range(workers)]


def _kill_all(children):
    for child in children:
        child.kill()


def _steps_drain(table, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while table.active_steps() and time.monotonic() < deadline:
        time.sleep(0.05)
    return table.active_steps() == 0


def _value(state: VariableState) -> np.ndarray:
    return state.read().numpy()


@pytest.mark.timeout(240)
def test_async_digits_on_two_ps_survives_a_killed_worker(ps_cluster):
    cluster, ps = ps_cluster(3)
    workers = _spawn_workers(cluster, 3, sync=False, aggregate=0, last_step=500, sleep=0.0)
    try:
        workers[2].wait_for_line("progress 20", 150)
        workers[2].kill()  # SIGKILL, whatever it is doing
        for w in workers[:2]:
            assert w.wait(180) == 0, w.output()[-3000:]
    finally:
        _kill_all(workers)
    results = {r["index"]: r for w in workers[:2] for r in w.json_lines()}
    assert results[0]["global_step"] >= 500 and results[0]["accuracy"] >= 0.93, results
    assert results[0]["steps"] + results[1]["steps"] >= 500 - 60  # the others did the rest
    # replica_device_setter's round robin over the ps tasks (slots follow their variable).
    on_ps = [set(_resources(server, VariableState)) for server in ps]
    slots = ("", "/Adam", "/Adam_1")
    assert {"global_step"} | {v + s for v in ("b1", "b2") for s in slots} <= on_ps[0]
    assert {v + s for v in ("w1", "w2") for s in slots} <= on_ps[1]
    assert not {"w1", "w2"} & on_ps[0] and not {"global_step", "b1", "b2"} & on_ps[1]
    # Each ps applied every step it started completely: its two counters agree.
    for task, server in enumerate(ps):
        states = _resources(server, VariableState)
        a, b = _value(states[f"count_a_{task}"]), _value(states[f"count_b_{task}"])
        assert a == b and a >= 500 - 60, (task, a, b)
        # The dead worker's step is given up when this ps reads the end of its connections,
        # on a reader thread of its own: not necessarily before the other workers exit.
        assert _steps_drain(server.worker.steps, timeout=10.0), (task, server.worker.steps._active)
        assert server.stats()["tensor_bytes_received"] > 0


@pytest.mark.timeout(240)
def test_sync_digits_with_a_backup_worker(ps_cluster):
    cluster, ps = ps_cluster(3)
    last_step = 60
    # replicas_to_aggregate=2 of 3 workers; worker 2 is slow, so its gradients go stale.
    workers = [spawn_python(DIGITS_WORKER, [json.dumps(dict(
        cluster=cluster, index=i, workers=3, sync=True, aggregate=2, last_step=last_step,
        sleep=0.05 if i == 2 else 0.0))], name=f"worker{i}") for i in range(3)]
    try:
        for w in workers:
            assert w.wait(180) == 0, w.output()[-3000:]
    finally:
        _kill_all(workers)
    results = {r["index"]: r for w in workers for r in w.json_lines()}
    assert sorted(results) == [0, 1, 2]
    assert results[0]["accuracy"] >= 0.9 and results[0]["global_step"] == last_step, results[0]
    for r in results.values():  # tokens are global steps: never backwards, never past the end
        assert r["tokens"] == sorted(r["tokens"]) and set(r["tokens"]) <= set(range(last_step + 1))
    handed_out = set().union(*(r["tokens"] for r in results.values()))
    assert set(range(1, last_step)) <= handed_out  # every worker saw the same sequence, no gaps
    accumulators = {name: acc.stats() for server in ps for name, acc in _resources(server, AccumulatorState).items()}
    assert len(accumulators) == 4  # one per trainable variable, on its ps task
    for stats in accumulators.values():
        assert stats["taken"] == stats["global_step"] >= last_step  # one aggregation per step
        assert stats["applied"] >= 2 * stats["taken"]
    assert sum(s["stale_dropped"] for s in accumulators.values()) > 0


EMBEDDING_WORKER = r"""
import json, sys
import numpy as np
import flowmesh as tf
cfg = json.loads(sys.argv[1])
server = tf.train.Server(cfg["cluster"], job_name="worker", task_index=0)
rows, dim = cfg["rows"], cfg["dim"]
with tf.device(tf.train.replica_device_setter(cluster=cfg["cluster"], worker_device="/job:worker/task:0")):
    emb = tf.get_variable("emb", [rows, dim], initializer=tf.random_uniform_initializer(-1.0, 1.0),
                          partitioner=tf.fixed_size_partitioner(2))
    ids = tf.placeholder(tf.int64, [None])
    target = tf.placeholder(tf.float32, [None, dim])
    looked_up = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
    loss = tf.reduce_sum(tf.square(looked_up - target))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
graph = tf.get_default_graph()
on_ps = sorted(op.type for op in graph.get_operations() if op.device.startswith("/job:ps")
               and ("Apply" in op.type or "Gather" in op.type))
rng = np.random.RandomState(0)
batches = [rng.choice(rows, cfg["batch"], replace=False) for _ in range(cfg["steps"])]
with tf.Session(server.target) as sess:
    sess.run(tf.global_variables_initializer())
    before = sess.run(emb.as_tensor())
    feed = lambda b: {ids: b, target: np.zeros((len(b), dim), np.float32)}
    sess.run(train, feed(batches[0]))  # warm-up: plans registered, first tensors sent
    start = server.stats()
    for b in batches[1:]:
        sess.run(train, feed(b))
    end = server.stats()
    after = sess.run(emb.as_tensor())
touched = sorted(set(int(i) for b in batches for i in b))
changed = sorted(int(i) for i in np.nonzero(np.any(before != after, axis=1))[0])
print(json.dumps({"parts": [v.device for v in emb], "on_ps": on_ps, "touched": touched, "changed": changed,
                  "sent": end["tensor_bytes_sent"] - start["tensor_bytes_sent"],
                  "received": end["tensor_bytes_received"] - start["tensor_bytes_received"]}), flush=True)
"""


@pytest.mark.timeout(180)
def test_partitioned_embedding_moves_only_touched_rows(ps_cluster):
    cluster, ps = ps_cluster(1)
    cfg = {"cluster": cluster, "rows": 20000, "dim": 32, "batch": 8, "steps": 11}
    worker = spawn_python(EMBEDDING_WORKER, [json.dumps(cfg)], name="embedding-worker")
    try:
        assert worker.wait(150) == 0, worker.output()[-3000:]
    finally:
        worker.kill()
    (report,) = worker.json_lines()
    assert report["parts"] == ["/job:ps/task:0", "/job:ps/task:1"]  # one shard per ps task
    # Pull with ResourceGather, push with the sparse SGD kernel, both on the ps.
    assert report["on_ps"] == ["ResourceGather"] * 2 + ["ResourceSparseApplyGradientDescent"] * 2
    assert report["changed"] == report["touched"]  # every other row is untouched
    steps, row_bytes = cfg["steps"] - 1, cfg["dim"] * 4
    rows_moved = steps * cfg["batch"] * row_bytes
    shard_bytes = cfg["rows"] // 2 * row_bytes
    # Worker -> ps per step: the ids to gather and the gradient rows with their indices.
    assert rows_moved <= report["sent"] <= rows_moved + steps * cfg["batch"] * 16 + steps * 256
    # ps -> worker per step: the gathered rows (and a shape vector).
    assert rows_moved <= report["received"] <= rows_moved + steps * 256
    assert report["sent"] + report["received"] < shard_bytes / 20  # vs. one dense shard per step
    for server in ps:
        parts = _resources(server, VariableState)
        assert [name for name in parts if name.startswith("emb/part_")] == [f"emb/part_{ps.index(server)}"]
