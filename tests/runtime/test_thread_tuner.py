"""The intra-op thread tuner: keeps the team on an idle machine, drops to one thread when
one thread is measurably faster, probes again later, and leaves explicit settings alone."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.runtime import thread_tuner
from flowmesh.runtime.thread_tuner import ThreadTuner


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _steps(tuner: ThreadTuner, seconds: dict[int, float], n: int) -> list[int]:
    """Runs ``n`` steps whose duration depends on the thread count; returns the counts."""
    used = []
    for _ in range(n):
        threads = tuner.threads()
        used.append(threads)
        tuner.record(threads, seconds[threads])
    return used


def test_one_thread_is_chosen_only_when_clearly_faster() -> None:
    warm, probe = thread_tuner.WARMUP_STEPS, 2 * thread_tuner.PROBE_STEPS
    idle = ThreadTuner(4, clock=FakeClock())
    used = _steps(idle, {4: 1.0, 1: 1.5}, warm + probe + 5)
    assert used[:warm] == [4] * warm and set(used[warm:warm + probe]) == {4, 1}
    assert used[warm + probe:] == [4] * 5 and idle.choice == 4
    close = ThreadTuner(4, clock=FakeClock())
    _steps(close, {4: 1.0, 1: 0.95}, warm + probe)  # within the 10% margin: keep the team
    assert close.choice == 4
    busy = ThreadTuner(4, clock=FakeClock())
    assert _steps(busy, {4: 1.0, 1: 0.6}, warm + probe + 3)[-3:] == [1, 1, 1]


def test_probes_again_after_the_interval_and_follows_the_load() -> None:
    clock = FakeClock()
    tuner = ThreadTuner(2, clock=clock)
    _steps(tuner, {2: 1.0, 1: 0.5}, thread_tuner.WARMUP_STEPS + 2 * thread_tuner.PROBE_STEPS)
    assert tuner.choice == 1
    clock.now += thread_tuner.REPROBE_S / 2
    assert _steps(tuner, {2: 0.4, 1: 0.5}, 3) == [1, 1, 1]  # not yet
    clock.now += thread_tuner.REPROBE_S
    _steps(tuner, {2: 0.4, 1: 0.5}, 2 * thread_tuner.PROBE_STEPS)
    assert tuner.choice == 2  # the machine became idle again


def test_a_one_thread_team_is_never_probed() -> None:
    tuner = ThreadTuner(1, clock=FakeClock())
    assert set(_steps(tuner, {1: 1.0}, 20)) == {1}


def _session_steps(config: tf.ConfigProto | None) -> tf.Session:
    x = tf.placeholder(tf.float32, [64, 64])
    y = tf.reduce_sum(tf.matmul(x, tf.ones([64, 64])))
    sess = tf.Session(config=config)
    for _ in range(thread_tuner.WARMUP_STEPS + 2 * thread_tuner.PROBE_STEPS + 2):
        assert sess.run(y, {x: np.ones((64, 64), np.float32)}) == pytest.approx(64.0 ** 3)
    return sess


def test_sessions_tune_unless_threads_are_set(monkeypatch) -> None:
    tuned = _session_steps(None)
    tuners = list(tuned._backend._tuners.values())
    assert len(tuners) == 1 and tuners[0].choice in (1, tuners[0].team)
    assert not _session_steps(tf.ConfigProto(intra_op_parallelism_threads=1))._backend._tuners
    monkeypatch.setenv("FLOWMESH_ADAPTIVE_THREADS", "0")
    assert not _session_steps(None)._backend._tuners
