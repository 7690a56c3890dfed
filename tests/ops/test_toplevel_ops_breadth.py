"""Top-level tf.* ops added for API breadth (issue 20): an oracle table (values, gradients
where TensorFlow defines them) plus the stateful ones run against TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

IDX = [[0], [2], [0]]

SPECS = [
    OpSpec("tensor_scatter_nd_max/int", lambda tf, t, u: tf.tensor_scatter_nd_max(t, IDX, u),
           (Input((4, 2), "int32", -5, 5, kind="int"), Input((3, 2), "int32", -5, 5, kind="int"))),
    OpSpec("histogram_fixed_width", lambda tf, x: tf.histogram_fixed_width(x, [-1.0, 1.5], nbins=5),
           (Input((3, 7), low=-2, high=2),), grad=False),
    OpSpec("histogram_fixed_width/int64", lambda tf, x: tf.histogram_fixed_width(x, [0, 7], nbins=3, dtype=tf.int64),
           (Input((11,), "int32", -3, 10, kind="int"),), grad=False),
    OpSpec("histogram_fixed_width_bins", lambda tf, x: tf.histogram_fixed_width_bins(x, [-1.0, 1.5], nbins=4),
           (Input((2, 5), low=-2, high=2),), grad=False),
    OpSpec("bitcast/float_to_uint8", lambda tf, x: tf.bitcast(x, tf.uint8), (Input((2, 3)),), grad=False),
    OpSpec("bitcast/int16_to_int32", lambda tf, x: tf.bitcast(x, tf.int32),
           (Input((3, 2), "int16", -300, 300, kind="int"),), grad=False, dynamic=False),
    OpSpec("bitcast/float64_to_int64", lambda tf, x: tf.bitcast(x, tf.int64), (Input((4,), "float64"),), grad=False),
    OpSpec("parallel_stack", lambda tf, a, b: tf.parallel_stack([a, b, a]), (Input((2, 3)), Input((2, 3))),
           grad=False, dynamic=False),
    OpSpec("guarantee_const", lambda tf, x: tf.guarantee_const(x) * 2.0, (Input((3,)),), grad=False),
    OpSpec("switch_case/list", lambda tf, x: [tf.switch_case(tf.constant(k), [lambda: x * 2.0, lambda: tf.sin(x),
                                                                             lambda: x * x]) for k in (0, 1, 2, 7)],
           (Input((3,)),)),
    OpSpec("switch_case/dict_default", lambda tf, x: [tf.switch_case(tf.constant(k), {1: lambda: x + 1.0, 0: lambda: -x},
                                                                     default=lambda: tf.exp(x)) for k in (1, 0, 2)],
           (Input((2, 2)),)),
    OpSpec("vectorized_map", lambda tf, x: tf.vectorized_map(lambda r: tf.reduce_sum(r * r) + r[0], x),
           (Input((3, 4)),)),
    OpSpec("required_space_to_batch_paddings",
           lambda tf, s: list(tf.required_space_to_batch_paddings(s, [2, 3], [[1, 0], [0, 2]])),
           (Input((2,), "int32", 3, 9, kind="int"),), grad=False),
    OpSpec("required_space_to_batch_paddings/no_base",
           lambda tf, s: list(tf.required_space_to_batch_paddings(s, [4, 3])),
           (Input((2,), "int32", 3, 9, kind="int"),), grad=False),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def _run(lib, build, config=None):
    """Builds with ``build(lib) -> (init_fn, fetch_list)`` and runs each fetch in turn,
    recording values or the error class name."""
    with lib.Graph().as_default() as g:
        fetches = build(lib)
        out = []
        with lib.Session(graph=g, config=config) as sess:
            sess.run(lib.global_variables_initializer())
            for f in fetches:
                try:
                    value = sess.run(f)
                    out.append(None if value is None else np.asarray(value).tolist())
                except lib.errors.OpError as e:
                    out.append(type(e).__name__)
    return out


STATEFUL = {
    "count_up_to": lambda t: (lambda v: [t.count_up_to(v, 3)] * 4 + [v.read_value()])(
        t.Variable(1, dtype=t.int64)),
    "count_up_to/method": lambda t: (lambda v: [v.count_up_to(2)] * 3)(t.Variable(0)),
    "batch_scatter_update": lambda t: (lambda v: [t.batch_scatter_update(v, [[1, 0], [2, 2]], [[5.0, 6.0], [7.0, 8.0]]),
                                                  v.read_value()])(t.Variable(np.arange(6.0).reshape(2, 3))),
    "batch_scatter_update/3d": lambda t: (lambda v: [t.batch_scatter_update(v, [[[1]], [[0]]], [[[[9, 9]]], [[[8, 8]]]]),
                                                     ])(t.Variable(np.arange(8).reshape(2, 1, 2, 2))),
    "assert_variables_initialized/ok": lambda t: [t.assert_variables_initialized([t.Variable(1.0)]),
                                                  t.assert_variables_initialized([t.Variable([1.0]), t.Variable(2)])],
    "assert_variables_initialized/uninitialized": lambda t: [
        t.assert_variables_initialized([t.Variable(1.0), t.Variable(2.0, collections=[])])],
    "add_check_numerics_ops/ok": lambda t: (lambda x: [t.add_check_numerics_ops()])(t.sqrt(t.constant([4.0]))),
    "add_check_numerics_ops/nan": lambda t: (lambda x: [t.add_check_numerics_ops()])(t.log(t.constant([-1.0]))),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(STATEFUL))
def test_stateful_ops_match_tensorflow(name):
    tf1 = require_tensorflow()
    ours = _run(tf, STATEFUL[name])
    assert ours == _run(tf1, STATEFUL[name], session_config(tf1))
    assert ours, name


def test_count_up_to_needs_an_integer_variable():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="int32 or int64"):
            tf.count_up_to(tf.Variable(1.0), 3)


def test_bitcast_rejects_a_wrong_last_dimension():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match="last dimension"):
            tf.bitcast(tf.constant([[1, 2, 3]], tf.int16), tf.int32)


def test_hint_ops_have_no_gradient_as_in_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        with pytest.raises(LookupError, match="GuaranteeConst"):
            tf.gradients(tf.guarantee_const(x), x)
        with pytest.raises(LookupError, match="ParallelConcat"):
            tf.gradients(tf.parallel_stack([x, x]), x)


def test_timestamp_is_the_wall_clock_at_run_time():
    import time

    with tf.Graph().as_default(), tf.Session() as sess:
        stamp = tf.timestamp()
        before = time.time()
        first = sess.run(stamp)
        second = sess.run(stamp)
        assert stamp.dtype == tf.float64 and before <= first <= second <= time.time()


def test_uniform_unit_scaling_initializer_range_and_shape():
    tf1 = require_tensorflow()
    for lib in (tf, tf1):
        with lib.Graph().as_default(), lib.Session() as sess:
            value = sess.run(lib.uniform_unit_scaling_initializer(factor=2.0, seed=3)([200, 3, 5]))
            limit = 2.0 * np.sqrt(3.0 / 600)
            assert value.shape == (200, 3, 5) and np.abs(value).max() <= limit
            assert np.abs(value).max() > 0.9 * limit
