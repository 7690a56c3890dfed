"""The thread tuner: keeps the team on an idle machine, leaves it for one thread or the
dynamic (chunked) mode when that is measurably faster, probes again later, and leaves
explicit settings alone."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import flowmesh as tf
from flowmesh.runtime import thread_tuner
from flowmesh.runtime.thread_tuner import Mode, ThreadTuner

PROBE = thread_tuner.BLOCKS * thread_tuner.PROBE_STEPS  # probe steps per candidate


@pytest.fixture(autouse=True)
def _blocks_of_probe_steps(monkeypatch):
    """Blocks end after PROBE_STEPS steps (their minimum duration is tested on its own)."""
    monkeypatch.setattr(thread_tuner, "BLOCK_S", 0.0)


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
    warm, probe = thread_tuner.WARMUP_STEPS, 2 * PROBE
    idle = ThreadTuner(4, clock=FakeClock())
    used = _steps(idle, {4: 1.0, 1: 1.5}, warm + probe + 5)
    assert used[:warm] == [4] * warm and set(used[warm:warm + probe]) == {4, 1}
    assert used[warm + probe:] == [4] * 5 and idle.choice == Mode(4)
    close = ThreadTuner(4, clock=FakeClock())
    _steps(close, {4: 1.0, 1: 0.95}, warm + probe)  # within the 10% margin: keep the team
    assert close.choice == Mode(4)
    busy = ThreadTuner(4, clock=FakeClock())
    assert _steps(busy, {4: 1.0, 1: 0.6}, warm + probe + 3)[-3:] == [1, 1, 1]


def test_a_far_slower_candidate_leaves_the_probe_after_a_few_steps() -> None:
    """A compute-bound plan on an idle machine (one thread far slower than the team) spends
    LOSING_STEPS steps on one thread per probe, not BLOCKS * PROBE_STEPS; a candidate that
    is slower but not by LOSING runs its whole probe."""
    warm, step, losing = thread_tuner.WARMUP_STEPS, thread_tuner.PROBE_STEPS, thread_tuner.LOSING_STEPS
    far = ThreadTuner(2, clock=FakeClock())
    used = _steps(far, {2: 1.0, 1: 1.8}, warm + step + losing + 10)
    assert used[warm + step:warm + step + losing] == [1] * losing
    assert used[warm + step + losing:] == [2] * 10 and far.choice == Mode(2)
    assert far._decisions == 1 and far._probe_started is None
    near = ThreadTuner(2, clock=FakeClock())
    used = _steps(near, {2: 1.0, 1: 1.2}, warm + 2 * PROBE)
    assert used.count(1) == PROBE and near.choice == Mode(2) and near._decisions == 1
    chunked = ThreadTuner(2, chunked=True, clock=FakeClock())  # one loses, the other runs on
    modes = []
    for _ in range(warm + 3 * PROBE):
        mode = chunked.mode()
        modes.append(mode)
        chunked.record(mode, {Mode(2): 1.0, Mode(1): 1.8, Mode(1, True): 0.6}[mode])
    assert modes.count(Mode(1)) == losing and chunked.choice == Mode(1, True)


def test_probes_again_after_the_interval_and_follows_the_load() -> None:
    clock = FakeClock()
    tuner = ThreadTuner(2, clock=clock)
    _steps(tuner, {2: 1.0, 1: 0.5}, thread_tuner.WARMUP_STEPS + 2 * PROBE)
    assert tuner.choice == Mode(1)
    clock.now += thread_tuner.FIRST_REPROBE_S / 2
    assert _steps(tuner, {2: 0.4, 1: 0.5}, 3) == [1, 1, 1]  # not yet
    clock.now += thread_tuner.FIRST_REPROBE_S
    _steps(tuner, {2: 0.4, 1: 0.5}, 2 * PROBE)
    assert tuner.choice == Mode(2)  # the machine became idle again
    clock.now += thread_tuner.FIRST_REPROBE_S * 1.5  # later probes wait REPROBE_S
    assert _steps(tuner, {2: 1.0, 1: 0.5}, 3) == [2, 2, 2]
    clock.now += thread_tuner.REPROBE_S
    _steps(tuner, {2: 1.0, 1: 0.5}, 2 * PROBE)
    assert tuner.choice == Mode(1)


def test_modes_are_compared_by_throughput_not_by_the_median_step() -> None:
    """A team whose every third step stalls (a member displaced by another process) has
    the better median but the worse mean: the mean decides."""
    durations = iter([0.5, 0.5, 3.0] * 20)
    tuner = ThreadTuner(2, clock=FakeClock())
    for _ in range(thread_tuner.WARMUP_STEPS + 2 * PROBE):
        mode = tuner.mode()
        tuner.record(mode, next(durations) if mode == Mode(2) else 0.8)
    assert tuner.choice == Mode(1)


def test_one_preempted_probe_step_does_not_decide() -> None:
    """Another process preempting one step of the team's probe is not a stalled team."""
    durations = iter([3.0] + [0.5] * 40)
    tuner = ThreadTuner(2, clock=FakeClock())
    for _ in range(thread_tuner.WARMUP_STEPS):
        tuner.record(tuner.mode(), 0.5)
    for _ in range(2 * PROBE):
        mode = tuner.mode()
        tuner.record(mode, next(durations) if mode == Mode(2) else 0.8)
    assert tuner.choice == Mode(2)


def test_the_dynamic_mode_is_a_candidate_when_the_session_has_a_chunk_pool() -> None:
    warm, probe = thread_tuner.WARMUP_STEPS, 3 * PROBE
    dynamic = Mode(1, chunked=True)
    tuner = ThreadTuner(2, chunked=True, clock=FakeClock())
    assert tuner.candidates == (Mode(2), Mode(1), dynamic)
    modes = []
    for _ in range(warm + probe + 2):
        mode = tuner.mode()
        modes.append(mode)
        tuner.record(mode, {Mode(2): 1.0, Mode(1): 0.8, dynamic: 0.6}[mode])
    step = thread_tuner.PROBE_STEPS
    assert modes[warm:warm + 3 * step:step] == [Mode(2), Mode(1), dynamic]  # in turn, team first
    assert modes[-2:] == [dynamic, dynamic]
    assert ThreadTuner(1, chunked=True).candidates == (Mode(1),)  # nothing to choose


def test_a_one_thread_team_is_never_probed() -> None:
    tuner = ThreadTuner(1, clock=FakeClock())
    assert set(_steps(tuner, {1: 1.0}, 20)) == {1}


def test_a_probe_whose_steps_overlap_keeps_the_team_instead_of_failing() -> None:
    """Threads running one plan at once (queue runners) record steps begun in one mode
    while the probe has moved on: a mode can end a probe without a sample of its own."""
    clock = FakeClock()
    tuner = ThreadTuner(2, clock=clock)
    for _ in range(200):  # every step began on the team, whatever the probe asks now
        tuner.mode()
        clock.now += 0.05
        tuner.record(Mode(2), 0.01)
    assert tuner._decisions >= 1 and tuner.choice == Mode(2)


def _session_steps(config: tf.ConfigProto | None) -> tf.Session:
    x = tf.placeholder(tf.float32, [64, 64])
    y = tf.reduce_sum(tf.matmul(x, tf.ones([64, 64])))
    sess = tf.Session(config=config)
    for _ in range(thread_tuner.WARMUP_STEPS + 2 * PROBE + 2):
        assert sess.run(y, {x: np.ones((64, 64), np.float32)}) == pytest.approx(64.0 ** 3)
    return sess


def test_sessions_tune_unless_threads_are_set(monkeypatch) -> None:
    tuned = _session_steps(None)
    tuners = list(tuned._backend.cpu._tuners.values())
    assert len(tuners) == 1 and tuners[0].choice in tuners[0].candidates
    assert not _session_steps(tf.ConfigProto(intra_op_parallelism_threads=1))._backend.cpu._tuners
    monkeypatch.setenv("FLOWMESH_ADAPTIVE_THREADS", "0")
    assert not _session_steps(None)._backend.cpu._tuners


def test_steps_of_a_mode_not_chosen_are_marked_as_probes(monkeypatch) -> None:
    """Self-tuning kernels (``gemm_choice``) do not measure in a probe's candidate steps."""
    from flowmesh.kernels.cpu import probe_state
    from flowmesh.runtime.cpu_policy import CpuPolicy

    monkeypatch.setenv("FLOWMESH_TUNER_MAX_LOAD", "0")
    before = torch.get_num_threads()
    policy = CpuPolicy()
    seen = []
    try:
        for _ in range(thread_tuner.WARMUP_STEPS + 2 * PROBE):
            policy.run("plan", lambda: seen.append((torch.get_num_threads(), probe_state.probing())))
        assert not probe_state.probing()
        tuner = policy._tuners["plan"]
        if tuner.team.threads > 1:  # a one-core machine has nothing to probe
            assert {probing for threads, probing in seen if threads == tuner.team.threads} == {False}
            assert {probing for threads, probing in seen if threads == 1} == {True}
    finally:
        policy.close()
        torch.set_num_threads(before)


def test_the_process_default_thread_count_fixes_sessions_without_their_own(monkeypatch) -> None:
    import torch

    before = torch.get_num_threads()
    monkeypatch.setenv("FLOWMESH_INTRA_OP_THREADS", "1")
    try:
        with tf.Graph().as_default():
            sess = _session_steps(None)
            assert not sess._backend.cpu._tuners and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_a_heavily_loaded_machine_keeps_the_team_without_probing() -> None:
    """Above max_load per CPU one thread probed faster but ran far slower (the scheduler
    shares the cores per thread): the team stays, and probing resumes when the load
    falls."""
    clock, load = FakeClock(), [3.0]
    tuner = ThreadTuner(2, clock=clock, load=lambda: load[0], max_load=2.0)
    used = _steps(tuner, {2: 1.0, 1: 0.5}, thread_tuner.WARMUP_STEPS + 20)
    assert set(used) == {2} and tuner.choice == Mode(2)
    load[0] = 0.5
    clock.now += thread_tuner.FIRST_REPROBE_S
    _steps(tuner, {2: 1.0, 1: 0.5}, 2 * PROBE)
    assert tuner.choice == Mode(1)
    load[0] = 2.5  # busy again: back to the team at the next check, without a probe
    clock.now += thread_tuner.REPROBE_S
    assert _steps(tuner, {2: 1.0, 1: 0.5}, 3) == [2, 2, 2]
    unguarded = ThreadTuner(2, clock=FakeClock(), load=lambda: 9.0, max_load=0.0)
    _steps(unguarded, {2: 1.0, 1: 0.5}, thread_tuner.WARMUP_STEPS + 2 * PROBE)
    assert unguarded.choice == Mode(1)


def test_probe_blocks_last_long_enough_for_the_machine_to_settle(monkeypatch) -> None:
    """A block of one mode runs at least BLOCK_S: when the team is slowed by work that
    catches up during one-thread steps (an input worker refilling its buffer on the core
    the team would use), interleaving single steps would flatter the team; blocks see it."""
    monkeypatch.setattr(thread_tuner, "BLOCK_S", 0.04)
    clock = FakeClock()
    tuner = ThreadTuner(2, clock=clock)
    previous, modes = Mode(2), []
    for _ in range(thread_tuner.WARMUP_STEPS + 400):
        mode = tuner.mode()
        seconds = 0.7e-3 if mode == Mode(1) else (0.5e-3 if previous == Mode(1) else 0.9e-3)
        clock.now += seconds
        tuner.record(mode, seconds)
        previous = mode
        modes.append(mode)
        if tuner.choice != Mode(2):
            break
    assert tuner.choice == Mode(1)
    first_block = modes[thread_tuner.WARMUP_STEPS:].index(Mode(1))
    assert first_block * 0.9e-3 >= 0.04  # the team's block ran for BLOCK_S, not PROBE_STEPS


def _server_tuners(config: tf.ConfigProto | None) -> list[ThreadTuner]:
    """The tuners of an in-process server's worker after steps of a ``grpc://`` session
    (taken before the session closes, which forgets its graphs' tuners)."""
    server = tf.train.Server.create_local_server(config=config)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [64, 64])
        y = tf.reduce_sum(tf.matmul(x, tf.ones([64, 64])))
        with tf.Session(server.target) as sess:
            for _ in range(thread_tuner.WARMUP_STEPS + 2 * PROBE + 2):
                assert sess.run(y, {x: np.ones((64, 64), np.float32)}) == pytest.approx(64.0 ** 3)
            tuners = list(server.worker.cpu._tuners.values())
    assert not server.worker.cpu._tuners  # closing the session forgot them
    return tuners


def test_a_task_tunes_its_steps_unless_its_server_sets_threads() -> None:
    import torch

    before = torch.get_num_threads()
    try:
        tuners = _server_tuners(None)
        assert len(tuners) == 1 and tuners[0].choice in tuners[0].candidates
        assert not _server_tuners(tf.ConfigProto(intra_op_parallelism_threads=1))
        assert torch.get_num_threads() == 1  # the server's count, applied to the step's thread
    finally:
        torch.set_num_threads(before)
