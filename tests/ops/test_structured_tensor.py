"""tf.experimental.StructuredTensor: from_pyval, from_fields and field access, against TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

PYVALS = [{"a": [1, 2], "b": {"c": 3.0}, "s": "x"},
          [{"a": 1, "b": [1, 2]}, {"a": 2, "b": [3]}],
          [{"a": 1, "b": [1, 2], "n": {"m": 5}}, {"a": 2, "b": [3, 4], "n": {"m": 6}}]]


def _fields(tf, st, run):
    out = {}
    for name in st.field_names():
        value = st.field_value(name)
        if isinstance(value, tf.experimental.StructuredTensor):
            out[name] = ("struct", value.shape.as_list(), _fields(tf, value, run))
        elif isinstance(value, tf.RaggedTensor):
            out[name] = ("ragged", run(value).to_list())
        else:
            v = run(value)
            out[name] = ("dense", np.asarray(v).tolist(), np.asarray(v).dtype.kind)
    return out


def test_from_pyval_matches_tensorflow():
    tf1 = require_tensorflow()
    for pyval in PYVALS:
        with tf1.Graph().as_default(), tf1.Session(config=session_config(tf1)) as sess:
            theirs = tf1.experimental.StructuredTensor.from_pyval(pyval)
            expected = _fields(tf1, theirs, sess.run)
        with fm.Graph().as_default(), fm.Session() as sess:
            ours = fm.experimental.StructuredTensor.from_pyval(pyval)
            assert ours.shape.as_list() == theirs.shape.as_list()
            assert _fields(fm, ours, sess.run) == expected


def test_from_fields_and_field_access():
    with fm.Graph().as_default():
        inner = fm.experimental.StructuredTensor.from_fields({"m": fm.constant([5, 6])}, shape=[2])
        st = fm.experimental.StructuredTensor.from_fields(
            {"x": fm.constant([1, 2]), "y": fm.constant([[1.0], [2.0]]), "n": inner}, shape=[None])
        assert st.shape.as_list() == [2] and st.rank == 1 and st.field_names() == ("x", "y", "n")
        assert st["n"] is inner and st[("n", "m")] is inner.field_value("m")
        with fm.Session() as sess:
            assert sess.run(st.nrows()) == 2
            assert sess.run(st.field_value(("n", "m"))).tolist() == [5, 6]
        with pytest.raises(ValueError, match="not compatible"):
            fm.experimental.StructuredTensor.from_fields({"x": fm.constant([1, 2, 3])}, shape=[2])
        with pytest.raises(KeyError):
            st.field_value("z")
        with pytest.raises(KeyError):
            fm.experimental.StructuredTensor.from_pyval([{"a": 1}, {"b": 2}])
