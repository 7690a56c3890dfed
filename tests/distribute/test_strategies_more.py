"""OneDeviceStrategy, CentralStorageStrategy (training equals one device on the global
batch, variables on the parameter device), the CrossDeviceOps family, the Union, Slurm and
Kubernetes cluster resolvers, experimental_set_strategy and get_loss_reduction."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.distribute import PerReplica
from tests.distribute.test_mirrored_strategy import CONFIG, DEVICES, data, linear_step, reference_weights


def test_one_device_strategy_places_variables_and_runs_one_replica():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        v = tf.Variable(2.0, name="v")
        out = strategy.run(lambda x: x * v, args=(tf.constant([1.0, 3.0]),))
        total = strategy.reduce(tf.distribute.ReduceOp.SUM, out, axis=0)
    assert v.device == "/device:CPU:0" and strategy.num_replicas_in_sync == 1
    assert strategy.experimental_distribute_dataset("ds") == "ds"
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(total) == 8.0
    with pytest.raises(ValueError, match="device type"):
        tf.distribute.OneDeviceStrategy("/job:worker")


def test_central_storage_trains_as_one_device_with_variables_on_the_parameter_device():
    x_all, y_all = data()
    strategy = tf.distribute.experimental.CentralStorageStrategy(DEVICES, parameter_device="/cpu:0")
    xs = [tf.placeholder(tf.float32, [None, 4]) for _ in DEVICES]
    ys = [tf.placeholder(tf.float32, [None, 1]) for _ in DEVICES]
    with strategy.scope():
        w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
        b = tf.Variable(0.0, name="b")
        losses = strategy.run(linear_step(w, b, tf.train.GradientDescentOptimizer(0.1)),
                              args=(PerReplica(xs), PerReplica(ys)))
        loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, losses)
    assert {c.device for c in w.components} == {"/device:CPU:0"}
    assert strategy.extended.parameter_devices == ("/device:CPU:0",)
    feed = {xs[0]: x_all[:32], ys[0]: y_all[:32], xs[1]: x_all[32:], ys[1]: y_all[32:]}
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(loss, feed)
        weights = sess.run(w.components[0].value())
    np.testing.assert_allclose(weights, reference_weights(x_all, y_all, 5, lambda: tf.train.GradientDescentOptimizer(0.1)),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ops", [tf.distribute.ReductionToOneDevice(), tf.distribute.ReductionToOneDevice("/cpu:1"),
                                 tf.distribute.NcclAllReduce(), tf.distribute.HierarchicalCopyAllReduce(num_packs=2)])
def test_cross_device_ops_reduce_and_broadcast(ops):
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant([1.0, 2.0])
        with tf.device("/cpu:1"):
            b = tf.constant([3.0, 5.0])
        value = PerReplica([a, b])
        summed = ops.reduce(tf.distribute.ReduceOp.SUM, value, destinations=DEVICES)
        mean = ops.reduce("MEAN", value, destinations="/cpu:1")
        pairs = ops.batch_reduce(tf.distribute.ReduceOp.SUM, [(value, "/cpu:0"), (value, a)])
        copies = ops.broadcast(a, DEVICES)
        assert [t.device for t in summed.values] == ["/device:CPU:0", "/device:CPU:1"]
        with tf.Session(config=CONFIG) as sess:
            got = sess.run([list(summed.values), mean, pairs, list(copies.values)])
    np.testing.assert_allclose(got[0], [[4, 7], [4, 7]])
    np.testing.assert_allclose(got[1], [2, 3.5])
    np.testing.assert_allclose(got[2], [[4, 7], [4, 7]])
    np.testing.assert_allclose(got[3], [[1, 2], [1, 2]])


def test_union_and_slurm_and_kubernetes_resolvers(monkeypatch):
    resolver = tf.distribute.cluster_resolver
    ps = resolver.SimpleClusterResolver({"ps": ["h0:1"]}, task_type="ps", task_id=0)
    workers = resolver.SimpleClusterResolver({"worker": ["h1:2", "h2:3"]})
    union = resolver.UnionResolver(ps, workers, rpc_layer="grpc")
    assert union.cluster_spec().as_dict() == {"ps": ["h0:1"], "worker": ["h1:2", "h2:3"]}
    assert (union.task_type, union.task_id, union.master("worker", 1)) == ("ps", 0, "grpc://h2:3")
    with pytest.raises(KeyError, match="Duplicate"):
        resolver.UnionResolver(resolver.SimpleClusterResolver({"w": {1: "a:1"}}),
                               resolver.SimpleClusterResolver({"w": {1: "b:1"}})).cluster_spec()

    for name, value in {"SLURM_PROCID": "2", "SLURM_STEP_NUM_TASKS": "4", "SLURM_STEP_NODELIST": "n[01-02]",
                        "SLURM_STEP_TASKS_PER_NODE": "2(x2)", "CUDA_VISIBLE_DEVICES": "0,1"}.items():
        monkeypatch.setenv(name, value)
    slurm = resolver.SlurmClusterResolver({"ps": 1, "worker": 3}, port_base=9000)
    assert slurm.cluster_spec().as_dict() == {"ps": ["n01:9000"], "worker": ["n01:9001", "n02:9000", "n02:9001"]}
    assert slurm.get_task_info() == ("worker", 1) and slurm.master() == "grpc://n02:9000"
    assert slurm.num_accelerators() == {"GPU": 1}
    assert tf.config.CUDA_VISIBLE_DEVICES.get() == "0"  # this task's GPU, as TensorFlow's resolver sets it
    assert resolver.SlurmClusterResolver.__module__.endswith("slurm")

    def pod(name, ip, phase="Running"):
        return SimpleNamespace(metadata=SimpleNamespace(name=name), status=SimpleNamespace(phase=phase, host_ip=ip))
    pods = {"job-name=tensorflow": [pod("w1", "10.0.0.2"), pod("w0", "10.0.0.1")], "app=ps": [pod("p", "10.0.0.9")]}
    client = SimpleNamespace(list_pod_for_all_namespaces=lambda label_selector: SimpleNamespace(items=pods[label_selector]))
    k8s = resolver.KubernetesClusterResolver({"worker": ["job-name=tensorflow"], "ps": ["app=ps"]}, override_client=client)
    assert k8s.cluster_spec().as_dict() == {"worker": ["10.0.0.1:8470", "10.0.0.2:8470"], "ps": ["10.0.0.9:8470"]}
    pods["app=ps"] = [pod("p", "10.0.0.9", "Pending")]
    with pytest.raises(RuntimeError, match="not running"):
        k8s.cluster_spec()
    assert getattr(resolver.TPUClusterResolver, "_flowmesh_unsupported", None)


def test_set_strategy_loss_reduction_and_options():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with tf.Graph().as_default():
        tf.distribute.experimental_set_strategy(strategy)
        try:
            assert tf.distribute.get_strategy() is strategy
            with pytest.raises(RuntimeError, match="inside"), strategy.scope():
                tf.distribute.experimental_set_strategy(None)
        finally:
            tf.distribute.experimental_set_strategy(None)
        assert tf.distribute.get_strategy() is not strategy
        assert tf.distribute.get_loss_reduction() == tf.distribute.ReduceOp.MEAN
        tf.losses.mean_squared_error([1.0], [2.0], reduction=tf.losses.Reduction.SUM)
        assert tf.distribute.get_loss_reduction() == tf.distribute.ReduceOp.SUM
    assert tf.distribute.InputReplicationMode.PER_WORKER.value == "PER_WORKER"
    assert tf.distribute.RunOptions().experimental_enable_dynamic_batch_size
    options = tf.distribute.experimental.CommunicationOptions(bytes_per_pack=1024)
    assert options.merge(tf.distribute.experimental.CommunicationOptions(timeout_seconds=5)).timeout_seconds == 5
    with pytest.raises(ValueError, match="bytes_per_pack"):
        tf.distribute.experimental.CollectiveHints(bytes_per_pack=-1)
    assert tf.distribute.Server is tf.train.Server
