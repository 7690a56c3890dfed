"""Real multi-process collectives: ranks started by ``flowmesh run`` on loopback, gloo.

Three launches cover everything (process start-up dominates the cost): ``main`` with 2
ranks (collectives, gradients, compression, DistributedOptimizer against single-process
training, fusion/overlap trace, streams, mismatch, a stalled rank), ``three`` with 3 ranks
(collectives, then a rank killed with SIGKILL during a streamed all-reduce) and
``stream_stall`` (a rank that stops submitting a streamed key).
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from typing import Any

import pytest

from flowmesh.cli.run import launch

WORKER = os.path.join(os.path.dirname(__file__), "mp_worker.py")
TIMEOUT_S = 2.0

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow]


def run_scenario(scenario: str, np: int) -> dict[str, dict[int, dict[str, Any]]]:
    env = {"FLOWMESH_COLLECTIVE_TIMEOUT_S": str(TIMEOUT_S), "OMP_NUM_THREADS": "1"}
    result = launch(np, [sys.executable, WORKER, scenario], env=env, capture=True, timeout=200,
                    failure_grace=30)
    checks: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for _, stream, line in result.output:
        if stream == "stdout" and line.startswith("RESULT "):
            record = json.loads(line[len("RESULT "):])
            checks[record["check"]][record["rank"]] = record
    if not checks:
        errors = "\n".join(line for _, _, line in result.output[-40:])
        pytest.fail(f"no results from the ranks (status {result.returncode}):\n{errors}")
    checks["_status"] = {0: {"returncode": result.returncode, "codes": result.returncodes}}
    return checks


@pytest.fixture(scope="module")
def two_ranks():
    return run_scenario("main", 2)


@pytest.fixture(scope="module")
def three_ranks():
    return run_scenario("three", 3)


@pytest.mark.timeout(240)
def test_collectives_correct_for_dtypes_and_shapes(two_ranks, three_ranks):
    for checks, n in ((two_ranks, 2), (three_ranks, 3)):
        results = checks["collectives"]
        assert sorted(results) == list(range(n))
        gathered = [[float(r)] * 3 for r in range(n) for _ in range(r + 1)]
        for rank, res in results.items():
            assert res["problems"] == [] and res["checked"] == 54
            assert res["gathered"] == gathered
            assert res["mean"] == [(n - 1) / 2]
        scattered = [results[r]["scattered"] for r in range(n)]
        assert sum(scattered, []) == [float(n * i) for i in range(10)]


@pytest.mark.timeout(240)
def test_live_inputs_are_summed_out_of_place_by_the_ring(two_ranks, three_ranks):
    for checks, n in ((two_ranks, 2), (three_ranks, 3)):
        results = checks["out_of_place_ring"]
        assert sorted(results) == list(range(n))
        assert all(res["problems"] == [] for res in results.values()), results
        assert len({tuple(res["digests"]) for res in results.values()}) == 1  # same bits everywhere


@pytest.mark.timeout(240)
def test_gradients_of_collectives_across_processes(two_ranks):
    for rank, res in two_ranks["gradients"].items():
        assert res["gx"] == [12.0, 24.0]  # sum over 2 ranks of d(sum(y^2))/dy, y = [3, 6]
        assert res["grows"] == [[6.0, 6.0]] * (rank + 1)  # rows return to their owner


@pytest.mark.timeout(240)
def test_fp16_and_bf16_compression(two_ranks):
    for res in two_ranks["compression"].values():
        assert res["dtype"] == "float32"
        assert 0 < res["fp16_err"] < 2e-3 and 0 < res["bf16_err"] < 2e-2


@pytest.mark.timeout(240)
@pytest.mark.parametrize("passes", [1, 2])
def test_distributed_optimizer_matches_global_batch_training(two_ranks, passes):
    results = two_ranks[f"optimizer_k{passes}"]
    assert results[0]["checksum"] == results[1]["checksum"]  # same weights on every rank
    for res in results.values():
        assert res["moved"] > 0.05  # training changed the weights
        assert res["max_diff"] < 1e-5  # and equals one process with the global batch


@pytest.mark.timeout(240)
def test_sparse_gradients_are_gathered_and_averaged(two_ranks):
    for res in two_ranks["sparse"].values():
        assert res["sparse"] and res["max_diff"] < 1e-6


@pytest.mark.timeout(240)
def test_fusion_and_overlap_visible_in_trace(two_ranks):
    results = two_ranks["trace"].values()
    for res in results:
        transfers = res["transfers"]
        assert any("fused x6" in t for t in transfers)  # six small gradients in one bucket
        assert len(res["requests"]) == 7  # that bucket and one per large gradient
        # the first bucket was submitted, and the engine negotiated it, during backprop
        assert res["first_submit"] < res["last_grad_end"]
        assert res["first_negotiate"] < res["last_grad_end"]
    # its transfer starts once the slower rank submits it: during that rank's backprop
    assert any(res["first_transfer"] < res["last_grad_end"] for res in results)


@pytest.mark.timeout(240)
def test_waiting_thread_runs_the_cycle_and_donated_inputs_reduce_in_place(two_ranks):
    for res in two_ranks["waiter_runs_cycle"].values():
        assert res["correct"] and res["same_memory"]
        assert res["in_caller"] >= 1  # normally all 20: the engine thread is still waking up
        assert res["speculative_in_place"] == 8  # 2 negotiated cycles, then speculation


@pytest.mark.timeout(240)
def test_steady_all_reduces_stream_and_a_changed_shape_still_fails_clearly(two_ranks):
    for res in two_ranks["streams"].values():
        assert res["correct"] and res["streamed"]
        assert res["speculative"] == 4  # 2 negotiated cycles, then the stream
        assert res["error"] == "InvalidArgumentError" and "float32[3]" in res["message"]
        assert "float32[4]" in res["message"] and res["stopped"]
        assert res["after"] == [2.0, 2.0]


@pytest.mark.timeout(240)
def test_mismatched_shapes_fail_clearly_then_recover(two_ranks):
    for res in two_ranks["mismatch"].values():
        assert res["error"] == "InvalidArgumentError"
        assert "float32[3]" in res["message"] and "float32[4]" in res["message"]
        assert "mismatched" in res["message"]
    assert [r["value"] for r in two_ranks["after_mismatch"].values()] == [[2.0, 2.0]] * 2


@pytest.mark.timeout(240)
def test_stalled_rank_reported_within_timeout(two_ranks):
    res = two_ranks["stalled"][0]
    assert res["error"] == "DeadlineExceededError"
    assert "stalled ranks: [1]" in res["message"] and "only_rank0_runs_this" in res["message"]
    assert "alive but not in any collective" in res["message"]
    assert res["seconds"] < TIMEOUT_S + 10


@pytest.mark.timeout(240)
def test_a_rank_that_leaves_a_stream_is_reported_within_the_timeout():
    res = run_scenario("stream_stall", 2)["stream_stalled"][0]
    assert res["streamed"] and res["error"] == "DeadlineExceededError", res
    assert "steady3" in res["message"] and "timed out" in res["message"]
    assert res["seconds"] < TIMEOUT_S + 10


@pytest.mark.timeout(240)
def test_dead_rank_reported_to_every_survivor(three_ranks):
    results = three_ranks["dead"]
    assert sorted(results) == [0, 1]
    for res in results.values():
        assert res["error"] == "UnavailableError"
        assert "lost ranks [2]" in res["message"] and "peer_dies_during_this" in res["message"]
        assert res["streamed"] and res["correct"]  # three ranks stream packed behind the header
        assert res["seconds"] < TIMEOUT_S + 10
    assert three_ranks["_status"][0]["returncode"] == -9  # the launcher reports the killed rank
