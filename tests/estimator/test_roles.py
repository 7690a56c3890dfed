"""The trainers' done counters: each trainer's graph names every ps task's counter as that
ps task names its own (the variable is shared by name on the ps)."""

from __future__ import annotations

import flowmesh as tf
from flowmesh.estimator import _roles


def test_counters_share_names_with_each_ps_task() -> None:
    with tf.Graph().as_default():
        in_trainer = [_roles._counter(i).op.name for i in range(3)]
    for index in range(3):
        with tf.Graph().as_default():
            assert _roles._counter(index).op.name == in_trainer[index]
    assert len(set(in_trainer)) == 3
