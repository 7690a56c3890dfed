"""Which CPU GEMM computes an fp32 product: oneDNN's inner product or MKL's sgemm, measured.

Which of the two is faster depends on the CPU, not on the model: oneDNN on the AVX-512
EPYC (where MKL runs its AVX2 code), MKL on the AVX2 EPYC (``benchmarks/RESULTS.md``,
"Session 18"). So each kind of product in a process times both once, on its own
operands, and keeps the faster for the rest of the process. A kind is the shape, the operands' layouts and
the intra-op thread count. The two run interleaved, ``ROUNDS`` times each after one
warm-up call, and the minimum counts; big products, whose timings vary less, stop after
``MIN_ROUNDS`` once the rounds have taken ``BUDGET_S`` (a 400x10000x200 product takes tens
of ms: twelve of them would add more than a second to the step that meets the kind, e.g.
the thread tuner's first one-thread step). MKL must win by ``MARGIN``, so near-ties stay on
oneDNN (TensorFlow's own kernel).

A kind is measured on its ``MEASURE_AT``-th call outside thread-tuner probes of modes
not chosen (``probe_state.py``); the calls before take oneDNN. A measurement pays for
itself only over many calls: the kinds of a probe's one-thread steps would pay it in the
steps that time one thread, for a mode the tuner most often leaves again.

The timing calls discard their results: every result after the measurement comes from
the chosen kernel. Measuring a kind costs at most ``2 * ROUNDS + 2`` extra products, once.
Results of the two kernels differ only in float32 summation order.

``FLOWMESH_ONEDNN_MATMUL`` (``flowmesh/config.py``) overrides the choice: ``1`` always
takes oneDNN where it applies, ``0`` never does, ``auto`` (the default) measures.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from flowmesh.kernels.cpu import probe_state

ROUNDS = 5
MIN_ROUNDS = 2    # ... at least this many when the rounds take BUDGET_S seconds
BUDGET_S = 0.1
MEASURE_AT = 3    # the call of a kind that measures it (those before take oneDNN)
MARGIN = 0.95  # MKL is chosen only when it takes at most this fraction of oneDNN's time

Kind = tuple[int, int, int, bool, bool, int]

_choices: dict[Kind, bool] = {}
_calls: dict[Kind, int] = {}  # calls of kinds not measured yet
_lock = threading.Lock()


def kind_of(a: Any, w: Any) -> Kind:
    """The kind of ``a @ w.T``: its sizes, the operands' layouts and the thread count."""
    return (a.shape[0], a.shape[1], w.shape[0], a.is_contiguous(), w.is_contiguous(),
            torch.get_num_threads())


def onednn(a: Any, w: Any) -> Any:
    """``a @ w.T`` by oneDNN's inner product (plain row- or column-major fp32 operands)."""
    return torch.ops.mkldnn._linear_pointwise(a, w, None, "none", [], "")


def mkl(a: Any, w: Any) -> Any:
    """``a @ w.T`` by MKL's sgemm (torch's ``mm``)."""
    return torch.mm(a, w.mT)


def product(a: Any, w: Any) -> Any:
    """``a @ w.T`` by the kernel chosen for its kind (oneDNN before the kind's
    ``MEASURE_AT``-th call, which measures both)."""
    kind = kind_of(a, w)
    use_onednn = _choices.get(kind)
    if use_onednn is None:
        calls = _calls[kind] = _calls.get(kind, 0) + 1
        if calls < MEASURE_AT or probe_state.probing():
            return onednn(a, w)
        with _lock:  # one measurement at a time: two at once would time each other
            use_onednn = _choices.get(kind)
            if use_onednn is None:
                use_onednn = _choices[kind] = _onednn_is_faster(a, w)
                _calls.pop(kind, None)
    return onednn(a, w) if use_onednn else mkl(a, w)


def _onednn_is_faster(a: Any, w: Any) -> bool:
    onednn(a, w)
    mkl(a, w)
    best_onednn = best_mkl = float("inf")
    start = time.perf_counter()
    for done in range(ROUNDS):
        if done >= MIN_ROUNDS and time.perf_counter() - start >= BUDGET_S:
            break
        best_onednn = min(best_onednn, _seconds(onednn, a, w))
        best_mkl = min(best_mkl, _seconds(mkl, a, w))
    return best_mkl > MARGIN * best_onednn


def _seconds(kernel: Callable[[Any, Any], Any], a: Any, w: Any) -> float:
    start = time.perf_counter()
    kernel(a, w)
    return time.perf_counter() - start


def choices() -> dict[Kind, bool]:
    """The choices made so far in this process (kind -> oneDNN chosen), for reports."""
    return dict(_choices)
