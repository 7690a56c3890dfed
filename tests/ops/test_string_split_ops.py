"""tf.strings.split / tf.string_split (SparseTensor results) and unsorted_segment_join, run by
flowmesh and TensorFlow on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

TEXT = np.array([b"hello  world", b"", b"a,b,,c", b" lead trail "], dtype=object)

CASES = {
    "split/whitespace": lambda lib: lib.strings.split(TEXT),
    "split/comma": lambda lib: lib.strings.split(TEXT, sep=","),
    "split/maxsplit": lambda lib: lib.strings.split(TEXT, sep=" ", maxsplit=1),
    "string_split/default": lambda lib: lib.string_split(TEXT),
    "string_split/chars_keep_empty": lambda lib: lib.string_split(TEXT, sep=", ", skip_empty=False),
    "unsorted_segment_join": lambda lib: lib.strings.unsorted_segment_join(TEXT, [1, 0, 1, 1], 3, separator="|"),
    "unsorted_segment_join/2d": lambda lib: lib.strings.unsorted_segment_join(
        np.array([[b"a", b"b"], [b"c", b"d"]], dtype=object), [0, 0], 1),
}


def _run(lib, name, config=None):
    with lib.Graph().as_default() as g, lib.Session(graph=g, config=config) as sess:
        out = CASES[name](lib)
        if hasattr(out, "indices"):
            out = [out.indices, out.values, out.dense_shape]
        return sess.run(out)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_tensorflow(name):
    tf1 = require_tensorflow()
    ours, theirs = _run(tf, name), _run(tf1, name, session_config(tf1))
    if isinstance(ours, list):
        for a, b in zip(ours, theirs):
            assert np.asarray(a).tolist() == np.asarray(b).tolist(), name
    else:
        assert ours.tolist() == theirs.tolist()


def test_ragged_results_are_unsupported():
    with pytest.raises(tf.errors.UnimplementedError, match="RaggedTensor"):
        tf.strings.split(TEXT, result_type="RaggedTensor")
