"""The chief/evaluator handshake of ``FLOWMESH_EVAL_CHECKPOINTS=chief`` (``estimator/_remote.py``)
over a real server: the chief keeps its server up until the evaluator says it is done."""

from __future__ import annotations

import threading
import time

import pytest

import flowmesh as tf
from flowmesh.estimator._remote import PublishCheckpoints, RemoteCheckpoints, _ChiefState
from flowmesh.testing.cluster import cluster_dict


class _Estimator:  # what PublishCheckpoints reads of an Estimator
    class config:
        session_config = None

    @staticmethod
    def latest_checkpoint() -> str:
        return "/ckpt/model.ckpt-41"


@pytest.mark.timeout(60)
def test_chief_waits_for_an_evaluator_that_evaluated_the_last_checkpoint_before_it_was_final():
    cluster = tf.train.ClusterSpec(cluster_dict({"chief": 1}))
    server = tf.train.Server(cluster, job_name="chief", task_index=0)
    publisher = PublishCheckpoints(_Estimator(), server.target)
    evaluator = RemoteCheckpoints(server.target, [])
    publisher.after_save(None, 41)
    assert evaluator.poll() == ("/ckpt/model.ckpt-41", -1)  # not known to be final yet
    evaluator.report(41)  # the evaluator evaluates it...

    finished = threading.Event()
    chief = threading.Thread(target=lambda: (publisher.finish(41), finished.set()), daemon=True)
    chief.start()  # ...then the chief publishes 41 as final
    time.sleep(1.0)
    assert not finished.is_set(), "the chief left before the evaluator knew 41 was final"
    assert evaluator.poll() == ("/ckpt/model.ckpt-41", 41)
    evaluator.finish(41)
    assert finished.wait(10), "the chief did not see that the evaluator is done"
    chief.join(10)
    assert _ChiefState(server.target).read()[1:] == (41, 41, 41)
