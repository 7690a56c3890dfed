"""tf.io.decode_proto / encode_proto against TensorFlow on tensorflow.TensorProto messages
(scalar, repeated, enum, bytes and sub-message fields; binary and text formats), and a round
trip through encode_proto."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

_FIELDS = ["dtype", "float_val", "int64_val", "string_val", "version_number", "tensor_shape"]


def _messages(tf1):
    protos = [tf1.make_tensor_proto(np.array([1.5, -2.0], np.float32)),
              tf1.make_tensor_proto(np.array([[3, 4, 5]], np.int64)),
              tf1.make_tensor_proto(np.array([b"ab", b"c"], object))]
    protos[0].float_val.extend([0.25, 0.5, -1.0])
    protos[2].int64_val.extend([9])
    protos[1].version_number = 7
    return protos


def _decode(t, data, fmt="binary"):
    types = [t.int32, t.float32, t.int64, t.string, t.int32, t.string]
    sizes, values = t.io.decode_proto(data, "tensorflow.TensorProto", _FIELDS, types,
                                      message_format=fmt)
    return [sizes] + values


@pytest.mark.parametrize("fmt", ["binary", "text"])
def test_decode_matches_tensorflow(fmt):
    tf1 = require_tensorflow()
    protos = _messages(tf1)
    raw = [p.SerializeToString() if fmt == "binary" else str(p).encode() for p in protos]
    data = np.array(raw, dtype=object).reshape(3, 1)
    results = []
    for module, config in ((tf, None), (tf1, session_config(tf1))):
        with module.Graph().as_default(), module.Session(config=config) as sess:
            results.append(sess.run(_decode(module, data, fmt)))
    for ours, theirs in zip(*results):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours, theirs)
        assert ours.tolist() == theirs.tolist()


def test_encode_round_trip_and_tensorflow_reads_it():
    tf1 = require_tensorflow()
    data = np.array([p.SerializeToString() for p in _messages(tf1)], dtype=object)
    fields = _FIELDS[:5]
    with tf.Graph().as_default(), tf.Session() as sess:
        decoded = _decode(tf, data)
        encoded = tf.io.encode_proto(decoded[0][:, :5], decoded[1:6], fields, "tensorflow.TensorProto")
        ours = sess.run(encoded)
    with tf1.Graph().as_default(), tf1.Session(config=session_config(tf1)) as sess:
        decoded = _decode(tf1, data)
        theirs = sess.run(tf1.io.encode_proto(decoded[0][:, :5], decoded[1:6], fields,
                                              "tensorflow.TensorProto"))
    for a, b in zip(ours, theirs):
        assert tf1.make_tensor_proto(0).FromString(a) == tf1.make_tensor_proto(0).FromString(b)


def test_errors():
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="has no field 'nope'"):
            sess.run(tf.io.decode_proto([b""], "tensorflow.TensorProto", ["nope"], [tf.int32])[0])
        with pytest.raises(InvalidArgumentError, match="not in descriptor_source"):
            sess.run(tf.io.decode_proto([b""], "no.Such", ["x"], [tf.int32])[0])
