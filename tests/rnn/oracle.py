"""Runs one RNN builder in TensorFlow (tf.compat.v1 graph mode, tf-keras's legacy cells)
and in flowmesh with the same initial weights; compares variable names, outputs, final
states and gradients (w.r.t. the inputs and every variable)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

import flowmesh as tf
from flowmesh.ops import _structure as nest
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

# TF 2.21's own Keras 3 has no tf.compat.v1.nn.rnn_cell; tf-keras provides it.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


def require_rnn_oracle() -> Any:
    import pytest

    tf1 = require_tensorflow()
    try:
        tf1.nn.rnn_cell.BasicLSTMCell  # noqa: B018
    except (AttributeError, ImportError):
        pytest.skip("tf-keras is not installed: TensorFlow has no tf.compat.v1.nn.rnn_cell")
    return tf1


def _loss_weights(shapes: list[list[int]], seed: int = 7) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]


def _run(lib: Any, flatten: Callable[[Any], list], build: Callable[..., Any],
         feeds: dict[str, np.ndarray], weights: dict[str, np.ndarray] | None,
         config: Any = None) -> dict[str, Any]:
    with lib.Graph().as_default() as graph:
        phs = {k: lib.placeholder(v.dtype, v.shape, name=k) for k, v in feeds.items()}
        flat = list(flatten(build(lib, **phs)))
        shapes = [t.shape.as_list() for t in flat]
        variables = sorted(lib.global_variables(), key=lambda v: v.name)
        loss = lib.add_n([lib.reduce_sum(t * lib.cast(w, t.dtype))
                          for t, w in zip(flat, _loss_weights(shapes))])
        floats = [p for p in phs.values() if p.dtype.is_floating]
        grads = [lib.convert_to_tensor(g) if type(g).__name__ == "IndexedSlices" else g
                 for g in lib.gradients(loss, floats + variables)]
        with lib.Session(graph=graph, config=config) as sess:
            sess.run(lib.global_variables_initializer())
            if weights is not None:
                for v in variables:
                    v.load(weights[v.name], sess)
            feed = {phs[k]: v for k, v in feeds.items()}
            values = sess.run(flat, feed)
            grad_values = sess.run([g for g in grads if g is not None], feed)
            var_values = {v.name: val for v, val in zip(variables, sess.run(variables))}
    return {"values": values, "grads": grad_values, "weights": var_values,
            "none": [g is None for g in grads], "names": [v.name for v in variables],
            "shapes": shapes}


def compare_with_tensorflow(build: Callable[..., Any], feeds: dict[str, np.ndarray],
                            rtol: float = 2e-5, atol: float = 2e-5) -> dict[str, Any]:
    """Builds ``build(lib, **placeholders)`` in both libraries and asserts they agree."""
    tf1 = require_rnn_oracle()
    ref = _run(tf1, tf1.nest.flatten, build, feeds, None, session_config(tf1))
    got = _run(tf, nest.flatten, build, feeds, ref["weights"])
    assert got["names"] == ref["names"]
    assert got["shapes"] == ref["shapes"]
    assert got["none"] == ref["none"]
    for i, (a, b) in enumerate(zip(got["values"], ref["values"])):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"output {i}")
    for i, (a, b) in enumerate(zip(got["grads"], ref["grads"])):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * 5, err_msg=f"gradient {i}")
    return got
