"""tf.io's byte codecs against TensorFlow: decode_compressed (ZLIB/GZIP), decode_json_example,
serialize_sparse / serialize_many_sparse / deserialize_many_sparse (bytes read both ways)."""

from __future__ import annotations

import gzip
import json
import zlib

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import DataLossError
from flowmesh.testing.tf_oracle import require_tensorflow, session_config
from tests.image.helpers import run_both, run_flowmesh

_TEXT = [b"hello world" * 3, b"", bytes(range(256))]


def _strings(items) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


CODEC = [
    ("zlib", _strings([zlib.compress(t) for t in _TEXT]),
     lambda t, s: t.io.decode_compressed(s, "ZLIB")),
    ("gzip", _strings([gzip.compress(t) for t in _TEXT]),
     lambda t, s: t.io.decode_compressed(s, "GZIP")),
    ("none", _strings(_TEXT), lambda t, s: t.io.decode_compressed(s)),
    ("top_level", _strings([zlib.compress(t) for t in _TEXT]),
     lambda t, s: t.decode_compressed(s, compression_type="ZLIB")),
]


@pytest.mark.parametrize("name,data,build", CODEC, ids=[c[0] for c in CODEC])
def test_decode_compressed_matches_tensorflow(name, data, build):
    ours, theirs = run_both(build, data)
    assert list(ours[0]) == list(theirs[0]) == _TEXT


def test_decode_compressed_bad_data_is_data_loss():
    with pytest.raises(DataLossError, match="DecodeCompressed.*not valid ZLIB"):
        run_flowmesh(lambda t, s: t.io.decode_compressed(s, "ZLIB"), _strings([b"garbage"]))


def test_decode_json_example_matches_tensorflow_and_parses():
    example = {"features": {"feature": {
        "a": {"int64List": {"value": ["1", "-7"]}}, "b": {"floatList": {"value": [0.5, 2.0]}},
        "c": {"bytesList": {"value": ["aGk="]}}}}}
    data = _strings([json.dumps(example).encode(), b'{"features": {}}'])
    ours, theirs = run_both(lambda t, s: t.io.decode_json_example(s), data)
    from flowmesh.protos.example import Example

    # map entries may be serialized in either order: compare the parsed messages
    assert [Example.FromString(b) for b in ours[0]] == [Example.FromString(b) for b in theirs[0]]
    spec = {"a": tf.io.VarLenFeature(tf.int64)}
    with tf.Graph().as_default(), tf.Session() as sess:
        parsed = sess.run(tf.io.parse_single_example(tf.decode_json_example(data[0]), spec))
    assert parsed["a"].values.tolist() == [1, -7]


_SPARSE = (np.array([[0, 0, 1], [0, 2, 0], [2, 1, 1]], np.int64), np.array([1.5, -2.0, 3.0], np.float32),
           np.array([3, 3, 2], np.int64))


def _sparse_graph(t, fn):
    return fn(t.SparseTensor(*(t.constant(x) for x in _SPARSE)))


def _run_graph(t, fn, config=None):
    with t.Graph().as_default(), t.Session(config=config) as sess:
        return sess.run(_sparse_graph(t, fn))


def _tf1():
    tf1 = require_tensorflow()
    return tf1, session_config(tf1)


@pytest.mark.parametrize("fn", [lambda t, s: t.io.serialize_sparse(s),
                                lambda t, s: t.serialize_many_sparse(s)], ids=["one", "many"])
def test_serialized_sparse_bytes_equal_tensorflows(fn):
    tf1, config = _tf1()
    ours = _run_graph(tf, lambda s: fn(tf, s))
    theirs = _run_graph(tf1, lambda s: fn(tf1, s), config)
    assert ours.shape == theirs.shape and ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("writer", ["flowmesh", "tensorflow"])
def test_deserialize_many_sparse_reads_either_side(writer):
    tf1, config = _tf1()
    src = tf if writer == "flowmesh" else tf1
    rows = _run_graph(src, lambda s: src.io.serialize_many_sparse(s),
                      None if src is tf else config)
    for module, cfg in ((tf, None), (tf1, config)):
        with module.Graph().as_default(), module.Session(config=cfg) as sess:
            out = sess.run(module.io.deserialize_many_sparse(rows, module.float32))
        np.testing.assert_array_equal(out.indices, _SPARSE[0])
        np.testing.assert_array_equal(out.values, _SPARSE[1])
        np.testing.assert_array_equal(out.dense_shape, [3, 3, 2])


def test_string_values_and_errors():
    with tf.Graph().as_default(), tf.Session() as sess:
        sp = tf.SparseTensor([[0, 1], [1, 0]], tf.constant([b"x", b"yz"]), [2, 2])
        out = sess.run(tf.deserialize_many_sparse(tf.serialize_many_sparse(sp), tf.string, rank=2))
        assert out.values.tolist() == [b"x", b"yz"]
        with pytest.raises(tf.errors.InvalidArgumentError, match="dtype string, expected int32"):
            sess.run(tf.deserialize_many_sparse(tf.serialize_many_sparse(sp), tf.int32))
    with pytest.raises(TypeError, match="out_type must be tf.string"):
        tf.io.serialize_sparse(tf.SparseTensor([[0]], [1.0], [2]), out_type=tf.variant)
