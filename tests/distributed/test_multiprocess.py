"""Real multi-process clusters on loopback: servers and between-graph workers as processes."""

from __future__ import annotations

import json
import os
import signal
import time

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import UnavailableError
from flowmesh.testing.cluster import LocalCluster, cluster_dict, spawn_python, spawn_server

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]

# A between-graph worker: its own server, its own graph, variables on the ps tasks.
WORKER = r"""
import json, sys, time
import flowmesh as tf
cluster, index, steps = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
server = tf.train.Server(cluster, job_name="worker", task_index=index)
with tf.device("/job:ps/task:0"):
    w0 = tf.Variable(0.0, name="w0")
with tf.device("/job:ps/task:1"):
    w1 = tf.Variable(0.0, name="w1")
with tf.device(f"/job:worker/task:{index}"):
    one = tf.constant(1.0)
    mine = (w0 + w1) * 0.0 + one
train = tf.group(w0.assign_add(mine), w1.assign_add(2.0 * mine))
with tf.Session(server.target) as sess:
    if index == 0:
        sess.run(tf.global_variables_initializer())
    while len(sess.run(tf.report_uninitialized_variables())):
        time.sleep(0.05)
    for _ in range(steps):
        sess.run(train)
    print(json.dumps({"worker": index, "w0": float(sess.run(w0))}), flush=True)
"""


def _read_ps_variables(target: str, names: dict[str, int]) -> dict[str, float]:
    g = tf.Graph()
    with g.as_default():
        reads = {}
        for name, task in names.items():
            with tf.device(f"/job:ps/task:{task}"):
                reads[name] = tf.Variable(0.0, name=name).value()
        with tf.Session(target, graph=g) as sess:
            return {k: float(v) for k, v in sess.run(reads).items()}


@pytest.mark.timeout(180)
def test_seed_two_server_local_cluster():
    with LocalCluster({"local": 2}) as cluster:
        with tf.device("/job:local/task:1"):
            c = tf.constant("Hello, distributed TensorFlow!")
            a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        with tf.device("/job:local/task:0"):
            b = tf.matmul(a, a)
        with tf.Session(cluster.target("local", 0)) as sess:  # this process is only a client
            assert sess.run(c) == b"Hello, distributed TensorFlow!"
            np.testing.assert_allclose(sess.run(b), [[7.0, 10.0], [15.0, 22.0]])


@pytest.fixture
def ps_servers():
    """A cluster whose ps tasks are servers in this process (the workers are processes)."""
    def make(tasks):
        cluster = cluster_dict(tasks)
        servers = [tf.train.Server(cluster, job_name="ps", task_index=i) for i in range(tasks["ps"])]
        made.append(servers)
        return cluster, servers

    made: list = []
    yield make
    for servers in made:
        for server in servers:
            server.stop()


@pytest.mark.timeout(240)
def test_two_ps_three_workers_between_graph(ps_servers):
    steps = 20
    cluster, servers = ps_servers({"ps": 2, "worker": 3})
    workers = [spawn_python(WORKER, [json.dumps(cluster), str(i), str(steps)], name=f"worker{i}")
               for i in range(3)]
    try:
        for w in workers:
            assert w.wait(150) == 0, w.output()
    finally:
        for w in workers:
            w.kill()
    assert all(w.json_lines() for w in workers)
    # New sessions (through either ps master) see the state the workers left on the ps tasks.
    expected = {"w0": 3.0 * steps, "w1": 6.0 * steps}
    assert _read_ps_variables(servers[0].target, {"w0": 0, "w1": 1}) == expected
    assert _read_ps_variables(servers[1].target, {"w0": 0, "w1": 1}) == expected
    assert servers[1].stats()["tensor_bytes_received"] > 0  # the workers' updates came over the wire


# Worker 0 runs one slow step updating a and b; worker 1 keeps counting.
SLOW = r"""
import json, sys, time
import flowmesh as tf
cluster, index = json.loads(sys.argv[1]), int(sys.argv[2])
server = tf.train.Server(cluster, job_name="worker", task_index=index)
with tf.device("/job:ps/task:0"):
    a = tf.Variable(0.0, name="a")
    b = tf.Variable(0.0, name="b")
    count = tf.Variable(0.0, name="count")
with tf.Session(server.target) as sess:
    if index == 1:
        sess.run(tf.global_variables_initializer())
        tick = count.assign_add(1.0)
        print("ready", flush=True)
        while True:
            print(json.dumps({"count": float(sess.run(tick))}), flush=True)
            time.sleep(0.02)
    while len(sess.run(tf.report_uninitialized_variables())):
        time.sleep(0.05)
    with tf.device("/job:worker/task:0"):
        grad_a = a * 0.0 + 1.0
        heavy = tf.random_normal([1200, 1200], seed=1)
        for _ in range(400):
            heavy = tf.tanh(tf.matmul(heavy, heavy) * 0.001)
        grad_b = b * 0.0 + tf.reduce_mean(heavy) * 0.0 + 1.0
    step = tf.group(a.assign_add(grad_a), b.assign_add(grad_b))
    print("stepping", flush=True)
    sess.run(step)
    print("finished", flush=True)
"""


@pytest.mark.timeout(240)
def test_killed_worker_never_half_updates_and_others_continue(ps_servers):
    cluster, (ps,) = ps_servers({"ps": 1, "worker": 2})
    counter = slow = None
    try:
        counter = spawn_python(SLOW, [json.dumps(cluster), "1"], name="counter")
        counter.wait_for_line("ready", 90)
        baseline = ps.stats()["tensor_bytes_received"]
        slow = spawn_python(SLOW, [json.dumps(cluster), "0"], name="slow")
        slow.wait_for_line("stepping", 90)
        deadline = time.monotonic() + 60
        while ps.stats()["tensor_bytes_received"] == baseline:  # grad_a has reached the ps
            assert time.monotonic() < deadline, slow.output()
            time.sleep(0.05)
        assert "finished" not in slow.output()
        slow.kill()  # SIGKILL mid-step: grad_b will never arrive
        killed_at = len(counter.json_lines())
        deadline = time.monotonic() + 10
        while ps.worker.steps.active_steps() and time.monotonic() < deadline:
            time.sleep(0.05)  # the ps gives up on the dead worker's step within seconds
        assert ps.worker.steps.active_steps() <= 1
        time.sleep(1.0)
        assert len(counter.json_lines()) > killed_at + 5, counter.output()[-500:]  # async goes on
        values = _read_ps_variables(ps.target, {"a": 0, "b": 0})
        assert values == {"a": 0.0, "b": 0.0}  # neither half of the step was applied
    finally:
        for child in (slow, counter):
            if child is not None:
                child.kill()


@pytest.mark.timeout(180)
def test_hung_ps_fails_the_step_by_heartbeat(monkeypatch):
    monkeypatch.setenv("FLOWMESH_HEARTBEAT_S", "0.2")
    monkeypatch.setenv("FLOWMESH_RPC_DEADLINE_S", "1.5")
    cluster = cluster_dict({"ps": 1, "worker": 1})
    ps = spawn_server(cluster, "ps", 0)
    worker = None
    try:
        ps.wait_for_line("ready at", 90)
        worker = tf.train.Server(cluster, job_name="worker", task_index=0)
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        with tf.device("/job:worker/task:0"):
            y = v * 2.0
        with tf.Session(worker.target) as sess:
            sess.run(v.initializer)
            assert sess.run(y) == 2.0
            ps.pause()  # alive to the kernel, but it answers nothing
            start = time.monotonic()
            with pytest.raises(UnavailableError, match="no heartbeat from /job:ps/replica:0/task:0"):
                sess.run(y)
            assert time.monotonic() - start < 15
    finally:
        os.kill(ps.pid, signal.SIGCONT)
        ps.kill()
        if worker is not None:
            worker.stop()
