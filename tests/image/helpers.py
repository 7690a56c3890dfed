"""The same ``tf.image`` graph built in flowmesh and in TensorFlow (the oracle)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _run(tf: Any, build: Callable[..., Any], inputs: Sequence[np.ndarray], config: Any) -> list:
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.as_dtype(x.dtype) if x.dtype != object else tf.string,
                                  x.shape) for x in inputs]
        out = build(tf, *holders)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        with tf.Session(config=config) as sess:
            return sess.run(outs, dict(zip(holders, inputs)))


def run_flowmesh(build: Callable[..., Any], *inputs: np.ndarray) -> list:
    """``build(tf, *placeholders)`` run in flowmesh with ``inputs`` fed."""
    return _run(flowmesh, build, inputs, None)


def run_both(build: Callable[..., Any], *inputs: np.ndarray) -> tuple[list, list]:
    """``build(tf, *placeholders)``'s results in flowmesh and in TensorFlow."""
    tf1 = require_tensorflow()
    return run_flowmesh(build, *inputs), _run(tf1, build, inputs, session_config(tf1))


def assert_same(ours: list, theirs: list, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """Equal dtypes, shapes and values (within tolerances for floats)."""
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        assert a.shape == b.shape, (a.shape, b.shape)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(a, b)
