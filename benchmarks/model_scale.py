"""Model-scale training steps against TensorFlow, each contender a lone, fresh process.

    python -m benchmarks.model_scale [--models resnet20,many_vars,graph_build] [--repeats 5]
        [--steps 10] [--warmup 3] [--threads 0] [--contend N] [--peers tensorflow[,flowmesh_1t]]

Every round starts one process per system (flowmesh, then TensorFlow ``compat.v1``; the
order alternates between rounds), each importing only its own system, with its default
settings unless ``--threads`` says otherwise (``benchmarks/lone.py``). The models are in
``benchmarks/models.py``. Prints, per model, the harness's table and JSON line (median and
best rate per system, ratio of medians, median of per-round ratios), and for models whose
FLOPs are counted the achieved GFLOP/s beside the CPU's fp32 GEMM peak, measured in its
own process with torch (1024x1024x1024 products with the default thread count and with one
thread; the peak is the faster, which on a loaded machine can be one thread).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.harness import Settings, parse_settings, report
from benchmarks.lone import SYSTEMS, measure_lone, worker
from benchmarks.models import MODELS

MODULE = "benchmarks.model_scale"
PEERS = ("tensorflow", "flowmesh_1t")
DEFAULT_MODELS = "resnet20,many_vars,graph_build"
_GEMM = (
    "import time, torch\n"
    "def rate():\n"
    "    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)\n"
    "    torch.mm(a, b)\n"
    "    best = min(_t(a, b) for _ in range(5))\n"
    "    return 2 * 1024 ** 3 / best / 1e9\n"
    "def _t(a, b):\n"
    "    s = time.perf_counter()\n"
    "    for _ in range(4):\n"
    "        torch.mm(a, b)\n"
    "    return (time.perf_counter() - s) / 4\n"
    "default = rate()\n"
    "torch.set_num_threads(1)\n"
    "print(default, rate())\n"
)


def gemm_peak() -> tuple[float, float]:
    """GFLOP/s of fp32 GEMM with torch's default threads and with one thread."""
    out = subprocess.run([sys.executable, "-c", _GEMM], capture_output=True, text=True, check=True,
                         timeout=300).stdout.split()
    return float(out[0]), float(out[1])


def _value(model: str):
    if model == "graph_build":
        return lambda record: record["builds_per_s"]
    return lambda record: record["rate"]


def run_model(model: str, settings: Settings, peak: tuple[float, float] | None) -> list[dict[str, Any]]:
    build, description, unit = MODELS[model]
    systems = ["flowmesh"] + [p for p in settings.peers if p in SYSTEMS]
    if model == "graph_build":
        settings = Settings(**{**settings.__dict__, "steps": 1, "warmup": 0})
    results, records = measure_lone(MODULE, model, systems, settings, _value(model))
    ops = [r[0]["ops"] for r in records]
    config = f"{description}; lone processes; ops {'/'.join(map(str, ops))}"
    out = report(f"model_scale/{model}", config, results, settings, unit=unit)
    lines = []
    for system, result, recs in zip(systems, results, records):
        build_s = statistics.median(r["build_s"] for r in recs)
        first_s = statistics.median(r["first_run_s"] for r in recs)
        cpu_ms = statistics.median(r.get("cpu_ms_per_step", 0.0) for r in recs)
        line = (f"  {system:<12} graph build {build_s:.2f} s, session + first step {first_s:.2f} s, "
                f"CPU {cpu_ms:.1f} ms a step")
        if recs[0]["flops"] and peak:
            gflops = recs[0]["flops"] * result.median / 1e9
            line += (f"; {gflops:.1f} GFLOP/s ({recs[0]['flops'] / 1e9:.2f} GFLOP a step) = "
                     f"{gflops / max(peak):.0%} of the GEMM peak (default threads {peak[0]:.0f} GFLOP/s, "
                     f"one thread {peak[1]:.0f})")
        lines.append(line)
    if not settings.quiet:
        print("\n".join(lines))
    return out


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    own, rest = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    models = [m for m in own.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; known: {sorted(MODELS)}")
    if not any(a == "--peers" or a.startswith("--peers=") for a in rest):
        rest = [*rest, "--peers", "tensorflow"]  # flowmesh_1t (one intra-op thread) on request
    settings = parse_settings(__doc__ or "", PEERS, rest, steps=10, repeats=5, warmup=3, threads=0)
    if own.worker is not None:
        return [worker(MODELS[models[0]][0], own.worker, settings.steps, settings.warmup, settings.threads)]
    from benchmarks.contention import CpuHogs

    peak = gemm_peak()
    records: list[dict[str, Any]] = []
    with CpuHogs(settings.contend):
        for model in models:
            records += run_model(model, settings, peak)
    return records


if __name__ == "__main__":
    main()
