"""tf.debugging names added for API breadth (issue 20): assert_shapes (static and dynamic,
against TensorFlow), check-numerics instrumentation, traceback filtering; and the TypeSpec
family (reprs, equality, compatibility as TensorFlow's)."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

SHAPE_CASES = {
    "ok": ([("x", ("N", "Q")), ("y", ("Q",)), ("s", ())], {"x": (2, 3), "y": (3,), "s": ()}),
    "symbol_mismatch": ([("x", ("N", "Q")), ("y", ("N",))], {"x": (2, 3), "y": (3,)}),
    "explicit": ([("x", (2, ".")), ("y", (3,))], {"x": (2, 5), "y": (3,)}),
    "explicit_bad": ([("x", (4, None))], {"x": (2, 5)}),
    "ellipsis": ([("x", (..., "Q")), ("y", ("*", "Q"))], {"x": (2, 4, 3), "y": (3,)}),
    "rank_bad": ([("x", ("N", "Q", "R"))], {"x": (2, 3)}),
}


def _assert_outcome(lib, case, static, config=None):
    spec, shapes = SHAPE_CASES[case]
    with lib.Graph().as_default() as g:
        holders = {k: lib.placeholder(lib.float32, s if static else [None] * len(s)) for k, s in shapes.items()}
        try:
            op = lib.debugging.assert_shapes([(holders[k], sym) for k, sym in spec])
        except ValueError:
            return "static-error"
        with lib.Session(graph=g, config=config) as sess:
            try:
                sess.run(op, {holders[k]: np.zeros(s, np.float32) for k, s in shapes.items()})
            except lib.errors.InvalidArgumentError:
                return "run-error"
    return "ok"


@pytest.mark.oracle
@pytest.mark.parametrize("static", [True, False], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", sorted(SHAPE_CASES))
def test_assert_shapes_matches_tensorflow(case, static):
    tf1 = require_tensorflow()
    ours = _assert_outcome(tf, case, static)
    assert ours == _assert_outcome(tf1, case, static, session_config(tf1))
    assert (ours == "ok") == (case in ("ok", "explicit", "ellipsis"))


def test_enable_check_numerics_instruments_ops_created_while_enabled():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32)
        plain = tf.math.log(x, name="plain_log")
        tf.debugging.enable_check_numerics()
        try:
            checked = tf.math.log(x, name="checked_log")
        finally:
            tf.debugging.disable_check_numerics()
        assert np.isnan(sess.run(plain, {x: -1.0})) and sess.run(checked, {x: 1.0}) == 0.0
        with pytest.raises(tf.errors.InvalidArgumentError, match='NaN.*"checked_log"|"checked_log".*NaN'):
            sess.run(checked, {x: -1.0})


def test_traceback_filtering_hides_flowmesh_frames():
    assert tf.debugging.is_traceback_filtering_enabled()
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32)
        bad = tf.debugging.check_numerics(x, "bad value")
        for enabled in (True, False):
            (tf.debugging.enable_traceback_filtering if enabled else tf.debugging.disable_traceback_filtering)()
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(bad, {x: np.nan})
            files = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
            internal = [f for f in files if "/flowmesh/" in f and not f.endswith("runtime/session.py")]
            assert (not internal) if enabled else internal
    tf.debugging.enable_traceback_filtering()


@pytest.mark.oracle
def test_type_specs_match_tensorflow():
    tf1 = require_tensorflow()
    builds = [lambda t: t.IndexedSlicesSpec([4, 3]),
              lambda t: t.NoneTensorSpec(), lambda t: t.TensorArraySpec([2], t.int32),
              lambda t: t.IndexedSlicesSpec([None, 3], t.float64, t.int32)]
    for build in builds:
        assert repr(build(tf)) == repr(build(tf1))
    a, b = tf.IndexedSlicesSpec([2, None]), tf.IndexedSlicesSpec([2, 3])
    a1, b1 = tf1.IndexedSlicesSpec([2, None]), tf1.IndexedSlicesSpec([2, 3])
    assert (a.is_compatible_with(b), a == b, a == tf.IndexedSlicesSpec([2, None])) == \
        (a1.is_compatible_with(b1), a1 == b1, a1 == tf1.IndexedSlicesSpec([2, None]))
    assert repr(b.most_specific_compatible_type(a)) == repr(b1.most_specific_compatible_type(a1))
    assert not a.is_compatible_with(tf.IndexedSlicesSpec([2, 3], tf.int32))
    assert isinstance(tf.TensorSpec([1]), tf.TypeSpec) and isinstance(tf.SparseTensorSpec([1]), tf.TypeSpec)
    assert tf.OptionalSpec(tf.TensorSpec([1])).element_spec.shape == [1]
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            specs = [lib.type_spec_from_value(v) for v in (lib.constant([1, 2]), np.ones((2, 3)), None)]
            sparse = lib.type_spec_from_value(lib.SparseTensor([[0, 0]], [1.0], [2, 2]))
            assert sparse == lib.SparseTensorSpec([2, 2], lib.float32)
            if lib is tf:
                ours = [repr(s) for s in specs]
            else:
                assert ours == [repr(s) for s in specs]
