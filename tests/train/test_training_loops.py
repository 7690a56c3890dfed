"""basic_train_loop, checkpoints_iterator, assert_global_step and the unsupported stand-ins."""

from __future__ import annotations

import pytest

import flowmesh as tf


def test_checkpoints_iterator_yields_existing_then_times_out(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=3)
    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.2)) == [path]


def test_basic_train_loop_runs_until_the_supervisor_stops(tmp_path):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        increment = tf.assign_add(step, 1)
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
        seen = []

        def train_step(sess, limit):
            seen.append(sess.run(increment))
            if seen[-1] >= limit:
                sv.request_stop()

        tf.train.basic_train_loop(sv, train_step, args=[3])
    assert seen == [1, 2, 3]


def test_assert_global_step():
    with tf.Graph().as_default():
        tf.train.assert_global_step(tf.train.get_or_create_global_step())
        with pytest.raises(TypeError, match="integer"):
            tf.train.assert_global_step(tf.Variable(1.0))
        with pytest.raises(TypeError, match="not scalar"):
            tf.train.assert_global_step(tf.Variable([1, 2]))
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant


def test_get_or_create_global_step_returns_the_existing_step():
    """Once the step exists (an Estimator made it), asking again returns it (a Variable is
    never used as a Python bool in graph mode)."""
    with tf.Graph().as_default() as g:
        step = tf.train.create_global_step(g)
        assert tf.train.get_or_create_global_step(g) is step
        assert tf.train.get_or_create_global_step() is step


def test_object_checkpoints_are_unsupported_with_the_reason():
    with pytest.raises(tf.errors.UnimplementedError, match="name-based tf.train.Saver"):
        tf.train.Checkpoint(model=None)
