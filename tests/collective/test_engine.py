"""The collective engine on in-process members (threads sharing a LocalHub)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import torch

from flowmesh.collective.backends.base import CommunicationError
from flowmesh.collective.backends.local import LocalCommunicator, LocalHub
from flowmesh.collective.engine import CollectiveEngine
from flowmesh.collective.request import Request
from flowmesh.collective.speculation import BESIDE_MIN_BYTES
from flowmesh.errors import AbortedError, DeadlineExceededError, InvalidArgumentError, OpError


def make_engines(size: int, timeout_s: float = 5.0) -> list[CollectiveEngine]:
    hub = LocalHub(size, timeout_s=timeout_s)
    return [CollectiveEngine(LocalCommunicator(hub, r), f"test{size}", timeout_s=timeout_s)
            for r in range(size)]


def on_members(engines: list[CollectiveEngine], fn: Callable[[int, CollectiveEngine], Any]) -> list[Any]:
    """Runs fn(rank, engine) in one thread per member; returns results or exceptions."""
    results: list[Any] = [None] * len(engines)

    def body(rank: int) -> None:
        try:
            results[rank] = fn(rank, engines[rank])
        except Exception as exc:  # noqa: BLE001 - returned to the test
            results[rank] = exc

    threads = [threading.Thread(target=body, args=(r,)) for r in range(len(engines))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return results


@pytest.fixture
def three():
    engines = make_engines(3)
    yield engines
    for e in engines:
        e.close()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64,
                                   torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op,reference", [
    ("sum", lambda s: s.sum(0)), ("max", lambda s: s.amax(0)), ("min", lambda s: s.amin(0)),
    ("product", lambda s: s.prod(0)),
])
def test_allreduce_matches_reference(three, dtype, op, reference):
    inputs = [torch.arange(6).reshape(2, 3).to(dtype) + r for r in range(3)]
    out = on_members(three, lambda r, e: e.run(Request("allreduce", "k", "x", [inputs[r]], op))[0])
    expected = reference(torch.stack([t.to(torch.float64) for t in inputs]))
    for value in out:
        assert value.dtype == dtype and value.shape == (2, 3)
        torch.testing.assert_close(value.to(torch.float64), expected)


def test_mean_divides_floats_and_floors_integers(three):
    floats = on_members(three, lambda r, e: e.run(
        Request("allreduce", "m", "m", [torch.tensor([float(r), 1.0])], "mean"))[0])
    ints = on_members(three, lambda r, e: e.run(
        Request("allreduce", "i", "i", [torch.tensor([r, 1])], "mean"))[0])
    for f, i in zip(floats, ints):
        assert f.tolist() == [1.0, 1.0]
        assert i.tolist() == [1, 1]


def test_inputs_are_never_modified(three):
    inputs = [torch.ones(4) * (r + 1) for r in range(3)]
    on_members(three, lambda r, e: e.run(Request("allreduce", "k", "x", [inputs[r]], "sum")))
    assert [t.tolist() for t in inputs] == [[1.0] * 4, [2.0] * 4, [3.0] * 4]


def test_allgather_with_different_first_dimensions(three):
    def gather(r: int, e: CollectiveEngine) -> list[torch.Tensor]:
        a = torch.full((r + 1, 2), float(r))
        b = torch.tensor([r], dtype=torch.int64)
        return e.run(Request("allgather", "g", "g", [a, b]))

    for a, b in on_members(three, gather):
        assert a.tolist() == [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
        assert b.tolist() == [0, 1, 2]


def test_broadcast_of_several_dtypes_from_root(three):
    out = on_members(three, lambda r, e: e.run(Request(
        "broadcast", "b", "b", [torch.full((3,), float(r)), torch.tensor([r, r]), torch.tensor(r == 1)],
        root=1)))
    for f, i, flag in out:
        assert f.tolist() == [1.0] * 3 and i.tolist() == [1, 1] and bool(flag)


def test_reducescatter_even_and_explicit_rows(three):
    even = on_members(three, lambda r, e: e.run(
        Request("reducescatter", "rs", "rs", [torch.arange(7.0)], "sum"))[0])
    assert [t.tolist() for t in even] == [[0.0, 3.0, 6.0], [9.0, 12.0], [15.0, 18.0]]
    rows = on_members(three, lambda r, e: e.run(
        Request("reducescatter", "rr", "rr", [torch.ones(6, 2)], "sum", rows=(r + 1,)))[0])
    assert [t.shape[0] for t in rows] == [1, 2, 3]
    assert all(bool((t == 3).all()) for t in rows)


def test_requests_are_fused_into_buckets(monkeypatch):
    monkeypatch.setenv("FLOWMESH_FUSION_THRESHOLD_MB", "4")
    engines = make_engines(2)
    try:
        def many(r: int, e: CollectiveEngine) -> list[float]:
            handles = [e.submit(Request("allreduce", f"t{i}", f"t{i}",
                                        [torch.full((128 << 10,), float(i))], "sum"))
                       for i in range(20)]  # 20 x 512 KB
            return [h.wait(timeout=30)[0][0].item() for h in handles]

        assert on_members(engines, many) == [[2.0 * i for i in range(20)]] * 2
        events = [ev for ev in engines[0].events if ev.kind == "allreduce"]
        assert sum(ev.tensors for ev in events) == 20
        fused = [ev for ev in events if not ev.inline]
        assert fused and max(ev.tensors for ev in fused) == 8  # 4 MB buckets of 512 KB tensors
        assert len(events) < 20 and engines[0].stats.fused_tensors > 0
    finally:
        for e in engines:
            e.close()


def test_small_requests_travel_with_the_negotiation():
    engines = make_engines(3)
    try:
        out = on_members(engines, lambda r, e: e.run(Request(
            "allreduce", "s", "small", [torch.tensor([r, 2 * r], dtype=torch.int32)], "mean"))[0])
        assert all(t.tolist() == [1, 2] and t.dtype == torch.int32 for t in out)
        events = [ev for ev in engines[1].events if ev.kind == "allreduce"]
        assert len(events) == 1 and events[0].inline
        assert "sent with the negotiation" in events[0].label
    finally:
        for e in engines:
            e.close()


def test_threshold_zero_sends_every_tensor_alone(monkeypatch):
    monkeypatch.setenv("FLOWMESH_FUSION_THRESHOLD_MB", "0")
    engines = make_engines(2)
    try:
        on_members(engines, lambda r, e: [h.wait(10) for h in [
            e.submit(Request("allreduce", f"t{i}", f"t{i}", [torch.ones(8)], "sum"))
            for i in range(6)]])
        assert [ev.tensors for ev in engines[1].events if ev.kind == "allreduce"] == [1] * 6
    finally:
        for e in engines:
            e.close()


def test_requests_submitted_in_different_orders_still_match(three):
    def body(r: int, e: CollectiveEngine) -> list[float]:
        keys = ["a", "b", "c"] if r != 1 else ["c", "a", "b"]
        handles = {k: e.submit(Request("allreduce", k, k, [torch.tensor([ord(k) * 1.0])], "sum"))
                   for k in keys}
        return [handles[k].wait(10)[0].item() for k in "abc"]

    assert on_members(three, body) == [[3.0 * ord(k) for k in "abc"]] * 3


def test_mismatched_shapes_fail_on_every_rank_and_engine_survives(three):
    out = on_members(three, lambda r, e: e.run(
        Request("allreduce", "bad", "grad/w", [torch.ones(3 + r)], "sum")))
    for err in out:
        assert isinstance(err, InvalidArgumentError)
        assert "grad/w" in str(err) and "float32[3]" in str(err) and "float32[5]" in str(err)
    again = on_members(three, lambda r, e: e.run(Request("allreduce", "ok", "ok", [torch.ones(2)], "sum")))
    assert all(t[0].tolist() == [3.0, 3.0] for t in again)


def test_mismatched_dtype_and_reduction_are_reported(three):
    out = on_members(three, lambda r, e: e.run(Request(
        "allreduce", "d", "d", [torch.ones(2, dtype=torch.float64 if r == 2 else torch.float32)],
        "max" if r == 0 else "sum")))
    for err in out:
        assert isinstance(err, InvalidArgumentError)
        assert "float64" in str(err) and "op=max" in str(err)


def test_stalled_rank_is_named_within_the_timeout():
    engines = make_engines(3, timeout_s=1.0)
    try:
        start = time.monotonic()
        out = on_members(engines, lambda r, e: None if r == 2 else e.run(
            Request("allreduce", "s", "layer1/grad", [torch.ones(2)], "sum")))
        elapsed = time.monotonic() - start
        for err in out[:2]:
            assert isinstance(err, DeadlineExceededError)
            assert "stalled ranks: [2]" in str(err) and "layer1/grad" in str(err)
        assert elapsed < 10
        with pytest.raises(OpError, match="unusable after this failure"):
            engines[0].submit(Request("allreduce", "x", "x", [torch.ones(1)], "sum"))
    finally:
        for e in engines:
            e.close()


def test_different_number_of_collectives_is_reported():
    engines = make_engines(2, timeout_s=1.0)
    try:
        def body(r: int, e: CollectiveEngine) -> Any:
            steps = 3 if r == 1 else 4
            for step in range(steps):
                e.run(Request("allreduce", "step", f"step{step}", [torch.ones(2)], "sum"))
            return steps

        out = on_members(engines, body)
        assert out[1] == 3
        assert isinstance(out[0], DeadlineExceededError)
        assert "stalled ranks: [1]" in str(out[0])
    finally:
        for e in engines:
            e.close()


def test_closed_engine_rejects_requests():
    engine = make_engines(1)[0]
    assert engine.run(Request("allreduce", "k", "k", [torch.ones(2)], "sum"))[0].tolist() == [1.0, 1.0]
    engine.close()
    with pytest.raises(AbortedError, match="shut down"):
        engine.submit(Request("allreduce", "k", "k", [torch.ones(2)], "sum"))


def test_steady_state_all_reduces_skip_the_negotiation():
    engines = make_engines(2)
    try:
        def steps(r: int, e: CollectiveEngine) -> list[float]:
            out = []
            for step in range(6):
                t = torch.full((40_000,), float(r + step))  # too large to travel inline
                out.append(e.run(Request("allreduce", "grad", "bucket_0", [t], "mean"))[0][0].item())
            # the same key with another shape: the guess fails, negotiation reports nothing
            # wrong because both ranks changed alike, and the result is still right
            other = e.run(Request("allreduce", "grad", "bucket_0", [torch.ones(50_000) * r], "sum"))
            # a different collective after speculation: a wasted guess, then negotiated
            third = e.run(Request("allreduce", "loss", "loss", [torch.ones(30_000) * 2], "sum"))
            return out + [other[0][0].item(), third[0][0].item()]

        results = on_members(engines, steps)
        assert results[0] == results[1] == [0.5 + s for s in range(6)] + [1.0, 4.0]
        assert engines[0].stats.speculative == 4  # steps 3..6; two negotiated steps enable it
        labels = [ev.label for ev in engines[0].events if ev.kind == "allreduce"]
        assert sum("speculative" in label for label in labels) == 4
    finally:
        for e in engines:
            e.close()


def test_speculation_survives_a_rank_submitting_something_else():
    engines = make_engines(2)
    try:
        def body(r: int, e: CollectiveEngine) -> list[float]:
            out = []
            for _ in range(3):
                out.append(e.run(Request("allreduce", "g", "g", [torch.ones(40_000)], "sum"))[0][0].item())
            if r == 1:  # rank 1 first runs a collective rank 0 runs second
                handles = [e.submit(Request("allreduce", k, k, [torch.ones(40_000) * i], "sum"))
                           for i, k in ((2, "b"), (1, "g"))]
            else:
                handles = [e.submit(Request("allreduce", k, k, [torch.ones(40_000) * i], "sum"))
                           for i, k in ((1, "g"), (2, "b"))]
            return out + sorted(h.wait(10)[0][0].item() for h in handles)

        assert on_members(engines, body) == [[2.0, 2.0, 2.0, 2.0, 4.0]] * 2
    finally:
        for e in engines:
            e.close()


def test_a_failure_during_a_speculative_all_reduce_fails_the_waiting_request():
    """The speculative cycle holds its request outside the queues: a peer lost during
    it must fail that request (it once hung forever, the engine thread gone)."""
    engines = make_engines(2)
    try:
        def warm_up(r: int, e: CollectiveEngine) -> None:
            for _ in range(3):
                e.run(Request("allreduce", "g", "g", [torch.ones(40_000)], "sum"))

        on_members(engines, warm_up)
        assert engines[0].speculation.guess is not None

        def lost_peer(tensor: torch.Tensor, op: Any) -> None:
            raise CommunicationError("allreduce failed on rank 0: Connection closed by peer")

        engines[0].comm.allreduce = lost_peer  # type: ignore[method-assign]
        engines[0].comm.peer_status = lambda: {}  # type: ignore[method-assign]
        handle = engines[0].submit(Request("allreduce", "g", "g", [torch.ones(40_000)], "sum"))
        with pytest.raises(OpError, match="Connection closed by peer"):
            handle.wait(10)
    finally:
        for e in engines:
            e.close()


def test_donated_inputs_are_reduced_in_place(three):
    inputs = [torch.full((100_000,), float(r + 1)) for r in range(3)]  # 400 KB: not inline
    out = on_members(three, lambda r, e: e.run(
        Request("allreduce", "d", "x", [inputs[r]], "mean", donated=True))[0])
    for r in range(3):
        assert out[r].data_ptr() == inputs[r].data_ptr()  # the output is the input's memory
        assert torch.equal(out[r], torch.full((100_000,), 2.0))
    assert [e.stats.in_place for e in three] == [1, 1, 1]


def test_donation_is_each_ranks_own_choice(three):
    inputs = [torch.full((100_000,), float(r + 1)) for r in range(3)]
    out = on_members(three, lambda r, e: e.run(
        Request("allreduce", "d", "x", [inputs[r]], "sum", donated=r == 0))[0])
    assert all(torch.equal(o, torch.full((100_000,), 6.0)) for o in out)
    assert torch.equal(inputs[0], out[0])  # rank 0 gave its tensor up
    assert torch.equal(inputs[1], torch.full((100_000,), 2.0))  # the others keep theirs
    assert [e.stats.in_place for e in three] == [1, 0, 0]


def test_speculation_recovers_when_another_collective_interrupts_now_and_then():
    """A training loop with an occasional other collective (an evaluation metric): each
    interruption is one wrong guess, and runs of right guesses win the backoff back, so the
    loop keeps skipping negotiations instead of backing off for good."""
    engines = make_engines(2)
    try:
        def loop(r: int, e: CollectiveEngine) -> list[int]:
            speculative_per_period = []
            for period in range(6):
                before = e.stats.speculative
                for _ in range(20):
                    e.run(Request("allreduce", "grad", "grad", [torch.ones(40_000)], "sum"))
                e.run(Request("allreduce", "metric", "metric", [torch.ones(30_000)], "sum"))
                speculative_per_period.append(e.stats.speculative - before)
            return speculative_per_period

        results = on_members(engines, loop)
        assert results[0] == results[1]
        # every period after the first: 4 negotiated steps, then 16 speculative ones
        # (without the recovery the requirement would double each period: 16, 12, 4, 0, 0)
        assert results[0][1:] == [16] * 5, results[0]
    finally:
        for e in engines:
            e.close()


BESIDE = BESIDE_MIN_BYTES // 4  # float32 elements: two ranks send the header beside them


def test_two_ranks_speculate_in_place_on_donated_inputs():
    """From BESIDE_MIN_BYTES up the header travels beside the data and a donated tensor is
    reduced in place; below it (next test) it is packed behind the header."""
    engines = make_engines(2)
    try:
        def steps(r: int, e: CollectiveEngine) -> list[bool]:
            same_memory = []
            for step in range(5):
                t = torch.full((BESIDE,), float(r + step))
                out = e.run(Request("allreduce", "g", "g", [t], "sum", donated=True))[0]
                assert torch.equal(out, torch.full((BESIDE,), float(1 + 2 * step)))
                same_memory.append(out.data_ptr() == t.data_ptr())
            return same_memory

        assert on_members(engines, steps) == [[True] * 5] * 2
        events = [ev for ev in engines[0].events if ev.kind == "allreduce"]
        assert [(ev.speculative, ev.in_place) for ev in events][2:] == [(True, True)] * 3
    finally:
        for e in engines:
            e.close()


def test_a_bucket_reduces_its_largest_donated_tensor_in_place_beside_the_others():
    """A fused bucket of two ranks sends its largest tensor as its own transfer, in place
    when that tensor was donated, and packs the others behind the header; inputs that
    were not donated are never written."""
    engines = make_engines(2)
    try:
        def steps(r: int, e: CollectiveEngine) -> list[bool]:
            same_memory = []
            for step in range(5):
                small, big = torch.full((10,), float(r)), torch.full((BESIDE,), float(r + step))
                out = e.run(Request("allreduce", "g", "g", [small, big], "sum",
                                    donated=(False, True)))
                assert torch.equal(out[0], torch.full((10,), 1.0))
                assert torch.equal(out[1], torch.full((BESIDE,), float(1 + 2 * step)))
                assert torch.equal(small, torch.full((10,), float(r)))
                same_memory.append(out[1].data_ptr() == big.data_ptr())
            return same_memory

        assert [seen[2:] for seen in on_members(engines, steps)] == [[True] * 3] * 2
        events = [ev for ev in engines[0].events if ev.kind == "allreduce"]
        assert [(ev.speculative, ev.in_place) for ev in events][2:] == [(True, True)] * 3
    finally:
        for e in engines:
            e.close()


def test_a_wrong_guess_leaves_a_buckets_donated_tensor_intact():
    engines = make_engines(2)
    try:
        def body(r: int, e: CollectiveEngine) -> list[list[torch.Tensor]]:
            for _ in range(3):
                e.run(Request("allreduce", "g", "g", [torch.ones(3), torch.ones(BESIDE)], "sum"))
            g = [torch.full((3,), 0.25), torch.arange(BESIDE, dtype=torch.float32) * 0.5]
            order = [("b", [torch.ones(7)]), ("g", g)]
            if r == 0:
                order.reverse()
            handles = {k: e.submit(Request("allreduce", k, k, ts, "sum",
                                           donated=tuple(True for _ in ts)))
                       for k, ts in order}
            return [handles[k].wait(10) for k in ("g", "b")]

        for g, b in on_members(engines, body):
            assert torch.equal(g[0], torch.full((3,), 0.5))
            assert torch.equal(g[1], torch.arange(BESIDE, dtype=torch.float32))
            assert torch.equal(b[0], torch.full((7,), 2.0))
    finally:
        for e in engines:
            e.close()


def test_small_donated_inputs_speculate_packed_behind_the_header():
    engines = make_engines(2)
    try:
        def steps(r: int, e: CollectiveEngine) -> None:
            for step in range(5):
                t = torch.full((40_000,), float(r + step))
                out = e.run(Request("allreduce", "g", "g", [t], "sum", donated=True))[0]
                assert torch.equal(out, torch.full((40_000,), float(1 + 2 * step)))

        on_members(engines, steps)
        events = [ev for ev in engines[0].events if ev.kind == "allreduce"]
        assert [(ev.speculative, ev.in_place) for ev in events][2:] == [(True, False)] * 3
    finally:
        for e in engines:
            e.close()


def test_a_wrong_in_place_guess_leaves_the_donated_tensor_bit_for_bit_intact():
    """Rank 0 donates the expected collective while rank 1 runs another one first: rank 0
    reduced its tensor in place with rank 1's -0.0 filler, which must change nothing, not
    even the sign of a zero."""
    engines = make_engines(2)
    try:
        def body(r: int, e: CollectiveEngine) -> list[torch.Tensor]:
            for _ in range(3):
                e.run(Request("allreduce", "g", "g", [torch.ones(BESIDE)], "sum"))
            g = torch.arange(BESIDE, dtype=torch.float32) * 0.5
            g[0] = -0.0
            order = [("b", torch.ones(BESIDE) * 2), ("g", g)]
            if r == 0:
                order.reverse()
            handles = {k: e.submit(Request("allreduce", k, k, [t], "sum", donated=True))
                       for k, t in order}
            return [handles[k].wait(10)[0] for k in ("g", "b")]

        results = on_members(engines, body)
        expected = torch.arange(BESIDE, dtype=torch.float32)
        for g, b in results:
            assert torch.equal(g, expected) and torch.signbit(g[0])  # -0.0 + -0.0
            assert torch.equal(b, torch.full((BESIDE,), 4.0))
    finally:
        for e in engines:
            e.close()
