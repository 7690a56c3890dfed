"""tf.bitwise ops (oracle table) and tf.debugging assertions / numeric checks (each case run
by flowmesh and TensorFlow: both must pass, or both fail at run time or graph time)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

INTS = Input((2, 3), "int32", -50, 50, kind="int")
SHIFTS = Input((2, 3), "int32", 0, 8, kind="int")
UINT8 = Input((2, 3), "uint8", 0, 255, kind="int")

BITWISE = [
    OpSpec("bitwise_and", lambda tf, a, b: tf.bitwise.bitwise_and(a, b), (INTS, INTS), reference=np.bitwise_and),
    OpSpec("bitwise_or", lambda tf, a, b: tf.bitwise.bitwise_or(a, b), (INTS, INTS), reference=np.bitwise_or),
    OpSpec("bitwise_xor/uint8", lambda tf, a, b: tf.bitwise.bitwise_xor(a, b), (UINT8, UINT8),
           reference=np.bitwise_xor),
    OpSpec("invert", lambda tf, a: tf.bitwise.invert(a), (INTS,), reference=np.invert),
    OpSpec("invert/uint8", lambda tf, a: tf.bitwise.invert(a), (UINT8,), reference=np.invert),
    OpSpec("left_shift", lambda tf, a, b: tf.bitwise.left_shift(a, b), (INTS, SHIFTS), reference=np.left_shift),
    OpSpec("right_shift", lambda tf, a, b: tf.bitwise.right_shift(a, b), (INTS, SHIFTS),
           reference=np.right_shift),
    OpSpec("right_shift/broadcast", lambda tf, a, b: tf.bitwise.right_shift(a, b),
           (INTS, Input((3,), "int32", 0, 5, kind="int")), reference=np.right_shift),
]


@pytest.mark.parametrize("spec", BITWISE, ids=spec_ids(BITWISE))
def test_bitwise(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", BITWISE, ids=spec_ids(BITWISE))
def test_bitwise_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


X = np.array([1.0, 2.0, 3.0], np.float32)
# (name, build(lib, x) -> op, value fed to x): run by both libraries.
CHECKS = [
    ("assert_equal/ok", lambda t, x: t.debugging.assert_equal(x, x), X),
    ("assert_equal/fail", lambda t, x: t.debugging.assert_equal(x, x + 1.0), X),
    ("assert_none_equal/ok", lambda t, x: t.debugging.assert_none_equal(x, x + 1.0), X),
    ("assert_none_equal/fail", lambda t, x: t.debugging.assert_none_equal(x, x * 1.0), X),
    ("assert_less/ok", lambda t, x: t.debugging.assert_less(x, 4.0), X),
    ("assert_less/fail", lambda t, x: t.debugging.assert_less(x, 3.0), X),
    ("assert_less_equal/ok", lambda t, x: t.debugging.assert_less_equal(x, 3.0), X),
    ("assert_greater/fail", lambda t, x: t.debugging.assert_greater(x, 1.0), X),
    ("assert_greater_equal/ok", lambda t, x: t.debugging.assert_greater_equal(x, 1.0), X),
    ("assert_positive/ok", lambda t, x: t.debugging.assert_positive(x), X),
    ("assert_positive/fail", lambda t, x: t.debugging.assert_positive(x), -X),
    ("assert_negative/ok", lambda t, x: t.debugging.assert_negative(x), -X),
    ("assert_non_negative/fail", lambda t, x: t.debugging.assert_non_negative(x), -X),
    ("assert_non_positive/ok", lambda t, x: t.debugging.assert_non_positive(x), -X),
    ("assert_near/ok", lambda t, x: t.debugging.assert_near(x, x + 1e-7), X),
    ("assert_near/fail", lambda t, x: t.debugging.assert_near(x, x + 1e-2), X),
    ("assert_rank/ok", lambda t, x: t.debugging.assert_rank(x, 1), X),
    ("assert_rank_at_least/ok", lambda t, x: t.debugging.assert_rank_at_least(x, 1), X),
    ("check_numerics/ok", lambda t, x: t.debugging.check_numerics(x, "bad"), X),
    ("check_numerics/nan", lambda t, x: t.debugging.check_numerics(x, "bad"), np.array([1.0, np.nan], np.float32)),
    ("check_numerics/inf", lambda t, x: t.verify_tensor_all_finite(x, "bad"), np.array([np.inf], np.float32)),
    ("is_non_decreasing", lambda t, x: t.debugging.is_non_decreasing(x), np.array([1, 1, 2], np.float32)),
    ("is_strictly_increasing", lambda t, x: t.debugging.is_strictly_increasing(x),
     np.array([1, 1, 2], np.float32)),
    ("is_strictly_increasing/yes", lambda t, x: t.debugging.is_strictly_increasing(x), X),
]


def _outcome(lib, build, value, config=None):
    with lib.Graph().as_default() as g:
        x = lib.placeholder(lib.float32, [None])
        out = build(lib, x)
        with lib.Session(graph=g, config=config) as sess:
            try:
                result = sess.run(out, {x: value})
            except lib.errors.InvalidArgumentError:
                return "fails"
    return "ok" if result is None else np.asarray(result).tolist()


@pytest.mark.parametrize("case", CHECKS, ids=[c[0] for c in CHECKS])
def test_checks_behave_as_tensorflow(case):
    tf1 = require_tensorflow()
    name, build, value = case
    ours = _outcome(tf, build, value)
    assert ours == _outcome(tf1, build, value, session_config(tf1)), name
    assert (ours == "fails") == ("fail" in name or name.endswith(("nan", "inf"))) or name.startswith("is_")


def test_static_checks_raise_at_graph_construction():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match="x < y"):
            tf.assert_less(tf.constant([3.0]), 2.0)
        with pytest.raises(ValueError, match="must have rank 2"):
            tf.assert_rank(tf.constant([1.0]), 2)
        with pytest.raises(TypeError, match="integer"):
            tf.assert_integer(tf.constant(1.0))
        assert tf.assert_equal(tf.constant(1), 1).type == "NoOp"
        x = tf.placeholder(tf.float32)
        grad = tf.gradients(tf.check_numerics(x * 2.0, "m"), x)[0]
        with tf.Session() as sess:
            assert sess.run(grad, {x: 1.0}) == 2.0
