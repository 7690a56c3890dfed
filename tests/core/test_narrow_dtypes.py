"""tf.dtypes.experimental (float8 / float4 formats, int4 uint4 int2 uint2): the DType objects,
and tf.cast, tf.constant, placeholders fed and fetched, against TensorFlow."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

NAMES = ("float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2fnuz",
         "float4_e2m1fn", "int4", "uint4", "int2", "uint2")
FLOATS = np.array([0.0, 0.3, -1.7, 2.5, 7.0, -13.3, 100.0, 1e4, -0.0078], np.float32)


def test_dtype_objects_match_tensorflow():
    tf1 = require_tensorflow()
    for name in NAMES:
        ours, theirs = getattr(flowmesh.dtypes.experimental, name), getattr(tf1.dtypes.experimental, name)
        assert getattr(flowmesh.experimental, name) is ours
        assert ours.name == theirs.name and ours.as_datatype_enum == theirs.as_datatype_enum
        assert np.dtype(ours.as_numpy_dtype) == np.dtype(theirs.as_numpy_dtype)
        assert (ours.is_floating, ours.is_integer, ours.is_unsigned) == \
            (theirs.is_floating, theirs.is_integer, theirs.is_unsigned), name
        assert (ours.min, ours.max) == (theirs.min, theirs.max), name
        assert flowmesh.as_dtype(name) is ours and flowmesh.as_dtype(np.dtype(ours.as_numpy_dtype)) is ours


# The casts TensorFlow 2.21's CPU kernels have (it raises UnimplementedError for the others,
# which flowmesh performs with ml_dtypes' conversions).
TF_CASTS = [(name, direction) for name in ("float8_e5m2", "float8_e4m3fn") for direction in ("from_float", "to_float",
                                                                                              "to_int")] + \
    [(name, direction) for name in ("int4", "uint4") for direction in ("from_int", "to_int")]
INTS = np.array([0, 1, -2, 3, 7, -8, 9, 15], np.int32)


def _cast(tf, name, direction):
    dtype = getattr(tf.dtypes.experimental, name)
    if direction == "from_float":
        return tf.cast(tf.constant(FLOATS), dtype)
    if direction == "from_int":
        return tf.cast(tf.constant(INTS), dtype)
    source = FLOATS if dtype.is_floating else INTS
    narrow = tf.constant(source.astype(dtype.as_numpy_dtype))
    return tf.cast(narrow, tf.float32 if direction == "to_float" else tf.int32)


@pytest.mark.parametrize("name,direction", TF_CASTS)
def test_cast_matches_tensorflow(name, direction):
    tf1 = require_tensorflow()
    results = []
    for tf in (flowmesh, tf1):
        with tf.Graph().as_default() as graph:
            out = _cast(tf, name, direction)
            with tf.Session(graph=graph, config=None if tf is flowmesh else session_config(tf)) as sess:
                results.append(sess.run(out))
    ours, theirs = results
    assert ours.dtype == theirs.dtype, (name, ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours.astype(np.float32), theirs.astype(np.float32), err_msg=name)


@pytest.mark.parametrize("name", NAMES)
def test_every_cast_follows_ml_dtypes(name):
    dtype = getattr(flowmesh.dtypes.experimental, name)
    np_type = dtype.as_numpy_dtype
    source = FLOATS if dtype.is_floating else INTS
    with flowmesh.Graph().as_default():
        narrow = flowmesh.cast(flowmesh.constant(source), dtype)
        back = [flowmesh.cast(narrow, t) for t in (flowmesh.float32, flowmesh.float64, flowmesh.int32,
                                                   flowmesh.bfloat16)]
        with flowmesh.Session() as sess:
            values = sess.run([narrow] + back)
    expected = source.astype(np_type)
    assert values[0].dtype == np.dtype(np_type)
    np.testing.assert_array_equal(values[0].astype(np.float32), expected.astype(np.float32))
    np.testing.assert_array_equal(values[1], expected.astype(np.float32))
    np.testing.assert_array_equal(values[2], expected.astype(np.float64))


@pytest.mark.parametrize("name", NAMES)
def test_constant_and_placeholder_match_tensorflow(name):
    tf1 = require_tensorflow()
    results = []
    for tf in (flowmesh, tf1):
        dtype = getattr(tf.dtypes.experimental, name)
        value = (FLOATS if dtype.is_floating else np.abs(INTS) % 2).astype(dtype.as_numpy_dtype)
        with tf.Graph().as_default() as graph:
            placeholder = tf.placeholder(dtype, [None])
            fetches = [tf.constant(value), tf.identity(placeholder)]
            with tf.Session(graph=graph, config=None if tf is flowmesh else session_config(tf)) as sess:
                results.append(sess.run(fetches, {placeholder: value}))
    for ours, theirs in zip(*results):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours.astype(np.float32), theirs.astype(np.float32))


@pytest.mark.parametrize("name", NAMES)
def test_constant_and_placeholder_round_trip(name):
    dtype = getattr(flowmesh.dtypes.experimental, name)
    np_type = dtype.as_numpy_dtype
    value = (np.array([[1.0, -2.0], [0.5, 3.0]]) if dtype.is_floating else
             np.array([[1, 0], [1, 1]])).astype(np_type) if name not in ("uint2", "uint4") else \
        np.array([[1, 0], [3, 2]]).astype(np_type)
    with flowmesh.Graph().as_default():
        const = flowmesh.constant(value)
        placeholder = flowmesh.placeholder(dtype, [None, 2])
        doubled = flowmesh.concat([placeholder, const], 0)
        with flowmesh.Session() as sess:
            fetched_const, fetched = sess.run([const, doubled], {placeholder: value})
    assert const.dtype is dtype and fetched.dtype == np.dtype(np_type)
    np.testing.assert_array_equal(fetched_const, value)
    np.testing.assert_array_equal(fetched, np.concatenate([value, value]))


def test_math_on_narrow_dtypes_is_rejected_as_in_tensorflow():
    with flowmesh.Graph().as_default():
        x = flowmesh.constant(np.array([1, 2], ml_dtypes.int4))
        with pytest.raises(TypeError):
            flowmesh.math.exp(flowmesh.cast(x, flowmesh.dtypes.experimental.float8_e5m2))
