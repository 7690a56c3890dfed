"""tf.experimental's Optional and strict mode (deprecated names raise after it)."""

from __future__ import annotations

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
