"""Namespace modules re-export the ops under TensorFlow 2's spellings (the ops themselves
are oracle-tested where they are defined)."""

from __future__ import annotations

import flowmesh as tf


def test_random_namespace_aliases():
    assert tf.random.normal is tf.random_normal
    assert tf.random.uniform is tf.random_uniform
    assert tf.random.truncated_normal is tf.truncated_normal
    assert tf.random.shuffle is tf.random_shuffle
    assert tf.random.set_random_seed is tf.set_random_seed


def test_dtypes_namespace():
    assert tf.dtypes.float32 is tf.float32 and tf.dtypes.as_dtype("int64") is tf.int64
    assert tf.dtypes.cast is tf.cast
    assert tf.dtypes.qint8 is tf.qint8 and tf.qint8.is_quantized
