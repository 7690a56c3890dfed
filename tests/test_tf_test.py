"""tf.test: a TestCase subclass run by unittest (sessions, evaluate, the array assertions,
seeding), the gradient checker against TensorFlow's, create_local_cluster, Benchmark,
assert_equal_graph_def, StubOutForTesting and the small helpers."""

from __future__ import annotations

import os
import unittest

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


class _Example(tf.test.TestCase):
    __test__ = False  # run below by unittest, not collected by pytest
    def testSessionsAndEvaluate(self):  # noqa: N802 - unittest's style, as TensorFlow tests write it
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        with self.cached_session() as sess:
            self.assertIs(tf.get_default_session(), sess)
            self.assertAllClose({"a": [x, x * 2], "b": 3.0}, {"a": [[[1, 2], [3, 4]], [[2, 4], [6, 8]]], "b": 3.0})
            self.assertAllEqual(tf.square([2, 3]), [4, 9])
            self.assertAllInRange(x, 1, 4)
            self.assertAllGreater(x, 0.5)
            self.assertShapeEqual(np.zeros((2, 2)), x)
            self.assertDTypeEqual(x, tf.float32)
            self.assertEqual(self.evaluate(x).tolist(), [[1, 2], [3, 4]])
        with self.session() as other:
            self.assertIsNot(other, sess)
        self.assertNotAllClose(x, x + 1)
        with self.assertRaises(AssertionError):
            self.assertAllClose(x, x + 1e-3)

    def testOpErrorsAndTempDirs(self):  # noqa: N802
        x = tf.placeholder(tf.float32, [1])
        check = tf.debugging.assert_positive(x)
        with self.cached_session() as sess:
            with self.assertRaisesOpError("x > 0|assert_positive"):
                sess.run(check, {x: [-1.0]})
        self.assertTrue(os.path.isdir(self.get_temp_dir()))
        self.assertTrue(self.get_temp_dir().startswith(tf.test.get_temp_dir()))

    def testSeeded(self):  # noqa: N802
        with self.cached_session():
            self.__class__.drawn.append(self.evaluate(tf.random_uniform([3])).tolist())


def test_a_test_case_runs_under_unittest():
    _Example.drawn = []
    suite = unittest.TestSuite([_Example(name) for name in ("testSessionsAndEvaluate", "testOpErrorsAndTempDirs",
                                                            "testSeeded", "testSeeded")])
    result = unittest.TextTestRunner(stream=open(os.devnull, "w"), verbosity=0).run(suite)
    assert result.wasSuccessful(), result.failures + result.errors
    assert _Example.drawn[0] == _Example.drawn[1]  # each test starts from the same seeds


def _gradient_check(t, sess_config=None):
    with t.Graph().as_default():
        x = t.placeholder(t.float64, [2, 3])
        y = t.reduce_sum(t.tanh(x) * t.constant([[1.0], [2.0]], t.float64), axis=1)
        w = t.placeholder(t.float64, [3])
        z = t.matmul(x, t.reshape(w, [3, 1]))
        with t.Session(config=sess_config):
            init = np.linspace(-1, 1, 6).reshape(2, 3)
            single = t.test.compute_gradient(x, [2, 3], y, [2], x_init_value=init)
            pair = t.test.compute_gradient([x, w], [[2, 3], [3]], z, [2, 1], x_init_value=[init, np.ones(3)],
                                           extra_feed_dict={x: init, w: np.arange(3.0)})
            error = t.test.compute_gradient_error(x, [2, 3], y, [2], x_init_value=init, delta=1e-4)
    return single, pair, error


def test_gradient_checker_matches_tensorflow():
    tf1 = require_tensorflow()
    ours, theirs = _gradient_check(tf), _gradient_check(tf1, session_config(tf1))
    for a, b in zip([*ours[0], *ours[1][0], *ours[1][1]], [*theirs[0], *theirs[1][0], *theirs[1][1]]):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)
    assert ours[2] < 1e-6 and ours[2] == pytest.approx(theirs[2], abs=1e-9)


def test_create_local_cluster_runs_a_step_across_servers():
    workers, ps = tf.test.create_local_cluster(num_workers=1, num_ps=1)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(2.0)
            with tf.device("/job:worker/task:0"):
                y = v * 3
            with tf.Session(workers[0].target) as sess:
                sess.run(v.initializer)
                assert sess.run(y) == 6.0
    finally:
        for server in workers + ps:
            server.stop()


def test_benchmark_reports_and_times_ops(capsys):
    class MatmulBenchmark(tf.test.Benchmark):
        def benchmarkMatmul(self):  # noqa: N802 - Benchmark's naming rule
            with tf.Graph().as_default(), tf.Session(config=tf.test.benchmark_config()) as sess:
                x = tf.ones([8, 8])
                return self.run_op_benchmark(sess, tf.matmul(x, x), burn_iters=1, min_iters=3, mbs=1)

    bench = MatmulBenchmark()
    values = bench.benchmarkMatmul()
    assert values["iters"] == 3 and values["wall_time"] > 0 and "wall_time_mean" in values["extras"]
    assert bench.reported[0]["name"] == "MatmulBenchmark.benchmarkMatmul"
    assert 'name: "MatmulBenchmark.benchmarkMatmul"' in capsys.readouterr().out
    with pytest.raises(TypeError, match="extras"):
        bench.report_benchmark(extras=[1])


def test_graph_def_comparison_stubs_and_helpers():
    def build(scale):
        with tf.Graph().as_default() as g:
            tf.multiply(tf.constant(1.0, name="a"), scale, name="b")
        return g.as_graph_def()
    tf.test.assert_equal_graph_def(build(2.0), build(2.0))
    with pytest.raises(AssertionError, match="differs"):
        tf.test.assert_equal_graph_def(build(2.0), build(3.0))

    class Holder:
        value = 1
    with tf.test.StubOutForTesting() as stubs:
        stubs.Set(Holder, "value", 2)
        assert Holder.value == 2
    assert Holder.value == 1
    assert not tf.test.is_built_with_rocm() and not tf.test.is_built_with_xla()
    assert tf.test.test_src_dir_path("docs").endswith("docs")
    assert tf.test.with_eager_op_as_function(Holder) is Holder
    with pytest.raises(RuntimeError, match="Eager"):
        tf.test.experimental.sync_devices()
