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


def test_small_tf1_namespaces_of_issue_26():
    from flowmesh.core.type_protocols import TensorLike
    from flowmesh.ops import audio_ops, xla_compile
    from flowmesh.profiler import model_analyzer

    assert tf.audio.decode_wav is audio_ops.decode_wav and tf.audio.encode_wav is audio_ops.encode_wav
    assert tf.xla.experimental.jit_scope is xla_compile.jit_scope
    assert tf.types.experimental.TensorLike is TensorLike
    assert tf.profiler.profile is model_analyzer.profile and tf.profiler.Profiler is model_analyzer.Profiler
    assert tf.debugging.experimental.enable_dump_debug_info.__module__ == "flowmesh.debug_dump"
    assert tf.sysconfig.CXX11_ABI_FLAG == tf.CXX11_ABI_FLAG
    assert tf.app.flags is tf.flags and tf.flags.tf_decorator.make_decorator.__module__ == "flowmesh.flags.tf_decorator"
