"""The measured choice between oneDNN and MKL for fp32 CPU products: it follows the timing,
is made once per kind (on its MEASURE_AT-th call), every later result comes from the
chosen kernel, and the setting overrides it."""

from __future__ import annotations

import time

import pytest
import torch

from flowmesh.core import dtypes
from flowmesh.kernels.cpu import gemm_choice, onednn_matmul

pytestmark = pytest.mark.skipif(not onednn_matmul.available(),
                                reason="torch built without oneDNN: there is nothing to choose")


@pytest.fixture(autouse=True)
def fresh_choices(monkeypatch):
    """No choices yet, the first call measures (deferring is tested on its own), and the
    default setting (a CI run may set another)."""
    monkeypatch.setattr(gemm_choice, "_choices", {})
    monkeypatch.setattr(gemm_choice, "_calls", {})
    monkeypatch.setattr(gemm_choice, "MEASURE_AT", 1)
    monkeypatch.setenv("FLOWMESH_ONEDNN_MATMUL", "auto")


def _operands(m: int = 64, k: int = 96, n: int = 80) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(m + k + n)
    return torch.randn(m, k, generator=g), torch.randn(n, k, generator=g)


def _slowed(kernel, seconds: float):
    def slow(a, w):
        time.sleep(seconds)
        return kernel(a, w)
    return slow


@pytest.mark.parametrize("slow_one", ["onednn", "mkl"])
def test_the_faster_kernel_is_chosen_and_computes_every_result(monkeypatch, slow_one):
    a, w = _operands()
    calls = {"onednn": 0, "mkl": 0}

    def counted(name, kernel):
        def run(x, y):
            calls[name] += 1
            return kernel(x, y)
        return run

    for name in ("onednn", "mkl"):
        kernel = getattr(gemm_choice, name)
        if name == slow_one:
            kernel = _slowed(kernel, 0.005)
        monkeypatch.setattr(gemm_choice, name, counted(name, kernel))
    fast = "mkl" if slow_one == "onednn" else "onednn"
    first = gemm_choice.product(a, w)
    measured = dict(calls)  # a warm-up call and ROUNDS timed calls each, then the result
    assert measured == {fast: gemm_choice.ROUNDS + 2, slow_one: gemm_choice.ROUNDS + 1}
    results = [gemm_choice.product(a, w) for _ in range(3)]
    assert calls[fast] == measured[fast] + 3 and calls[slow_one] == measured[slow_one]
    assert gemm_choice.choices() == {gemm_choice.kind_of(a, w): fast == "onednn"}
    for got in [first, *results]:
        torch.testing.assert_close(got, a @ w.mT, rtol=1e-5, atol=1e-4)


def test_near_ties_stay_on_onednn(monkeypatch):
    """MKL must be at least 5% faster: a tie keeps TensorFlow's kernel."""
    a, w = _operands()
    monkeypatch.setattr(gemm_choice, "onednn", _slowed(gemm_choice.mkl, 0.004))
    monkeypatch.setattr(gemm_choice, "mkl", _slowed(gemm_choice.mkl, 0.004))
    gemm_choice.product(a, w)
    assert gemm_choice.choices() == {gemm_choice.kind_of(a, w): True}


def test_kinds_separate_layouts_sizes_and_thread_counts():
    a, w = _operands()
    kinds = {gemm_choice.kind_of(a, w), gemm_choice.kind_of(a.mT.contiguous().mT, w),
             gemm_choice.kind_of(a, w.mT.contiguous().mT), gemm_choice.kind_of(a[:32], w)}
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads + 1)
        kinds.add(gemm_choice.kind_of(a, w))
    finally:
        torch.set_num_threads(threads)
    assert len(kinds) == 5


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_kernel_measures_each_kind_once(ta, tb):
    run = onednn_matmul.matmul_fn(ta, tb)
    g = torch.Generator().manual_seed(3)
    a = torch.randn(*((96, 128) if ta else (128, 96)), generator=g)
    b = torch.randn(*((80, 96) if tb else (96, 80)), generator=g)
    want = (a.mT if ta else a) @ (b.mT if tb else b)
    for _ in range(2):
        torch.testing.assert_close(run(a, b), want, rtol=1e-5, atol=1e-4)
    assert len(gemm_choice.choices()) == 1


def test_setting_overrides_the_measurement(monkeypatch):
    a, b = _operands()
    cpu = torch.device("cpu")
    monkeypatch.setenv("FLOWMESH_ONEDNN_MATMUL", "1")
    onednn_matmul.matmul_fn(False, True)(a, b)
    assert gemm_choice.choices() == {}
    monkeypatch.setenv("FLOWMESH_ONEDNN_MATMUL", "0")
    assert not onednn_matmul.usable(cpu, [dtypes.float32, dtypes.float32])
    monkeypatch.setenv("FLOWMESH_ONEDNN_MATMUL", "fastest")
    with pytest.raises(ValueError, match="FLOWMESH_ONEDNN_MATMUL='fastest' is not one of auto"):
        onednn_matmul.usable(cpu, [dtypes.float32, dtypes.float32])


def test_big_products_are_timed_fewer_rounds(monkeypatch):
    """Once the rounds have taken BUDGET_S, MIN_ROUNDS rounds suffice: a big product's kind
    costs a few extra products, not 2 * ROUNDS + 2."""
    a, w = _operands()
    calls = {"onednn": 0, "mkl": 0}

    def slow(name, kernel):
        def run(x, y):
            calls[name] += 1
            time.sleep(gemm_choice.BUDGET_S / 2)
            return kernel(x, y)
        return run

    for name in ("onednn", "mkl"):
        monkeypatch.setattr(gemm_choice, name, slow(name, getattr(gemm_choice, name)))
    gemm_choice.product(a, w)
    extra = calls["onednn"] + calls["mkl"] - 1  # the result's own call
    assert extra == 2 + 2 * gemm_choice.MIN_ROUNDS < 2 + 2 * gemm_choice.ROUNDS


def test_a_kind_is_measured_on_its_measure_at_th_call(monkeypatch):
    """The calls before take oneDNN unmeasured: a kind met in two one-thread probe steps
    never pays for a measurement."""
    monkeypatch.setattr(gemm_choice, "MEASURE_AT", 3)
    a, w = _operands()
    calls = {"onednn": 0, "mkl": 0}

    def counted(name, kernel):
        def run(x, y):
            calls[name] += 1
            return kernel(x, y)
        return run

    for name in ("onednn", "mkl"):
        monkeypatch.setattr(gemm_choice, name, counted(name, getattr(gemm_choice, name)))
    for _ in range(2):
        torch.testing.assert_close(gemm_choice.product(a, w), a @ w.mT, rtol=1e-5, atol=1e-4)
    assert calls == {"onednn": 2, "mkl": 0} and gemm_choice.choices() == {}
    gemm_choice.product(a, w)
    assert list(gemm_choice.choices()) == [gemm_choice.kind_of(a, w)] and calls["mkl"] > 0
    assert not gemm_choice._calls  # measured kinds are no longer counted


def test_probe_steps_of_a_mode_not_chosen_do_not_measure():
    """A thread-tuner probe's one-thread steps take oneDNN unmeasured; the kind is
    measured at its first call outside such a probe."""
    from flowmesh.kernels.cpu import probe_state

    a, w = _operands()
    probe_state.set_probing(True)
    try:
        for _ in range(3):
            torch.testing.assert_close(gemm_choice.product(a, w), a @ w.mT, rtol=1e-5, atol=1e-4)
        assert gemm_choice.choices() == {}
    finally:
        probe_state.set_probing(False)
    gemm_choice.product(a, w)
    assert list(gemm_choice.choices()) == [gemm_choice.kind_of(a, w)]
