"""tf.config: devices as TensorFlow lists them on a CPU machine (and on simulated GPUs),
visible and logical devices reaching new sessions, memory growth and allocator statistics
refused for non-GPUs as TensorFlow refuses them, thread counts and the stored switches."""

from __future__ import annotations

import pytest

import flowmesh as tf
from flowmesh.runtime import device_config
from flowmesh.testing.tf_oracle import require_tensorflow


@pytest.fixture(autouse=True)
def _fresh_settings():
    device_config.reset()
    yield
    device_config.reset()


def _listing(t):
    c = t.config
    return ([tuple(d) for d in c.list_physical_devices()], [tuple(d) for d in c.list_logical_devices("CPU")],
            [tuple(d) for d in c.get_visible_devices()], c.functions_run_eagerly(),
            c.optimizer.get_jit(), c.optimizer.get_experimental_options(), c.threading.get_intra_op_parallelism_threads(),
            c.threading.get_inter_op_parallelism_threads(), c.experimental.get_device_policy(),
            c.experimental.get_synchronous_execution(), c.experimental.get_device_details(c.list_physical_devices()[0]),
            c.get_logical_device_configuration(c.list_physical_devices()[0]))


def test_a_cpu_machine_looks_as_in_tensorflow(monkeypatch):
    monkeypatch.setenv("FLOWMESH_SIMULATED_GPUS", "0")
    tf1 = require_tensorflow()
    oracle_options = tf1.config.optimizer.get_experimental_options()  # the oracle turns Grappler off
    tf1.config.optimizer.set_experimental_options({"disable_meta_optimizer": False})
    try:
        assert _listing(tf) == _listing(tf1)
    finally:
        tf1.config.optimizer.set_experimental_options(oracle_options)
    cpu = tf.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="non-GPU"):
        tf.config.experimental.set_memory_growth(cpu, True)
    with pytest.raises(ValueError, match="Allocator stats not available"):
        tf.config.experimental.get_memory_info("CPU:0")
    with pytest.raises(ValueError, match="reset memory stats"):
        tf.config.experimental.reset_memory_stats("CPU:0")
    with pytest.raises(ValueError, match="CPU should always be visible"):
        tf.config.set_visible_devices([])
    assert getattr(tf.config.experimental_connect_to_cluster, "_flowmesh_unsupported", None)


def test_logical_cpus_and_threads_reach_new_sessions(monkeypatch):
    monkeypatch.setenv("FLOWMESH_SIMULATED_GPUS", "0")
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    assert [d.name for d in tf.config.list_logical_devices()] == ["/device:CPU:0", "/device:CPU:1"]
    assert len(tf.config.get_logical_device_configuration(cpu)) == 2
    tf.config.threading.set_intra_op_parallelism_threads(1)
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            y = tf.constant(2.0) * 3
        with tf.Session() as sess:
            assert [d.name.rsplit("/", 1)[1] for d in sess.list_devices()] == ["device:CPU:0", "device:CPU:1"]
            assert sess.run(y) == 6.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="threads"):
        tf.config.threading.set_inter_op_parallelism_threads(-1)


def test_simulated_gpus_hidden_split_and_growth(monkeypatch):
    monkeypatch.setenv("FLOWMESH_SIMULATED_GPUS", "2")
    cpu, (g0, g1) = tf.config.list_physical_devices("CPU")[0], tf.config.list_physical_devices("GPU")
    tf.config.set_visible_devices([cpu, g1])
    assert tf.config.get_visible_devices("GPU") == [g1]
    assert [d.name for d in tf.config.list_logical_devices("GPU")] == ["/device:GPU:0"]
    tf.config.set_logical_device_configuration(g1, [tf.config.LogicalDeviceConfiguration(memory_limit=64)] * 2)
    assert [d.name for d in tf.config.list_logical_devices("GPU")] == ["/device:GPU:0", "/device:GPU:1"]
    assert tf.config.experimental.get_memory_growth(g0) is None
    tf.config.experimental.set_memory_growth(g0, True)
    assert tf.config.experimental.get_memory_growth(g0) is True
    assert tf.config.experimental.get_device_details(g0) == {}
    with pytest.raises(ValueError, match="simulated"):
        tf.config.experimental.get_memory_info("GPU:0")


def test_stored_switches():
    tf.config.optimizer.set_jit(True)
    assert tf.config.optimizer.get_jit() == "autoclustering"
    tf.config.optimizer.set_experimental_options({"constant_folding": False})
    assert tf.config.optimizer.get_experimental_options()["constant_folding"] is False
    tf.config.set_soft_device_placement(False)
    assert tf.config.get_soft_device_placement() is False
    filters = tf.config.experimental.ClusterDeviceFilters()
    filters.set_device_filters("worker", 0, ["/job:ps"])
    assert filters.filters == {("worker", 0): ["/job:ps"]}
    assert tf.config.DEBUG.name == "FLOWMESH_DEBUG"  # the settings table is still there
