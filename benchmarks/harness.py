"""The shared benchmark harness: side-by-side, alternating, warm-up excluded.

Every benchmark in this folder describes its contenders as :class:`Contender` objects (a
name and a ``setup()`` returning a zero-argument ``step`` callable) and hands them to
:func:`compare`. The harness

* sets the same thread count for every contender (torch intra-op threads; TensorFlow
  peers read :attr:`Settings.threads` to build their ``ConfigProto``) and reports it, or,
  with ``--threads 0``, leaves every system its own default (flowmesh's threading
  policy, TensorFlow's default ``ConfigProto``, torch's default thread count, restored
  before every torch round);
* with ``--contend N``, runs the whole measurement while ``N`` CPU-bound processes
  compete for the cores (:mod:`benchmarks.contention`), started and stopped by itself;
* builds every contender, then runs ``warmup`` untimed steps of each;
* runs ``repeats`` rounds; in each round every contender times ``steps`` steps, and the
  order of contenders alternates between rounds so drift on a shared machine hits
  everyone alike;
* reports, per contender, the median and the best (min-time) throughput over the rounds,
  the ratio of medians and the median of per-round ratios (``paired``: flowmesh and the
  peer measured back to back, so slow drift of a shared machine cancels), as a table plus
  one JSON line per (flowmesh, peer) pair::

      {"bench": "mlp_step", "config": "...", "flowmesh": 812.3, "peer": "tensorflow",
       "peer_value": 640.1, "ratio": 1.27, ...}

Benchmarks are never timed tests; ``tests/benchmarks`` only checks they still run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

StepFn = Callable[[], Any]


@dataclass(frozen=True)
class Settings:
    """Command-line settings shared by every benchmark.

    Attributes:
        threads: intra-op threads for every contender (torch and TensorFlow alike);
            0: each system's own default (what a user who sets nothing gets).
        repeats: timed rounds per contender (>= 5 for reported figures).
        steps: steps per timed round.
        warmup: untimed steps per contender before the first round.
        peers: which peers to run (subset of the benchmark's peers).
        quiet: suppress the table (JSON lines are still printed).
        contend: CPU-bound processes competing with the measurement (0: none).
    """

    threads: int = 1
    repeats: int = 5
    steps: int = 50
    warmup: int = 10
    peers: tuple[str, ...] = ()
    quiet: bool = False
    contend: int = 0


@dataclass
class Contender:
    """One system under test: ``setup()`` builds it and returns the step function."""

    name: str
    setup: Callable[[Settings], StepFn]
    teardown: Callable[[], None] | None = None


@dataclass
class Result:
    """Throughput of one contender, in steps per second."""

    name: str
    rates: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.rates)

    @property
    def best(self) -> float:
        return max(self.rates)


def parse_settings(description: str, peers: Sequence[str], argv: Sequence[str] | None = None,
                   **defaults: Any) -> Settings:
    """Parses the common command line (``--threads --repeats --steps --warmup --peers``).

    Args:
        description: the benchmark's help text.
        peers: the peers this benchmark knows (all run by default).
        argv: arguments (default: ``sys.argv[1:]``).
        **defaults: per-benchmark defaults for ``steps``, ``repeats``, ``warmup``.

    Returns:
        The parsed :class:`Settings`.
    """
    base = Settings(**defaults)
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=base.threads,
                        help="intra-op threads of every contender; 0: each one's default")
    parser.add_argument("--repeats", type=int, default=base.repeats)
    parser.add_argument("--steps", type=int, default=base.steps)
    parser.add_argument("--warmup", type=int, default=base.warmup)
    parser.add_argument("--peers", default=",".join(peers),
                        help=f"comma-separated subset of {','.join(peers)} ('' for none)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--contend", type=int, default=base.contend,
                        help="CPU-bound processes competing for the cores while measuring")
    args = parser.parse_args(argv)
    chosen = tuple(p for p in args.peers.split(",") if p)
    unknown = [p for p in chosen if p not in peers]
    if unknown:
        parser.error(f"unknown peer(s) {unknown}; this benchmark knows {list(peers)}")
    if args.repeats < 1 or args.steps < 1:
        parser.error("--repeats and --steps must be >= 1")
    if args.threads < 0 or args.contend < 0:
        parser.error("--threads and --contend must be >= 0")
    return Settings(threads=args.threads, repeats=args.repeats, steps=args.steps,
                    warmup=args.warmup, peers=chosen, quiet=args.quiet, contend=args.contend)


def apply_threads(threads: int) -> None:
    """Sets torch's intra-op thread count (flowmesh and the torch peer share it)."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def time_steps(step: StepFn, steps: int) -> float:
    """Runs ``step`` ``steps`` times; returns steps per second."""
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - start)


def measure(contenders: Sequence[Contender], settings: Settings) -> list[Result]:
    """Builds, warms up and times every contender in alternating rounds.

    Args:
        contenders: flowmesh first, then its peers.
        settings: thread count, rounds, steps per round, warm-up steps, CPU hogs.

    Returns:
        One :class:`Result` per contender, in the given order.
    """
    import torch

    from benchmarks.contention import CpuHogs

    saved_threads = torch.get_num_threads()
    threads = settings.threads or saved_threads  # 0: torch's default, before every round
    try:
        with CpuHogs(settings.contend):
            return _measure(contenders, settings, threads)
    finally:
        apply_threads(saved_threads)


def _measure(contenders: Sequence[Contender], settings: Settings,
             threads: int) -> list[Result]:
    apply_threads(threads)
    steps = [c.setup(settings) for c in contenders]
    for step in steps:
        for _ in range(settings.warmup):
            apply_threads(threads)
            step()
    results = [Result(c.name) for c in contenders]
    order = list(range(len(contenders)))
    for round_index in range(settings.repeats):
        sequence = order if round_index % 2 == 0 else order[::-1]
        for i in sequence:
            apply_threads(threads)  # a contender that changed it does not leak into the next
            results[i].rates.append(time_steps(steps[i], settings.steps))
    for c in contenders:
        if c.teardown is not None:
            c.teardown()
    return results


def report(bench: str, config: str, results: Sequence[Result], settings: Settings,
           unit: str = "steps/s") -> list[dict[str, Any]]:
    """Prints the table and one JSON line per peer; returns the JSON records.

    Args:
        bench: benchmark name (``mlp_step``).
        config: the configuration in words (``784-256-256-10 batch 128 SGD``).
        results: flowmesh's result first, then the peers'.
        settings: what the results were measured with (threads, rounds, steps).
        unit: the throughput unit.

    Returns:
        The JSON records printed (one per peer, or one with ``peer: null`` if none).
    """
    ours, peers = results[0], results[1:]
    if not settings.quiet:
        print(f"\n{bench}: {config}")
        threads = settings.threads or "default"
        print(f"threads={threads} (torch intra-op; TensorFlow intra-op and inter-op) "
              f"rounds={settings.repeats} steps/round={settings.steps} warmup={settings.warmup} "
              f"contend={settings.contend} python={platform.python_version()} "
              f"cpus={os.cpu_count()} load={_load()}")
        print(f"{'system':<14}{'median ' + unit:>18}{'best ' + unit:>18}{'flowmesh/peer':>16}"
              f"{'paired':>10}")
        for r in results:
            ratio = "" if r is ours else f"{ours.median / r.median:.2f}x"
            paired = "" if r is ours else f"{paired_ratio(ours, r):.2f}x"
            print(f"{r.name:<14}{r.median:>18.1f}{r.best:>18.1f}{ratio:>16}{paired:>10}")
    records = []
    for peer in peers or [None]:
        records.append({
            "bench": bench, "config": config, "unit": unit, "threads": settings.threads,
            "contend": settings.contend,
            "flowmesh": round(ours.median, 2), "flowmesh_best": round(ours.best, 2),
            "peer": None if peer is None else peer.name,
            "peer_value": None if peer is None else round(peer.median, 2),
            "peer_best": None if peer is None else round(peer.best, 2),
            "ratio": None if peer is None else round(ours.median / peer.median, 3),
            "ratio_paired": None if peer is None else round(paired_ratio(ours, peer), 3),
        })
    for record in records:
        print(json.dumps(record))
    return records


def _load() -> str:
    """The 1-minute load average (the machine may be shared), or '?' where unknown."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def paired_ratio(ours: Result, peer: Result) -> float:
    """Median over rounds of ours/peer measured in the same round: robust to load that
    drifts between rounds on a shared machine."""
    return statistics.median(a / b for a, b in zip(ours.rates, peer.rates))


def tf_config_proto(tf1: Any, threads: int) -> Any:
    """A TensorFlow ``ConfigProto`` with the harness's thread settings."""
    return tf1.ConfigProto(intra_op_parallelism_threads=threads,
                           inter_op_parallelism_threads=threads)


def import_tensorflow() -> Any:
    """``tensorflow.compat.v1`` in graph mode, or None when TensorFlow is not installed."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow.compat.v1 as tf1
    except ImportError:
        return None
    tf1.disable_eager_execution()
    return tf1
