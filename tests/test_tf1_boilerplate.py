"""The lines TensorFlow 1.x programs start with: compat.v1, behaviour switches, tf.logging."""

from __future__ import annotations

import logging

import pytest

import flowmesh
import flowmesh as tf


def test_compat_v1_is_the_top_level():
    import flowmesh.compat.v1 as v1

    from flowmesh.compat import v1 as same

    assert v1 is flowmesh and same is flowmesh and tf.compat.v1.Session is tf.Session
    with v1.Graph().as_default(), v1.Session() as sess:
        assert sess.run(v1.constant(2.0) * 3.0) == 6.0


def test_v2_switches_keep_graph_mode_and_eager_is_refused():
    tf.disable_v2_behavior()
    tf.compat.v1.disable_eager_execution()
    assert tf.executing_eagerly() is False
    with pytest.raises(NotImplementedError, match="graph-mode programs only"):
        tf.enable_eager_execution()
    with pytest.raises(NotImplementedError, match="tf.Session"):
        tf.enable_v2_behavior()


def test_tf_logging_drives_the_flowmesh_logger(caplog):
    before = tf.logging.get_verbosity()
    try:
        tf.logging.set_verbosity(tf.logging.INFO)
        assert logging.getLogger("flowmesh").level == logging.INFO
        with caplog.at_level(logging.INFO, logger="flowmesh"):
            tf.logging.info("step %d", 7)
            tf.logging.debug("hidden")
            for i in range(5):
                tf.logging.log_every_n(tf.logging.INFO, "every %d", 2, i)
                tf.logging.log_first_n(tf.logging.WARN, "first %d", 1, i)
        messages = [r.getMessage() for r in caplog.records]
        assert messages == ["step 7", "every 0", "first 0", "every 2", "every 4"]
    finally:
        tf.logging.set_verbosity(before)
