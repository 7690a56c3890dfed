"""Kernels that once failed on strings, unsigned ints or int64 dims, against TensorFlow."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow

WORDS = np.array([[b"a", b"bc"], [b"", b"def"]], dtype=object)

CASES: dict[str, Any] = {
    "expand_dims": lambda t: t.expand_dims(t.constant(WORDS), -1),
    "expand_dims_front": lambda t: t.expand_dims(t.constant(WORDS), 0),
    "squeeze": lambda t: t.squeeze(t.constant(WORDS[:1]), [0]),
    "squeeze_all": lambda t: t.squeeze(t.constant(WORDS[:1, :1])),
    "tile": lambda t: t.tile(t.constant(WORDS), [2, 3]),
    "where": lambda t: t.where(t.constant([[True, False], [False, True]]), t.constant(WORDS),
                               t.constant(WORDS[::-1])),
    "where_v2_broadcast": lambda t: t.where_v2(t.constant([True, False]), t.constant(WORDS),
                                               t.constant(b"x")),
    "floordiv_uint16": lambda t: t.floordiv(t.constant([7, 9, 65535], t.uint16),
                                            t.constant([2, 4, 3], t.uint16)),
    "floormod_uint32": lambda t: t.floormod(t.constant([7, 9, 4000000000], t.uint32),
                                            t.constant([2, 4, 7], t.uint32)),
    "fill_int64_dims": lambda t: t.fill([t.constant(3, t.int64)], t.constant(5, t.int64)),
}


def _run(module: Any, build: Any) -> np.ndarray:
    with module.Graph().as_default(), module.Session() as sess:
        return sess.run(build(module))


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(case: str) -> None:
    tf1 = require_tensorflow()
    ours, theirs = np.asarray(_run(tf, CASES[case])), np.asarray(_run(tf1, CASES[case]))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
