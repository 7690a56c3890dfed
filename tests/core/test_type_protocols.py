"""tf.types.experimental: TensorLike names what convert_to_tensor takes (including objects
with __tf_tensor__), FunctionType is an inspect.Signature."""

from __future__ import annotations

import inspect
import typing

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import load_tensorflow


class Meters:
    def __init__(self, value):
        self.value = value

    def __tf_tensor__(self, dtype=None, name=None):
        return tf.constant(self.value, dtype=dtype or tf.float32, name=name)


def test_tensor_like_and_the_protocol():
    members = typing.get_args(tf.types.experimental.TensorLike)
    assert tf.Tensor in members and np.ndarray in members and int in members
    with tf.Graph().as_default(), tf.Session() as sess:
        t = tf.convert_to_tensor(Meters([1.5, 2.0]))
        assert t.dtype == tf.float32 and list(sess.run(t * 2.0)) == [3.0, 4.0]
        assert tf.convert_to_tensor(Meters(3), dtype=tf.float64).dtype == tf.float64
        assert sess.run(tf.add(Meters(1.0), 1.0)) == 2.0


def test_function_type_is_a_signature():
    def f(x, y=2, *, z):
        return x

    function_type = tf.types.experimental.FunctionType.from_callable(f)
    assert isinstance(function_type, inspect.Signature) and list(function_type.parameters) == ["x", "y", "z"]
    assert function_type.bind(1, z=3).arguments == {"x": 1, "z": 3}


@pytest.mark.oracle
def test_against_tensorflow():
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    theirs = {getattr(t, "__name__", str(t)) for t in typing.get_args(tf1.types.experimental.TensorLike)}
    ours = {getattr(t, "__name__", str(t)) for t in typing.get_args(tf.types.experimental.TensorLike)}
    assert ours == theirs

    def f(a, b=1):
        return a

    assert str(tf.types.experimental.FunctionType.from_callable(f)) == \
        str(tf1.types.experimental.FunctionType.from_callable(f))
