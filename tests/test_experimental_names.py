"""tf.experimental's Optional and strict mode (deprecated names raise after it)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.core import deprecation


def test_optional_is_tf_data_experimental_optional() -> None:
    assert tf.experimental.Optional is tf.data.experimental.Optional
    with tf.Graph().as_default():
        opt = tf.experimental.Optional.from_value(tf.constant([1, 2]))
        empty = tf.experimental.Optional.empty(opt.element_spec)
        with tf.Session() as sess:
            has, value, empty_has = sess.run([opt.has_value(), opt.get_value(), empty.has_value()])
    assert has and not empty_has and value.tolist() == [1, 2]


@pytest.fixture
def strict_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deprecation, "_strict_mode", False)
    monkeypatch.setattr(deprecation, "_warned", set())


def test_deprecated_name_warns_once_then_strict_mode_raises(strict_mode: None,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    with tf.Graph().as_default():
        tf.Variable(1.0)
        tf.initialize_all_variables()
        tf.initialize_all_variables()
        warnings = [r for r in caplog.records if "initialize_all_variables" in r.getMessage()]
        assert len(warnings) == 1 and "global_variables_initializer" in warnings[0].getMessage()
        tf.experimental.enable_strict_mode()
        assert deprecation.strict_mode_enabled()
        with pytest.raises(RuntimeError, match="deprecated, which raises an error in strict mode"):
            tf.initialize_local_variables()
        tf.global_variables_initializer()  # not deprecated: no error


@pytest.fixture
def all_intermediates(monkeypatch: pytest.MonkeyPatch) -> None:
    from flowmesh.ops import control_flow_intermediates

    monkeypatch.setattr(control_flow_intermediates, "_override", None)


def _cond_and_loop(x):
    y = tf.cond(x[0] > 0, lambda: tf.sigmoid(x) * 2.0, lambda: tf.tanh(x))
    _, z = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.sin(v) * 1.5), [0, y])
    return z


def _build(state):
    tf.experimental.output_all_intermediates(state)
    with tf.Graph().as_default() as graph:
        x = tf.constant([0.5, -1.0, 2.0])
        z = _cond_and_loop(x)
        counts = {op.type: len(op.outputs) for op in graph.get_operations() if op.type in ("If", "While")}
        grad = tf.gradients(z, x)[0]
        with tf.Session() as sess:
            return counts, sess.run([z, grad])


def test_output_all_intermediates_adds_outputs_at_construction(all_intermediates: None) -> None:
    default_counts, default_values = _build(None)
    off_counts, _ = _build(False)
    on_counts, on_values = _build(True)
    assert default_counts == off_counts == {"If": 1, "While": 3}
    assert on_counts["If"] > 1 and on_counts["While"] > 3
    for ours, reference in zip(on_values, default_values):
        np.testing.assert_allclose(ours, reference, rtol=1e-6)
