"""The dynamic mode's chunk pool: helpers take chunks, nobody waits for a helper that is
not running, results equal the sequential computation, a helper's error surfaces in the
caller, and a session's helpers end with the session. Synchronised with events, never
with sleeps or timings."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import flowmesh as tf
from flowmesh.kernels.cpu import chunk_pool, onednn_matmul
from flowmesh.kernels.cpu.chunk_pool import ChunkPool
from flowmesh.runtime import thread_tuner

WAIT_S = 30.0  # only a safety net: every wait below is released by an event


def _in_helper() -> bool:
    return threading.current_thread().name.startswith("flowmesh-chunks")


def _pool_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("flowmesh-chunks")]


@pytest.fixture
def pool():
    p = ChunkPool(1)
    yield p
    p.close()


def test_results_are_in_chunk_order_whoever_computes_them(pool) -> None:
    for count in (1, 2, 7, 32):
        assert pool.run(count, lambda i: i * i) == [i * i for i in range(count)]


def test_a_running_helper_takes_chunks(pool) -> None:
    helped = threading.Event()
    who: dict[int, str] = {}

    def compute(i: int) -> int:
        if _in_helper():
            who[i] = "helper"
            helped.set()
        else:
            who[i] = "caller"
            helped.wait(WAIT_S)  # the caller stays on its first chunk until a helper ran
        return i

    assert pool.run(4, compute) == [0, 1, 2, 3]
    assert "helper" in who.values() and "caller" in who.values()


def test_the_caller_redoes_a_chunk_of_a_stalled_helper_and_keeps_its_own_copy(pool) -> None:
    """A helper the OS stopped mid-chunk holds up nothing; its late result is dropped."""
    claimed, release, finished = threading.Event(), threading.Event(), threading.Event()

    def compute(i: int) -> tuple[int, str]:
        if _in_helper():
            claimed.set()
            release.wait(WAIT_S)  # "descheduled" until the caller is done
            finished.set()
            return i, "helper"
        claimed.wait(WAIT_S)  # make sure the helper holds a chunk before the caller ends
        return i, "caller"

    results = pool.run(3, compute)
    assert [r[0] for r in results] == [0, 1, 2] and {r[1] for r in results} == {"caller"}
    release.set()
    assert finished.wait(WAIT_S)
    assert {r[1] for r in results} == {"caller"}  # the late copy did not replace it


def test_an_error_in_a_helper_surfaces_in_the_caller(pool) -> None:
    raised = threading.Event()

    def compute(i: int) -> int:
        if _in_helper():
            raised.set()
            raise ValueError(f"chunk {i} failed in a helper")
        raised.wait(WAIT_S)  # the caller's own chunk ends after the helper failed
        return i

    with pytest.raises(ValueError, match="failed in a helper"):
        pool.run(2, compute)
    assert pool.run(3, lambda i: i) == [0, 1, 2]  # the pool still works


def test_close_joins_the_helpers_and_later_runs_use_the_caller_only() -> None:
    pool = ChunkPool(2)
    assert pool.run(4, lambda i: i) == [0, 1, 2, 3]
    assert len(pool.threads) == 2
    pool.close()
    assert not any(t.is_alive() for t in pool.threads) and not _pool_threads()
    assert pool.run(3, lambda i: -i) == [0, -1, -2]
    with pytest.raises(ValueError, match="at least one helper"):
        ChunkPool(0)


def test_chunked_matmul_is_deterministic_and_matches_the_whole_product(pool) -> None:
    if not onednn_matmul.available():
        pytest.skip("torch without oneDNN: MatMul never takes the chunked path")
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(128, 784).astype(np.float32))
    w = torch.from_numpy(rng.randn(784, 256).astype(np.float32))
    g = torch.from_numpy(rng.randn(128, 256).astype(np.float32))
    cases = [(False, False, x, w), (True, False, x, g), (False, True, g, w)]
    for ta, tb, a, b in cases:
        kernel = onednn_matmul.matmul_fn(ta, tb)
        whole = kernel(a, b)
        chunk_pool.set_active(pool)
        try:
            runs = [kernel(a, b) for _ in range(3)]
        finally:
            chunk_pool.set_active(None)
        assert all(torch.equal(runs[0], r) for r in runs[1:])
        torch.testing.assert_close(runs[0], whole, rtol=1e-4, atol=1e-3)


def _mlp_step(sess_config: tf.ConfigProto | None, steps: int) -> tuple[list[float], tf.Session]:
    rng = np.random.RandomState(1)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 256])
        w1 = tf.Variable(rng.uniform(-0.1, 0.1, (256, 256)).astype(np.float32))
        w2 = tf.Variable(rng.uniform(-0.1, 0.1, (256, 10)).astype(np.float32))
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)))
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph, config=sess_config)
    sess.run(init)
    batch = rng.rand(128, 256).astype(np.float32)
    return [float(sess.run([train, loss], {x: batch})[1]) for _ in range(steps)], sess


def test_a_session_in_the_dynamic_mode_trains_like_the_sequential_program(monkeypatch) -> None:
    expected, plain = _mlp_step(tf.ConfigProto(intra_op_parallelism_threads=1), 6)
    plain.close()
    monkeypatch.setenv("FLOWMESH_CHUNK_HELPERS", "1")
    monkeypatch.setattr(thread_tuner.ThreadTuner, "mode", lambda self: thread_tuner.Mode(1, True))
    before = set(_pool_threads())
    losses, sess = _mlp_step(None, 6)
    again, sess2 = _mlp_step(None, 6)
    np.testing.assert_allclose(losses, expected, rtol=1e-5)
    assert losses == again  # deterministic whichever thread computed each chunk
    pool = sess._backend.cpu._chunks
    assert pool is not None and pool.threads
    sess.close()
    sess2.close()
    assert set(_pool_threads()) <= before  # no helper outlives its session
