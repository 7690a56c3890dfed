"""tf.CriticalSection: executions never overlap, across threads running steps concurrently
and within one step; TensorFlow's graph-construction errors; same results as TensorFlow."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


class _Occupancy:
    """Counts how many executions are inside the protected region at once. Each entry
    waits (bounded) for a second thread to enter: without the mutex they overlap."""

    def __init__(self):
        self.lock = threading.Lock()
        self.inside = 0
        self.most = 0
        self.other_entered = threading.Event()

    def enter(self, value):
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
            if self.inside > 1:
                self.other_entered.set()
        self.other_entered.wait(0.05)
        with self.lock:
            self.inside -= 1
        return value


def _counter_program(protect):
    occupancy = _Occupancy()
    counter = tf.Variable(0, dtype=tf.int64, name="counter")

    def increment():
        seen = tf.py_func(occupancy.enter, [counter.read_value()], tf.int64)
        return counter.assign(seen + 1)

    step = tf.CriticalSection(name="cs").execute(increment) if protect else increment()
    return counter, step, occupancy


def _run_threads(sess, step, threads=3, runs=4):
    errors = []

    def work():
        try:
            for _ in range(runs):
                sess.run(step)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in pool), errors


def test_execute_serialises_concurrent_steps():
    with tf.Graph().as_default(), tf.Session() as sess:
        counter, step, occupancy = _counter_program(protect=True)
        sess.run(tf.global_variables_initializer())
        _run_threads(sess, step)
        assert occupancy.most == 1
        assert sess.run(counter) == 12  # no lost update


def test_without_critical_section_the_steps_do_overlap():
    """The harness can see overlap (so the test above is not vacuous)."""
    with tf.Graph().as_default(), tf.Session() as sess:
        _, step, occupancy = _counter_program(protect=False)
        sess.run(tf.global_variables_initializer())
        _run_threads(sess, step)
        assert occupancy.most > 1


def test_two_executions_in_one_step_and_results():
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.Variable(1.0)
        cs = tf.CriticalSection()
        first = cs.execute(lambda: v.assign(v.read_value() * 3.0))
        second = cs.execute(lambda: (v.assign_add(1.0), tf.constant(7)))
        sess.run(tf.global_variables_initializer())
        _, (_, seven) = sess.run([first, second])
        # One execution ran entirely before the other: (1 * 3) + 1 or (1 + 1) * 3.
        assert seven == 7 and sess.run(v) in (4.0, 6.0)


def test_matches_tensorflow():
    tf1 = require_tensorflow()
    values = []
    for t, config in ((tf, None), (tf1, session_config(tf1))):
        with t.Graph().as_default() as g, t.Session(graph=g, config=config) as sess:
            v = t.Variable(np.arange(3, dtype=np.float32))
            cs = t.CriticalSection(shared_name="shared")
            out = cs.execute(lambda: t.reduce_sum(v.assign(v * 2.0 + 1.0)))
            sess.run(t.global_variables_initializer())
            values.append([sess.run(out) for _ in range(3)] + [sess.run(v)])
    for a, b in zip(*values):
        np.testing.assert_allclose(a, b)


def test_construction_errors():
    with tf.Graph().as_default():
        cs, other = tf.CriticalSection(), tf.CriticalSection()
        v = tf.Variable(1.0)
        with pytest.raises(ValueError, match="already running"):
            cs.execute(lambda: cs.execute(lambda: tf.constant(1.0)))
        cs.execute(lambda: v.assign_add(1.0))
        with pytest.raises(ValueError, match="exclusive_resource_access=False"):
            other.execute(lambda: v.assign_add(1.0))
        with pytest.raises(ValueError, match="critical_section_def"):
            tf.CriticalSection(critical_section_def=object())
