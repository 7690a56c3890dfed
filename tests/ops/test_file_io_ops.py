"""read_file/write_file/matching_files, web-safe base64 and serialize_tensor/parse_tensor,
each run by flowmesh and TensorFlow on the same inputs (same bytes out)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

STRINGS = np.array([b"", b"f", b"fo", b"foob\xff\xfe", b"hello world?>"], dtype=object)
TENSORS = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, -2], np.int64), np.array(True),
           np.array([b"ab", b""], dtype=object), np.array([[0.5]], np.float64)]


def _both(build, *feeds):
    tf1 = require_tensorflow()
    out = []
    for lib, config in ((tf, None), (tf1, session_config(tf1))):
        with lib.Graph().as_default() as g, lib.Session(graph=g, config=config) as sess:
            out.append(sess.run(build(lib, *feeds)))
    return out


@pytest.mark.parametrize("pad", [False, True])
def test_base64_matches_tensorflow(pad):
    ours, theirs = _both(lambda lib, s: lib.io.encode_base64(s, pad=pad), STRINGS)
    assert list(ours) == list(theirs)
    decoded, _ = _both(lambda lib, s: lib.io.decode_base64(lib.io.encode_base64(s, pad=pad)), STRINGS)
    assert list(decoded) == list(STRINGS)


@pytest.mark.parametrize("value", TENSORS, ids=lambda v: f"{v.dtype}{list(v.shape)}")
def test_serialize_tensor_bytes_match_tensorflow_and_parse_back(value):
    dtype = "string" if value.dtype == object else value.dtype.name
    ours, theirs = _both(lambda lib, v: lib.io.serialize_tensor(lib.constant(v, dtype=getattr(lib, dtype))), value)
    assert ours == theirs
    for blob in (ours, theirs):  # each library parses the other's bytes
        parsed, tf_parsed = _both(lambda lib, b: lib.io.parse_tensor(b, getattr(lib, dtype)), blob)
        np.testing.assert_array_equal(parsed, value)
        np.testing.assert_array_equal(tf_parsed, value)


def test_read_write_and_matching_files(tmp_path):
    path = str(tmp_path / "sub" / "f.bin")
    with tf.Graph().as_default(), tf.Session() as sess:
        sess.run(tf.write_file(path, b"\x00payload"))
        assert sess.run(tf.read_file(path)) == b"\x00payload"
        assert list(sess.run(tf.matching_files(str(tmp_path / "sub" / "*.bin")))) == [path.encode()]
        with pytest.raises(tf.errors.NotFoundError):
            sess.run(tf.read_file(str(tmp_path / "missing")))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Type mismatch"):
            sess.run(tf.parse_tensor(tf.serialize_tensor(tf.constant([1.0])), tf.int32))
